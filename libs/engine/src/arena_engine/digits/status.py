"""When a game stops, per mode."""

from __future__ import annotations

from .errors import DigitsError
from .settings import DEFAULT_SETTINGS, DigitsSettings

MODES = ("ranked", "casual", "daily", "duel", "room", "tutorial", "trial")
PLAYING, WON, LOST, CLOSED = "playing", "won", "lost", "closed"


class StatusError(DigitsError):
    """A record or mode the game status rules do not know."""


def game_status(
    mode: str,
    wins: int,
    losses: int,
    rounds_played: int,
    room_rounds: int | None = None,
    settings: DigitsSettings = DEFAULT_SETTINGS,
) -> str:
    """`playing`, or how the game ended: 8 wins won, 3 losses lost, the last round closed.

    A room plays every round the host picked (no stop at 8 wins or 3 losses); the tutorial plays
    its 3 guided rounds whatever happens in them."""
    if mode not in MODES:
        raise StatusError("unknown_mode")
    if min(wins, losses, rounds_played) < 0:
        raise StatusError("bad_record")
    if mode == "room":
        if room_rounds is None or room_rounds < 1:
            raise StatusError("bad_room_rounds")
        return CLOSED if rounds_played >= room_rounds else PLAYING
    if mode == "tutorial":
        return CLOSED if rounds_played >= settings.tutorial_rounds else PLAYING
    if wins >= settings.win_target:
        return WON
    if losses >= settings.loss_limit:
        return LOST
    return CLOSED if rounds_played >= settings.max_rounds else PLAYING


def last_round(mode: str, room_rounds: int | None, settings: DigitsSettings) -> int:
    if mode == "room":
        return room_rounds or settings.max_rounds
    if mode == "tutorial":
        return settings.tutorial_rounds
    return settings.max_rounds
