"""Events: frozen dataclasses with a ``type`` name and plain-data fields.

Everything a match needs is in its events: ``MatchStarted`` records the whole layout and the
seed it was drawn from, so ``apply`` never generates anything and replay is a fold. Every
processed command's ``t`` (the server's receive time) is in its event.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from .errors import ErrorCode, MazeError
from .layout import Setup
from .settings import MazeSettings


@dataclass(frozen=True)
class MatchStarted:
    type: ClassVar[str] = "match_started"
    seed: int
    settings: MazeSettings
    setup: Setup
    started_at_ms: int
    countdown_end_ms: int
    ends_at_ms: int | None


@dataclass(frozen=True)
class PlayStarted:
    """The clock reached the end of the countdown."""

    type: ClassVar[str] = "play_started"
    at_ms: int


@dataclass(frozen=True)
class CommandQueued:
    type: ClassVar[str] = "command_queued"
    command_seq: int
    player: int
    action: str
    dir: str | None
    t: int


@dataclass(frozen=True)
class CommandRefused:
    """The head of the FIFO was refused: only the FIFO and the clock move."""

    type: ClassVar[str] = "command_refused"
    command_seq: int
    player: int
    code: str
    t: int


@dataclass(frozen=True)
class Moved:
    """An accepted move into the maze; the vision counter drops by one and the hint clears."""

    type: ClassVar[str] = "moved"
    command_seq: int
    player: int
    dir: str
    src: int
    dst: int
    t: int


@dataclass(frozen=True)
class ArtifactTaken:
    type: ClassVar[str] = "artifact_taken"
    player: int
    cell: int


@dataclass(frozen=True)
class KeyPickedUp:
    type: ClassVar[str] = "key_picked_up"
    player: int
    owner: int
    cell: int


@dataclass(frozen=True)
class PlayersMet:
    """The mover ended on the other player's cell; ``returned`` lists (key owner, carrier it
    left) for every carried key that changed hands: all carried keys are now with their owners."""

    type: ClassVar[str] = "players_met"
    player: int
    meeting_seq: int
    cell: int
    returned: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class CompassRead:
    type: ClassVar[str] = "compass_read"
    player: int
    bearing: str


@dataclass(frozen=True)
class ExitOpened:
    type: ClassVar[str] = "exit_opened"
    player: int
    cell: int


@dataclass(frozen=True)
class KeyDropped:
    type: ClassVar[str] = "key_dropped"
    command_seq: int
    player: int
    owner: int
    cell: int
    t: int


@dataclass(frozen=True)
class Exited:
    """An accepted outward move through the player's own open exit, at ``t``."""

    type: ClassVar[str] = "exited"
    command_seq: int
    player: int
    cell: int
    dir: str
    t: int


@dataclass(frozen=True)
class ClockAdvanced:
    type: ClassVar[str] = "clock_advanced"
    t: int


@dataclass(frozen=True)
class MatchDecided:
    """``winner`` None is a draw. ``reason``: exit, window, forfeit, disconnect, time_limit."""

    type: ClassVar[str] = "match_decided"
    winner: int | None
    reason: str
    at_ms: int


Event: TypeAlias = (
    MatchStarted
    | PlayStarted
    | CommandQueued
    | CommandRefused
    | Moved
    | ArtifactTaken
    | KeyPickedUp
    | PlayersMet
    | CompassRead
    | ExitOpened
    | KeyDropped
    | Exited
    | ClockAdvanced
    | MatchDecided
)

EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        MatchStarted,
        PlayStarted,
        CommandQueued,
        CommandRefused,
        Moved,
        ArtifactTaken,
        KeyPickedUp,
        PlayersMet,
        CompassRead,
        ExitOpened,
        KeyDropped,
        Exited,
        ClockAdvanced,
        MatchDecided,
    )
}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, (Setup, MazeSettings)):
        return value.to_dict()
    return value


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def event_to_dict(event: Event) -> dict[str, Any]:
    data = {f.name: _plain(getattr(event, f.name)) for f in dataclasses.fields(event)}
    return {"type": event.type, **data}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of :func:`event_to_dict`; an unknown type or a missing field is
    ``unknown_event``, a bad layout ``bad_maze``."""
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise MazeError(ErrorCode.UNKNOWN_EVENT, f"not a Maze event type: {data.get('type')!r}")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            raise MazeError(ErrorCode.UNKNOWN_EVENT, f"{cls.type} lacks {f.name!r}")
        raw = data[f.name]
        if f.name == "setup":
            values[f.name] = Setup.from_dict(raw)
        elif f.name == "settings":
            values[f.name] = MazeSettings.from_dict(dict(raw))
        else:
            values[f.name] = _frozen(raw)
    return cls(**values)
