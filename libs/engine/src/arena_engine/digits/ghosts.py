"""House ghosts: an army for any round and record, built by a bot playing the shop, seeded.

When no player's army fits, the match service asks for a house ghost. The same (seed, round,
record) always gives the same army, so a missing ghost can always be filled and replayed. A
better record means a stronger Focus: the bot's right answers per round rise with its win share.
"""

from __future__ import annotations

from dataclasses import dataclass

from .bots import build_army
from .catalogue import Catalogue, load
from .economy import income
from .errors import DigitsError
from .rng import Rng
from .settings import DEFAULT_SETTINGS, DigitsSettings
from .slate import Slate


class GhostError(DigitsError):
    """A ghost, a house ghost or a ghost query outside the rules (round, record, rating,
    position)."""


@dataclass(frozen=True, slots=True)
class HouseGhost:
    round_no: int
    wins: int
    losses: int
    slate: Slate
    catalogue_version: str
    seed: int | str


def house_ghost(
    round_no: int,
    wins: int,
    losses: int,
    seed: int | str,
    settings: DigitsSettings = DEFAULT_SETTINGS,
    catalogue: Catalogue | None = None,
) -> HouseGhost:
    """The house army at the end of the shop of `round_no`, for a player with this record."""
    if not 1 <= round_no <= settings.max_rounds:
        raise GhostError("bad_round")
    if wins < 0 or losses < 0 or wins + losses > round_no - 1:
        raise GhostError("bad_record")
    catalogue = catalogue or load(settings.catalogue_version)
    rng = Rng(seed, "house-ghost", round_no, wins, losses)
    played = wins + losses
    # Right answers per round: 3 for a player with no wins yet, up to 6 for one who won all.
    skill = 3 + (3 * wins) // played if played else 4
    incomes = []
    for _ in range(round_no):
        right = max(0, min(settings.focus_questions, skill + rng.between(-1, 1)))
        incomes.append(income(right, 0, settings))
    shop_seed, bot_seed = rng.next64(), rng.next64()
    slate = build_army(round_no, incomes, shop_seed, bot_seed, settings, catalogue)
    return HouseGhost(round_no, wins, losses, slate, catalogue.version, seed)
