"""The Maze on the wire: its protobuf messages, their registration, and converters.

The messages are in proto/arena/games/maze/v1/maze.proto (package ``arena.games.maze.v1``); their
generated code is :mod:`arena_games.proto_gen`. The converters turn the engine's frozen
dataclasses into messages and back, exactly, so a logged event compares equal with the one the
engine decides again (``arena verify``).

One record per engine event, with one grouping: the resolution of an accepted move
(``ArtifactTaken``, ``KeyPickedUp``, ``PlayersMet``, ``CompassRead``, ``ExitOpened``) always
follows its ``Moved`` in that fixed order, so it travels inside the ``Moved`` message and comes
back out of it in the same order. A stream thus has one state per state sequence, which is what
a view is pushed for (docs/rules/maze.md, "Online").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from arena_engine.maze import Event as EngineEvent
from arena_engine.maze import MazeObject, MazeSettings, Setup
from arena_engine.maze.errors import PROCESSING_ORDER
from arena_engine.maze.events import (
    ArtifactTaken,
    ClockAdvanced,
    CommandQueued,
    CommandRefused,
    CompassRead,
    Exited,
    ExitOpened,
    KeyDropped,
    KeyPickedUp,
    MatchDecided,
    MatchStarted,
    Moved,
    PlayersMet,
    PlayStarted,
)
from arena_engine.maze.geometry import BEARINGS, DIRECTIONS
from arena_engine.maze.layout import KINDS
from arena_engine.maze.state import REASONS
from arena_runtime.envelope import Schemas
from arena_runtime.schemas import lobby as lobby_schemas
from arena_runtime.schemas import match as match_schemas
from google.protobuf.message import Message

from arena_games.contract import Result, SeatResult
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as pb

GAME = "maze"
SEATS = 2

#: Commands a seat sends.
COMMANDS: tuple[type[Message], ...] = (pb.Move, pb.Drop)
#: Commands the match service sends itself when a deadline is due.
TIMERS: tuple[type[Message], ...] = (pb.Advance,)
#: The game's events; MazeDecided, the final one, is last.
EVENTS: tuple[type[Message], ...] = (
    pb.MazeStarted,
    pb.PlayStarted,
    pb.CommandQueued,
    pb.CommandRefused,
    pb.Moved,
    pb.KeyDropped,
    pb.Exited,
    pb.ClockAdvanced,
    pb.MazeDecided,
)
GAME_EVENTS = EVENTS

_NONE: Final = 0
NO_DIRECTION: Final = pb.DIRECTION_UNSPECIFIED

# The engine's words and their enum values; built from the engine's own vocabularies, so a word
# the proto lacks fails at import.
DIRECTION: Final = {d: pb.Direction.Value(f"DIRECTION_{d}") for d in DIRECTIONS}
BEARING: Final = {b: pb.Bearing.Value(f"BEARING_{b}") for b in BEARINGS}
KIND: Final = {k: pb.ObjectKind.Value(f"OBJECT_KIND_{k.upper()}") for k in KINDS}
ACTION: Final = {a: pb.Action.Value(f"ACTION_{a.upper()}") for a in ("move", "drop")}
REFUSAL: Final = {c.value: pb.Refusal.Value(f"REFUSAL_{c.name}") for c in PROCESSING_ORDER}
REASON: Final = {r: pb.Reason.Value(f"REASON_{r.upper()}") for r in REASONS}
DIRECTION_OF: Final = {value: word for word, value in DIRECTION.items()}
BEARING_OF: Final = {value: word for word, value in BEARING.items()}
KIND_OF: Final = {value: word for word, value in KIND.items()}
ACTION_OF: Final = {value: word for word, value in ACTION.items()}
REFUSAL_OF: Final = {value: word for word, value in REFUSAL.items()}
REASON_OF: Final = {value: word for word, value in REASON.items()}


def type_name(message: type[Message]) -> str:
    """The envelope type of a payload class, e.g. ``arena.games.maze.v1.Moved``."""
    return str(message.DESCRIPTOR.full_name)


# -- registration -----------------------------------------------------------------------------


def register(schemas: Schemas) -> None:
    """Every payload of the game (and the game-neutral ones it travels with). The final event is
    not a type of its own: it is written inside MatchEnded."""
    match_schemas.register(schemas)
    lobby_schemas.register(schemas)
    schemas.add_messages((*COMMANDS, *TIMERS, *EVENTS[:-1]))


def result_of(decided: pb.MazeDecided) -> Result:
    """The game-neutral result: the winner ranks first, a draw ranks both first. The Maze keeps
    no score (the reason says how it ended), so both scores are 0."""
    seats: tuple[SeatResult, ...]
    if decided.winner not in (1, 2):
        seats = (SeatResult(1, 1, 0), SeatResult(2, 1, 0))
    else:
        seats = tuple(SeatResult(s, 1 if s == decided.winner else 2, 0) for s in (1, 2))
    return Result(REASON_OF[decided.reason], seats)


# -- settings and layouts ---------------------------------------------------------------------


def engine_settings(settings: pb.MazeSettings) -> MazeSettings:
    """The engine's settings of a message with every value set (``lobby.check``'s); a time
    limit of 0 is none."""
    return MazeSettings(
        width=settings.width,
        height=settings.height,
        cooldown_ms=settings.cooldown_ms,
        countdown_ms=settings.countdown_ms,
        vision_pairs=settings.vision_pairs,
        loops_percent=settings.loops_percent,
        time_limit_ms=settings.time_limit_ms or None,
    )


def settings_to_proto(settings: MazeSettings) -> pb.MazeSettings:
    """Every value set; no time limit is 0."""
    return pb.MazeSettings(
        width=settings.width,
        height=settings.height,
        cooldown_ms=settings.cooldown_ms,
        countdown_ms=settings.countdown_ms,
        vision_pairs=settings.vision_pairs,
        loops_percent=settings.loops_percent,
        time_limit_ms=settings.time_limit_ms or 0,
    )


def layout_to_proto(setup: Setup) -> pb.Layout:
    return pb.Layout(
        width=setup.width,
        height=setup.height,
        cells=setup.cells,
        objects=[
            pb.MazeObject(
                kind=KIND[o.kind],
                owner=o.owner or _NONE,
                cell=o.cell,
                dir=DIRECTION[o.dir] if o.dir else NO_DIRECTION,
            )
            for o in setup.objects
        ],
        start1=setup.starts[0],
        start2=setup.starts[1],
    )


def setup_of(layout: pb.Layout) -> Setup:
    """The engine's layout (validated again: a malformed one raises MazeError(bad_maze))."""
    return Setup(
        layout.width,
        layout.height,
        tuple(layout.cells),
        tuple(
            MazeObject(KIND_OF[o.kind], o.owner or None, o.cell, DIRECTION_OF.get(o.dir))
            for o in layout.objects
        ),
        (layout.start1, layout.start2),
    )


