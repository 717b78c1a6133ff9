"""The immutable state of one match.

``Position`` is the authoritative game state: what ``state_seq`` counts and what views are
projected from. ``MazeState`` adds the layout, the timing and the processing bookkeeping (the
authoritative clock, the FIFO and the next command sequence), which a refused command may move
while it leaves the position as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from .layout import Setup

COUNTDOWN: Final = "countdown"
PLAYING: Final = "playing"
OVER: Final = "over"
PHASES: Final = (COUNTDOWN, PLAYING, OVER)

#: Why a match ended.
REASONS: Final = ("exit", "window", "forfeit", "disconnect", "time_limit")


@dataclass(frozen=True, slots=True)
class Key:
    """Where a key is: on the ground at ``cell`` or carried by ``carrier``; exactly one is set."""

    cell: int | None = None
    carrier: int | None = None

    def to_dict(self) -> dict[str, int]:
        if self.carrier is not None:
            return {"carrier": self.carrier}
        assert self.cell is not None
        return {"cell": self.cell}


@dataclass(frozen=True, slots=True)
class PlayerState:
    cell: int | None  # None once the player has left the maze
    vision: int = 0  # successful moves left under the vision effect
    compass: str | None = None  # the bearing to the player's own exit, or None
    exit_open: bool = False
    exited_at: int | None = None
    last_command_t: int | None = None  # t of the last accepted command (move, drop or exit)
    last_move_t: int | None = None  # t of the last accepted move (the cooldown's origin)

    @property
    def exited(self) -> bool:
        return self.exited_at is not None

    @property
    def exit_status(self) -> str:
        return "exited" if self.exited else "open" if self.exit_open else "closed"


@dataclass(frozen=True, slots=True)
class Result:
    winner: int | None  # None: a draw
    reason: str
    at_ms: int

    def to_dict(self) -> dict[str, Any]:
        """``{"winner": P, "reason", "at"}`` or ``{"draw": true, "reason", "at"}``."""
        if self.winner is None:
            return {"draw": True, "reason": self.reason, "at": self.at_ms}
        return {"winner": self.winner, "reason": self.reason, "at": self.at_ms}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        winner = None if data.get("draw") is True else data["winner"]
        return cls(winner, str(data["reason"]), int(data["at"]))


@dataclass(frozen=True, slots=True)
class Position:
    players: tuple[PlayerState, PlayerState]
    keys: tuple[Key, Key]  # index 0 is player 1's key
    artifacts: frozenset[int]  # cells of the unconsumed vision artifacts
    phase: str = COUNTDOWN
    meetings: int = 0
    state_seq: int = 0
    first_exit: int | None = None  # the player whose outward move was accepted first
    result: Result | None = None

    def player(self, player: int) -> PlayerState:
        return self.players[player - 1]

    def carrying(self, player: int) -> int | None:
        """The owner of the key ``player`` carries, or None (the inventory has one slot)."""
        for owner, key in enumerate(self.keys, 1):
            if key.carrier == player:
                return owner
        return None

    def with_player(self, player: int, state: PlayerState) -> Position:
        players = (state, self.players[1]) if player == 1 else (self.players[0], state)
        return replace(self, players=players)

    def with_key(self, owner: int, key: Key) -> Position:
        keys = (key, self.keys[1]) if owner == 1 else (self.keys[0], key)
        return replace(self, keys=keys)


@dataclass(frozen=True, slots=True)
class Queued:
    """A command accepted into the FIFO, with the sequence it was given there."""

    command_seq: int
    player: int
    action: str  # "move" or "drop"
    dir: str | None
    t: int


@dataclass(frozen=True, slots=True)
class Timing:
    started_at_ms: int
    cooldown_ms: int
    countdown_end_ms: int
    ends_at_ms: int | None  # the time limit, None for none


@dataclass(frozen=True, slots=True)
class MazeState:
    setup: Setup
    timing: Timing
    position: Position
    clock_ms: int
    queue: tuple[Queued, ...] = ()
    next_command_seq: int = 1

    @property
    def state_seq(self) -> int:
        return self.position.state_seq

    @property
    def result(self) -> Result | None:
        return self.position.result
