"""``decide(state, command, context)`` and ``apply(state, event)``: the event-sourced Maze.

``decide`` validates a command and returns the events it causes (or a :class:`Rejection`); it
never changes anything. ``apply`` folds one event into a new state. Before the first event the
state is None. A command refused inside the FIFO (a wall, the cooldown, ...) is not a Rejection:
it was accepted into the queue and given a command sequence, so its refusal is an event,
``CommandRefused``, which moves only the FIFO and the clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from .commands import (
    Advance,
    Command,
    Context,
    Drop,
    Enqueue,
    Forfeit,
    Move,
    ProcessNext,
    Role,
    Start,
    Submit,
)
from .errors import ErrorCode, MazeError, Rejection
from .events import (
    ArtifactTaken,
    ClockAdvanced,
    CommandQueued,
    CommandRefused,
    CompassRead,
    Event,
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
from .generate import generate_setup
from .geometry import DIRECTIONS
from .rules import passing_time, process
from .settings import FINISH_WINDOW_MS, QUEUE_CAPACITY, VISION_MOVES
from .state import (
    COUNTDOWN,
    OVER,
    PLAYING,
    Key,
    MazeState,
    PlayerState,
    Position,
    Queued,
    Result,
    Timing,
)


def _start(state: MazeState | None, command: Start, context: Context) -> list[Event]:
    if state is not None:
        raise MazeError(ErrorCode.ALREADY_STARTED, "the match has already started")
    settings = command.settings
    setup = command.setup or generate_setup(settings, context.seed)
    countdown_end = context.now_ms + settings.countdown_ms
    ends_at = None if settings.time_limit_ms is None else countdown_end + settings.time_limit_ms
    return [MatchStarted(context.seed, settings, setup, context.now_ms, countdown_end, ends_at)]


def _enqueue(state: MazeState, role: Role, action: Move | Drop, now_ms: int) -> list[Event]:
    if role == "observer":
        raise MazeError(ErrorCode.OBSERVER, "observers cannot send commands")
    if role not in (1, 2):
        raise MazeError(ErrorCode.BAD_COMMAND, f"no role {role!r}")
    if isinstance(action, Move):
        if action.dir not in DIRECTIONS:
            raise MazeError(ErrorCode.BAD_COMMAND, f"a move goes N, E, S or W, not {action.dir!r}")
        kind, direction = "move", action.dir
    elif isinstance(action, Drop):
        kind, direction = "drop", None
    else:
        raise MazeError(ErrorCode.BAD_COMMAND, f"not a Maze action: {action!r}")
    if len(state.queue) >= QUEUE_CAPACITY:
        raise MazeError(ErrorCode.QUEUE_FULL, f"the queue holds {QUEUE_CAPACITY} commands")
    return [CommandQueued(state.next_command_seq, role, kind, direction, now_ms)]


def _forfeit(state: MazeState, command: Forfeit, now_ms: int) -> list[Event]:
    if command.player not in (1, 2):
        raise MazeError(ErrorCode.BAD_COMMAND, f"no player {command.player!r}")
    if command.reason not in ("forfeit", "disconnect"):
        raise MazeError(ErrorCode.BAD_COMMAND, "a forfeit's reason is forfeit or disconnect")
    clock = max(state.clock_ms, now_ms)
    events = passing_time(state, clock)
    if any(isinstance(e, MatchDecided) for e in events):
        return events  # time decided the match before the forfeit
    pos = state.position
    if pos.result is not None or pos.player(command.player).exited:
        raise MazeError(ErrorCode.FINISHED, "the match is decided or this player has left")
    return [*events, MatchDecided(3 - command.player, command.reason, clock)]


def _decide(state: MazeState | None, command: Command, context: Context) -> list[Event]:
    if isinstance(command, Start):
        return _start(state, command, context)
    if state is None:
        raise MazeError(ErrorCode.NOT_STARTED, "the match has not started")
    if isinstance(command, Enqueue):
        return _enqueue(state, command.role, command.action, context.now_ms)
    if isinstance(command, ProcessNext):
        if not state.queue:
            raise MazeError(ErrorCode.QUEUE_EMPTY, "no command is queued")
        return process(state)
    if isinstance(command, Submit):
        events = _enqueue(state, command.role, command.action, context.now_ms)
        state = _fold(state, events)
        while True:
            step = process(state)
            events.extend(step)
            if len(state.queue) == 1:
                return events
            state = _fold(state, step)
    if isinstance(command, Advance):
        if context.now_ms <= state.clock_ms:
            return []  # a stale or early timer changes nothing
        return [ClockAdvanced(context.now_ms), *passing_time(state, context.now_ms)]
    if isinstance(command, Forfeit):
        return _forfeit(state, command, context.now_ms)
    raise MazeError(ErrorCode.BAD_COMMAND, f"not a Maze command: {command!r}")


def decide(state: MazeState | None, command: Command, context: Context) -> list[Event] | Rejection:
    """The events ``command`` causes in ``state``, or why it is refused. Pure."""
    try:
        return _decide(state, command, context)
    except MazeError as exc:
        return Rejection(exc.code, exc.message)


def _fold(state: MazeState, events: Iterable[Event]) -> MazeState:
    for event in events:
        state = apply(state, event)
    return state


def _pop(state: MazeState, command_seq: int, t: int, position: Position | None = None) -> MazeState:
    """The state without the head of the FIFO (which must be ``command_seq``), the clock at
    ``t`` if later, and ``position`` if given. Built field by field: ``apply`` is the engine's
    hot path, and ``dataclasses.replace`` costs several times a constructor call."""
    if not state.queue or state.queue[0].command_seq != command_seq:
        raise MazeError(
            ErrorCode.UNKNOWN_EVENT, f"command {command_seq} is not at the queue's head"
        )
    return MazeState(
        setup=state.setup,
        timing=state.timing,
        position=state.position if position is None else position,
        clock_ms=t if t > state.clock_ms else state.clock_ms,
        queue=state.queue[1:],
        next_command_seq=state.next_command_seq,
    )


def _accepted(pos: Position, player: int, now: PlayerState) -> Position:
    """The position after an accepted command of ``player``: one more state sequence."""
    players = (now, pos.players[1]) if player == 1 else (pos.players[0], now)
    return Position(
        players=players,
        keys=pos.keys,
        artifacts=pos.artifacts,
        phase=pos.phase,
        meetings=pos.meetings,
        state_seq=pos.state_seq + 1,
        first_exit=pos.first_exit,
        result=pos.result,
    )


def _started(event: MatchStarted) -> MazeState:
    setup = event.setup
    playing = event.countdown_end_ms <= event.started_at_ms
    position = Position(
        players=(PlayerState(setup.starts[0]), PlayerState(setup.starts[1])),
        keys=(Key(cell=setup.key_cells[0]), Key(cell=setup.key_cells[1])),
        artifacts=setup.visions,
        phase=PLAYING if playing else COUNTDOWN,
    )
    timing = Timing(
        event.started_at_ms, event.settings.cooldown_ms, event.countdown_end_ms, event.ends_at_ms
    )
    return MazeState(setup, timing, position, clock_ms=event.started_at_ms)


def apply(state: MazeState | None, event: Event) -> MazeState:
    """Fold one event into the state. Never generates or decides anything."""
    if isinstance(event, MatchStarted):
        if state is not None:
            raise MazeError(ErrorCode.ALREADY_STARTED, "the match has already started")
        return _started(event)
    if state is None:
        raise MazeError(ErrorCode.NOT_STARTED, "the first event must be match_started")
    pos = state.position
    if isinstance(event, CommandQueued):
        entry = Queued(event.command_seq, event.player, event.action, event.dir, event.t)
        return MazeState(
            setup=state.setup,
            timing=state.timing,
            position=pos,
            clock_ms=state.clock_ms,
            queue=(*state.queue, entry),
            next_command_seq=event.command_seq + 1,
        )
    if isinstance(event, CommandRefused):
        return _pop(state, event.command_seq, event.t)
    if isinstance(event, Moved):
        me = pos.player(event.player)
        moved = PlayerState(
            cell=event.dst,
            vision=me.vision - 1 if me.vision > 0 else 0,
            compass=None,
            exit_open=me.exit_open,
            exited_at=me.exited_at,
            last_command_t=event.t,
            last_move_t=event.t,
        )
        return _pop(state, event.command_seq, event.t, _accepted(pos, event.player, moved))
    if isinstance(event, ArtifactTaken):
        pos = pos.with_player(event.player, replace(pos.player(event.player), vision=VISION_MOVES))
        return replace(state, position=replace(pos, artifacts=pos.artifacts - {event.cell}))
    if isinstance(event, KeyPickedUp):
        return replace(state, position=pos.with_key(event.owner, Key(carrier=event.player)))
    if isinstance(event, PlayersMet):
        k1, k2 = (
            Key(carrier=owner) if key.carrier is not None else key
            for owner, key in enumerate(pos.keys, 1)
        )
        met = replace(pos, keys=(k1, k2), meetings=event.meeting_seq)
        return replace(state, position=met)
    if isinstance(event, CompassRead):
        read = replace(pos.player(event.player), compass=event.bearing)
        return replace(state, position=pos.with_player(event.player, read))
    if isinstance(event, ExitOpened):
        opened = replace(pos.player(event.player), exit_open=True)
        return replace(state, position=pos.with_player(event.player, opened))
    if isinstance(event, KeyDropped):
        pos = _accepted(
            pos, event.player, replace(pos.player(event.player), last_command_t=event.t)
        )
        pos = pos.with_key(event.owner, Key(cell=event.cell))
        return _pop(state, event.command_seq, event.t, pos)
    if isinstance(event, Exited):
        gone = replace(
            pos.player(event.player),
            cell=None,
            exited_at=event.t,
            last_command_t=event.t,
            last_move_t=event.t,
        )
        pos = _accepted(pos, event.player, gone)
        if pos.first_exit is None:
            pos = replace(pos, first_exit=event.player)
        return _pop(state, event.command_seq, event.t, pos)
    if isinstance(event, PlayStarted):
        pos = replace(pos, phase=PLAYING, state_seq=pos.state_seq + 1)
        return replace(state, position=pos, clock_ms=max(state.clock_ms, event.at_ms))
    if isinstance(event, ClockAdvanced):
        return replace(state, clock_ms=max(state.clock_ms, event.t))
    if isinstance(event, MatchDecided):
        result = Result(event.winner, event.reason, event.at_ms)
        pos = replace(pos, result=result, phase=OVER, state_seq=pos.state_seq + 1)
        return replace(state, position=pos, clock_ms=max(state.clock_ms, event.at_ms))
    raise MazeError(ErrorCode.UNKNOWN_EVENT, f"not a Maze event: {event!r}")


def next_deadline(state: MazeState) -> int | None:
    """The earliest time at which ``Advance`` would change something, for the match service to
    arm its timer: the end of the countdown, the first millisecond after an open finish window,
    or the time limit; None once the match is decided."""
    pos, timing = state.position, state.timing
    if pos.result is not None:
        return None
    if pos.phase == COUNTDOWN:
        return timing.countdown_end_ms
    if pos.first_exit is not None:
        exited_at = pos.player(pos.first_exit).exited_at
        assert exited_at is not None
        return max(state.clock_ms, exited_at + FINISH_WINDOW_MS) + 1
    return timing.ends_at_ms


def replay(events: Iterable[Event]) -> MazeState | None:
    """The state after folding ``events`` from the start."""
    state: MazeState | None = None
    for event in events:
        state = apply(state, event)
    return state


def run(
    commands: Sequence[tuple[Command, Context]], state: MazeState | None = None
) -> tuple[MazeState | None, list[Event], list[Rejection]]:
    """Decide and apply each command in turn (a match's authority loop, in miniature)."""
    log: list[Event] = []
    rejections: list[Rejection] = []
    for command, context in commands:
        outcome = decide(state, command, context)
        if isinstance(outcome, Rejection):
            rejections.append(outcome)
            continue
        for event in outcome:
            state = apply(state, event)
            log.append(event)
    return state, log, rejections


def verify(commands: Sequence[tuple[Command, Context]], events: Sequence[Event]) -> bool:
    """Re-deciding the commands with their recorded contexts reproduces the events exactly."""
    _, log, _ = run(commands)
    return log == list(events)