# -- events -----------------------------------------------------------------------------------

#: The engine's events that travel inside the Moved before them.
RESOLUTION = (ArtifactTaken, KeyPickedUp, PlayersMet, CompassRead, ExitOpened)


def events_to_proto(events: Iterable[EngineEvent]) -> list[Message]:
    """The messages of a decision's engine events, each move's resolution inside its Moved."""
    out: list[Message] = []
    for event in events:
        if isinstance(event, RESOLUTION):
            moved = out[-1] if out else None
            if not isinstance(moved, pb.Moved) or moved.player != event.player:
                raise ValueError(f"{event.type} does not follow its player's move")
            _resolve(moved, event)
        else:
            out.append(event_to_proto(event))
    return out


def _resolve(moved: pb.Moved, event: EngineEvent) -> None:
    if isinstance(event, ArtifactTaken):
        moved.artifact_taken = True
    elif isinstance(event, KeyPickedUp):
        moved.key_picked_up = event.owner
    elif isinstance(event, PlayersMet):
        moved.met.meeting_seq = event.meeting_seq
        moved.met.returned.extend(pb.ReturnedKey(owner=o, carrier=c) for o, c in event.returned)
    elif isinstance(event, CompassRead):
        moved.compass = BEARING[event.bearing]
    elif isinstance(event, ExitOpened):
        moved.exit_opened = True


