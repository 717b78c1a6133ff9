"""Game clock and move clock as pure functions of server time (milliseconds).

Online play (the match service) clamps what a room asks for: game clock 60–3600 s (no unlimited
clock online), move clock 0–120 s (0 = off). Offline play allows 1–60 minutes or unlimited, and a
move clock of 0–120 s, off by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .errors import ErrorCode, MathsWarriorsError

GAME_SECONDS_DEFAULT = 720
ONLINE_MOVE_SECONDS_DEFAULT = 30
OFFLINE_MOVE_SECONDS_DEFAULT = 0
ONLINE_GAME_RANGE = (60, 3600)
MOVE_RANGE = (0, 120)
OFFLINE_GAME_MINUTES_RANGE = (1, 60)
WARNING_SECONDS = 180
CRITICAL_SECONDS = 60
TICK_SECONDS = 10


class ClockState(StrEnum):
    NORMAL = "normal"
    WARNING = "warning"  # at most 180 s left
    CRITICAL = "critical"  # at most 60 s left
    FINAL = "final"  # at most 10 s left: the audible tick


def _clamp(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


@dataclass(frozen=True)
class ClockSettings:
    """``game_seconds`` None is an unlimited game clock; ``move_seconds`` 0 is no move clock."""

    game_seconds: int | None = GAME_SECONDS_DEFAULT
    move_seconds: int = ONLINE_MOVE_SECONDS_DEFAULT

    def __post_init__(self) -> None:
        if self.game_seconds is not None and self.game_seconds <= 0:
            raise MathsWarriorsError(ErrorCode.INVALID_CLOCKS, "game clock must be positive")
        if not MOVE_RANGE[0] <= self.move_seconds <= MOVE_RANGE[1]:
            raise MathsWarriorsError(ErrorCode.INVALID_CLOCKS, "move clock must be 0..120 s")

    @classmethod
    def online(
        cls, game_seconds: int | None = None, move_seconds: int | None = None
    ) -> ClockSettings:
        """What a room gets: missing values take the online defaults, others are clamped."""
        game = GAME_SECONDS_DEFAULT if game_seconds is None else game_seconds
        move = ONLINE_MOVE_SECONDS_DEFAULT if move_seconds is None else move_seconds
        return cls(_clamp(game, ONLINE_GAME_RANGE), _clamp(move, MOVE_RANGE))

    @classmethod
    def offline(
        cls,
        game_minutes: int | None = GAME_SECONDS_DEFAULT // 60,
        move_seconds: int = OFFLINE_MOVE_SECONDS_DEFAULT,
    ) -> ClockSettings:
        """Offline play: 1–60 minutes, or 0/None for unlimited; a move clock of 0–120 s."""
        if game_minutes and not (
            OFFLINE_GAME_MINUTES_RANGE[0] <= game_minutes <= OFFLINE_GAME_MINUTES_RANGE[1]
        ):
            raise MathsWarriorsError(ErrorCode.INVALID_CLOCKS, "game clock must be 1..60 min")
        return cls(game_minutes * 60 if game_minutes else None, move_seconds)


DEFAULT_CLOCKS = ClockSettings()


def game_deadline(started_ms: int, settings: ClockSettings) -> int | None:
    if settings.game_seconds is None:
        return None
    return started_ms + settings.game_seconds * 1000


def move_deadline(now_ms: int, settings: ClockSettings) -> int | None:
    """The move clock restarts after every move (and at the start)."""
    if settings.move_seconds == 0:
        return None
    return now_ms + settings.move_seconds * 1000


def remaining_ms(deadline_ms: int | None, now_ms: int) -> int | None:
    if deadline_ms is None:
        return None
    return max(0, deadline_ms - now_ms)


def expired(deadline_ms: int | None, now_ms: int) -> bool:
    return deadline_ms is not None and now_ms >= deadline_ms


def clock_state(remaining: int | None) -> ClockState:
    """The game clock's display state for ``remaining`` milliseconds."""
    if remaining is None or remaining > WARNING_SECONDS * 1000:
        return ClockState.NORMAL
    if remaining > CRITICAL_SECONDS * 1000:
        return ClockState.WARNING
    if remaining > TICK_SECONDS * 1000:
        return ClockState.CRITICAL
    return ClockState.FINAL
