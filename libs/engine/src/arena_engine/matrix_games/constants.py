"""Fixed facts of the yard and the seats; identical in every variant."""

from __future__ import annotations

from typing import Final

BOARD_W: Final = 24
BOARD_H: Final = 14
CELLS: Final = BOARD_W * BOARD_H

WALLS: Final[tuple[str, ...]] = (
    "########################",
    "#....##..........##....#",
    "#..........##..........#",
    "#.##....#......#....##.#",
    "#.##................##.#",
    "#......##......##......#",
    "#..##..............##..#",
    "#..##..............##..#",
    "#......##......##......#",
    "#.##................##.#",
    "#.##....#......#....##.#",
    "#..........##..........#",
    "#....##..........##....#",
    "########################",
)

# Directions are 0 = N, 1 = E, 2 = S, 3 = W; this is also the tie-break order everywhere.
NORTH: Final = 0
EAST: Final = 1
SOUTH: Final = 2
WEST: Final = 3
DIR_DX: Final = (0, 1, 0, -1)
DIR_DY: Final = (-1, 0, 1, 0)

SEATS: Final = 8
ALIASES: Final = ("Ash", "Birch", "Cedar", "Dune", "Elm", "Fern", "Gorse", "Holly")
LIVERIES: Final = ("cobalt", "sky", "moss", "lime", "rust", "ember", "brass", "plum")
LIVERY_HEX: Final = (
    "#3f7cc4", "#6fb3e8", "#45a85e", "#8fd26a", "#e0523a", "#f08a4b", "#ddc531", "#b06fd0",
)  # fmt: skip
#: The spectator chrome's colour key of each token index.
TOKEN_CHROME_KEYS: Final = ("red", "blue", "green")
OPENING_CELLS: Final = ((9, 1), (14, 1), (9, 4), (14, 4), (5, 9), (18, 9), (3, 12), (20, 12))

# Timers and markers the reference fixes in code rather than in the config.
IMMUNE_TICKS: Final = 12
COMMIT_TARGET: Final = 5
HOLD_REFACE_RANGE: Final = 6
TURN_CADENCE: Final = 4
AVOID_EXCLUSION: Final = 2
MAX_SAY_RUNES: Final = 64
MAX_NOTES_RUNES: Final = 400
TARGET_FPS: Final = 24

GAME: Final = "matrix-games"
GAME_VERSION: Final = "1"
REPLAY_PROTOCOL: Final = "matrix.replay.v1"
PLAYER_PROTOCOL: Final = "matrix.player.v1"
GLOBAL_PROTOCOL: Final = "matrix.global.v1"
LEGAL_REASONS: Final = ("complete", "deadline", "forfeit")

# The hunt sweep walks to the mixed band's reported centre, (BoardW div 2, MixedY0).
SWEEP_CELL: Final = (12, 6)


def is_row_camp(slot: int) -> bool:
    """Slots 0-3 are the row (blue) camp, 4-7 the column (orange) camp."""
    return slot < 4


def camp_label(slot: int, cross_camp: bool) -> str:
    """The camp as reported: only bach-or-stravinsky names camps; elsewhere it is "none"."""
    if not cross_camp:
        return "none"
    return "row" if is_row_camp(slot) else "column"


_SLOT_OF_ALIAS: Final = {name.lower(): slot for slot, name in enumerate(ALIASES)} | {
    name: slot for slot, name in enumerate(ALIASES)
}


def slot_of_alias(alias: str) -> int:
    """The slot of an alias (trimmed, case-insensitive), or -1."""
    slot = _SLOT_OF_ALIAS.get(alias)
    if slot is None:
        slot = _SLOT_OF_ALIAS.get(alias.strip().lower(), -1)
    return slot
