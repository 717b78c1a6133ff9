"""The immutable state of one game."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .clocks import DEFAULT_CLOCKS, ClockSettings
from .dice import Dice, count_active
from .ruleset import DEFAULT_RULESET, Ruleset


class Status(StrEnum):
    NEW = "new"
    PLAYING = "playing"
    OVER = "over"


class WinReason(StrEnum):
    ALL_CAPTURED = "all_captured"
    GAME_CLOCK = "game_clock"
    FORFEIT = "forfeit"


@dataclass(frozen=True)
class GameState:
    status: Status = Status.NEW
    ruleset: Ruleset = DEFAULT_RULESET
    clocks: ClockSettings = DEFAULT_CLOCKS
    dice1: Dice = ()
    dice2: Dice = ()
    first: int = 1
    to_move: int = 1
    move_count: int = 0
    winner: int | None = None
    win_reason: WinReason | None = None
    game_deadline_ms: int | None = None
    move_deadline_ms: int | None = None

    def dice(self, player: int) -> Dice:
        return self.dice1 if player == 1 else self.dice2

    def remaining(self, player: int) -> int:
        return count_active(self.dice(player))

    @property
    def over(self) -> bool:
        return self.status is Status.OVER

    @classmethod
    def position(
        cls,
        dice1: Dice,
        dice2: Dice,
        *,
        first: int,
        to_move: int,
        over: bool = False,
        ruleset: Ruleset = DEFAULT_RULESET,
    ) -> GameState:
        """A position set up directly (vectors, puzzles, tests), with no clocks running."""
        return cls(
            status=Status.OVER if over else Status.PLAYING,
            ruleset=ruleset,
            clocks=ClockSettings(None, 0),
            dice1=tuple(dice1),
            dice2=tuple(dice2),
            first=first,
            to_move=to_move,
        )
