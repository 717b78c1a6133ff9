"""Commands the match service sends, and the context (server time, seed) they arrive with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from .clocks import DEFAULT_CLOCKS, ClockSettings
from .moves import Mind, Skip, Strength
from .ruleset import DEFAULT_RULESET, Ruleset


@dataclass(frozen=True)
class Context:
    """Server time in milliseconds and the seed for any roll this command causes."""

    now_ms: int = 0
    seed: int = 0


@dataclass(frozen=True)
class Start:
    ruleset: Ruleset = DEFAULT_RULESET
    clocks: ClockSettings = DEFAULT_CLOCKS


@dataclass(frozen=True)
class MoveClockTimeout:
    """The move-clock timer fired for the deadline it was armed with."""

    deadline_ms: int


@dataclass(frozen=True)
class GameClockExpiry:
    deadline_ms: int


@dataclass(frozen=True)
class Forfeit:
    player: int


Command: TypeAlias = Start | Strength | Mind | Skip | MoveClockTimeout | GameClockExpiry | Forfeit
