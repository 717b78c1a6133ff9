"""Events: frozen dataclasses with a ``type`` name and plain-data fields.

Every roll is in an event (with the seed it came from), so ``apply`` never rolls: replay is a fold.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

#: A rerolled die and its new value, e.g. ``("D12", 7)``.
Reroll: TypeAlias = tuple[str, int]


@dataclass(frozen=True)
class GameStarted:
    type: ClassVar[str] = "game_started"
    seed: int
    rules: tuple[tuple[str, str], ...]
    game_seconds: int | None
    move_seconds: int
    dice1: tuple[int, ...]
    dice2: tuple[int, ...]
    first: int
    rolloff: tuple[tuple[int, int], ...]
    started_at_ms: int
    game_deadline_ms: int | None
    move_deadline_ms: int | None


@dataclass(frozen=True)
class StrengthAttacked:
    type: ClassVar[str] = "strength_attacked"
    player: int
    attacker: str
    target: str
    seed: int
    rerolls: tuple[Reroll, ...]
    move_deadline_ms: int | None


@dataclass(frozen=True)
class MindAttacked:
    type: ClassVar[str] = "mind_attacked"
    player: int
    target: str
    #: The expression with die names for dice, e.g. ``("D12", "+", "D8")``.
    tokens: tuple[str, ...]
    value: int
    seed: int
    rerolls: tuple[Reroll, ...]
    move_deadline_ms: int | None


@dataclass(frozen=True)
class TurnSkipped:
    type: ClassVar[str] = "turn_skipped"
    player: int
    reason: str  # "skip" or "timeout"
    move_deadline_ms: int | None


@dataclass(frozen=True)
class GameEnded:
    type: ClassVar[str] = "game_ended"
    winner: int
    reason: str  # a WinReason value
    remaining1: int
    remaining2: int


Event: TypeAlias = GameStarted | StrengthAttacked | MindAttacked | TurnSkipped | GameEnded

EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls for cls in (GameStarted, StrengthAttacked, MindAttacked, TurnSkipped, GameEnded)
}


def event_to_dict(event: Event) -> dict[str, Any]:
    def plain(value: Any) -> Any:
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        return value

    data = {f.name: plain(getattr(event, f.name)) for f in dataclasses.fields(event)}
    return {"type": event.type, **data}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of :func:`event_to_dict` (lists become tuples again)."""

    def frozen(value: Any) -> Any:
        if isinstance(value, list):
            return tuple(frozen(v) for v in value)
        return value

    cls = EVENT_TYPES[data["type"]]
    fields = {f.name: frozen(data[f.name]) for f in dataclasses.fields(cls)}
    return cls(**fields)