def event_to_proto(event: EngineEvent) -> Message:
    """The message of one engine event (a move's resolution: :func:`events_to_proto`)."""
    if isinstance(event, MatchStarted):
        started = pb.MazeStarted(
            seed=event.seed,
            settings=settings_to_proto(event.settings),
            layout=layout_to_proto(event.setup),
            started_at_ms=event.started_at_ms,
            countdown_end_ms=event.countdown_end_ms,
        )
        if event.ends_at_ms is not None:
            started.ends_at_ms = event.ends_at_ms
        return started
    if isinstance(event, PlayStarted):
        return pb.PlayStarted(at_ms=event.at_ms)
    if isinstance(event, CommandQueued):
        return pb.CommandQueued(
            command_seq=event.command_seq,
            player=event.player,
            action=ACTION[event.action],
            dir=DIRECTION[event.dir] if event.dir else NO_DIRECTION,
            t=event.t,
        )
    if isinstance(event, CommandRefused):
        return pb.CommandRefused(
            command_seq=event.command_seq,
            player=event.player,
            code=REFUSAL[event.code],
            t=event.t,
        )
    if isinstance(event, Moved):
        return pb.Moved(
            command_seq=event.command_seq,
            player=event.player,
            dir=DIRECTION[event.dir],
            src=event.src,
            dst=event.dst,
            t=event.t,
        )
    if isinstance(event, KeyDropped):
        return pb.KeyDropped(
            command_seq=event.command_seq,
            player=event.player,
            owner=event.owner,
            cell=event.cell,
            t=event.t,
        )
    if isinstance(event, Exited):
        return pb.Exited(
            command_seq=event.command_seq,
            player=event.player,
            cell=event.cell,
            dir=DIRECTION[event.dir],
            t=event.t,
        )
    if isinstance(event, ClockAdvanced):
        return pb.ClockAdvanced(t=event.t)
    if isinstance(event, MatchDecided):
        return pb.MazeDecided(
            winner=event.winner or _NONE, reason=REASON[event.reason], at_ms=event.at_ms
        )
    raise TypeError(f"not a Maze event with a message of its own: {event!r}")


def engine_events(message: Message) -> list[EngineEvent]:
    """The engine events a logged message stands for (a Moved: with its resolution)."""
    if isinstance(message, pb.Moved):
        p, dst = message.player, message.dst
        events: list[EngineEvent] = [
            Moved(message.command_seq, p, DIRECTION_OF[message.dir], message.src, dst, message.t)
        ]
        if message.artifact_taken:
            events.append(ArtifactTaken(p, dst))
        if message.key_picked_up:
            events.append(KeyPickedUp(p, message.key_picked_up, dst))
        if message.HasField("met"):
            returned = tuple((r.owner, r.carrier) for r in message.met.returned)
            events.append(PlayersMet(p, message.met.meeting_seq, dst, returned))
        if message.compass:
            events.append(CompassRead(p, BEARING_OF[message.compass]))
        if message.exit_opened:
            events.append(ExitOpened(p, dst))
        return events
    return [_engine_event(message)]


def _engine_event(message: Message) -> EngineEvent:
    if isinstance(message, pb.MazeStarted):
        return MatchStarted(
            seed=message.seed,
            settings=engine_settings(message.settings),
            setup=setup_of(message.layout),
            started_at_ms=message.started_at_ms,
            countdown_end_ms=message.countdown_end_ms,
            ends_at_ms=message.ends_at_ms if message.HasField("ends_at_ms") else None,
        )
    if isinstance(message, pb.PlayStarted):
        return PlayStarted(message.at_ms)
    if isinstance(message, pb.CommandQueued):
        return CommandQueued(
            message.command_seq,
            message.player,
            ACTION_OF[message.action],
            DIRECTION_OF.get(message.dir),
            message.t,
        )
    if isinstance(message, pb.CommandRefused):
        return CommandRefused(
            message.command_seq, message.player, REFUSAL_OF[message.code], message.t
        )
    if isinstance(message, pb.KeyDropped):
        return KeyDropped(
            message.command_seq, message.player, message.owner, message.cell, message.t
        )
    if isinstance(message, pb.Exited):
        return Exited(
            message.command_seq, message.player, message.cell, DIRECTION_OF[message.dir], message.t
        )
    if isinstance(message, pb.ClockAdvanced):
        return ClockAdvanced(message.t)
    if isinstance(message, pb.MazeDecided):
        return MatchDecided(message.winner or None, REASON_OF[message.reason], message.at_ms)
    raise TypeError(f"not a Maze event: {message!r}")


def final_last(messages: Sequence[Message]) -> list[Message]:
    """The messages with the final event last, as the match service wraps it in MatchEnded.

    The engine decides a match by the clock *before* it refuses (``finished``) the command whose
    time closed the finish window or reached the time limit; the refusal moves only the FIFO and
    the clock, and the decision's time is the later of the two, so the two fold to the same state
    in either order. Nothing else ever follows the decision.
    """
    for index, message in enumerate(messages):
        if isinstance(message, pb.MazeDecided) and index < len(messages) - 1:
            after = messages[index + 1 :]
            if not all(isinstance(m, pb.CommandRefused) for m in after):
                raise ValueError(f"the decision is followed by {after!r}")
            return [*messages[:index], *after, message]
    return list(messages)


class MazeWire:
    settings = pb.MazeSettings
    commands = COMMANDS
    timers = TIMERS
    service: tuple[type[Message], ...] = ()
    events = EVENTS
    final = pb.MazeDecided

    def register(self, schemas: Schemas) -> None:
        register(schemas)

    def result_of(self, final: Message) -> Result:
        assert isinstance(final, pb.MazeDecided)
        return result_of(final)
