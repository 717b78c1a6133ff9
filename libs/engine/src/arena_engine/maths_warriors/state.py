"""The immutable state of one game."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

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

    def to_dict(self) -> dict[str, Any]:
        """A plain-data snapshot (what a client is sent), dice in the vectors' format."""
        return {
            "status": self.status.value,
            "rules": self.ruleset.to_dict(),
            "clocks": {
                "game_seconds": self.clocks.game_seconds,
                "move_seconds": self.clocks.move_seconds,
            },
            "dice": {"1": list(self.dice1), "2": list(self.dice2)},
            "first": self.first,
            "to_move": self.to_move,
            "move_count": self.move_count,
            "winner": self.winner,
            "win_reason": None if self.win_reason is None else self.win_reason.value,
            "game_deadline_ms": self.game_deadline_ms,
            "move_deadline_ms": self.move_deadline_ms,
        }

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
