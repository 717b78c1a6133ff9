"""Commands the match service sends, and the context (server time, seed) they arrive with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from .layout import Setup
from .settings import DEFAULT_SETTINGS, MazeSettings

#: Who sends a command: a player (1 or 2) or an observer.
Role: TypeAlias = Literal[1, 2, "observer"]
OBSERVER: Role = "observer"


@dataclass(frozen=True)
class Context:
    """Server time in milliseconds (a queued command's ``t``: when the server received it) and
    the seed a generated maze is drawn from."""

    now_ms: int = 0
    seed: int = 0


@dataclass(frozen=True)
class Move:
    dir: str  # N, E, S or W


@dataclass(frozen=True)
class Drop:
    """Put the carried key on the current cell."""


Action: TypeAlias = Move | Drop


@dataclass(frozen=True)
class Start:
    """Start a match: on ``setup`` when given (then only the timing settings apply), else on a
    maze generated from the context's seed."""

    settings: MazeSettings = DEFAULT_SETTINGS
    setup: Setup | None = None


@dataclass(frozen=True)
class Enqueue:
    """Take a player's action into the FIFO at ``context.now_ms``; it is not processed yet."""

    role: Role
    action: Action


@dataclass(frozen=True)
class ProcessNext:
    """Process the entry at the head of the FIFO."""


@dataclass(frozen=True)
class Submit:
    """``Enqueue`` then process the FIFO until it is empty: one command as it arrives online."""

    role: Role
    action: Action


@dataclass(frozen=True)
class Advance:
    """The authoritative clock moves to ``context.now_ms`` (a timer or a clock tick)."""


@dataclass(frozen=True)
class Forfeit:
    """``player`` gives the match up: ``forfeit`` (resigned) or ``disconnect`` (did not come
    back within the service's reconnect window)."""

    player: int
    reason: str = "forfeit"


Command: TypeAlias = Start | Enqueue | ProcessNext | Submit | Advance | Forfeit
