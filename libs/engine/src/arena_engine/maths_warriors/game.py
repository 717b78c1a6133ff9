"""``decide(state, command, context)`` and ``apply(state, event)``: the event-sourced game.

``decide`` validates a command and returns the events it causes (or a :class:`Rejection`); it never
changes anything. ``apply`` folds one event into the state and never rolls dice. A game is replayed
by folding its events, and verified by re-deciding its commands with their recorded contexts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from .clocks import ClockSettings, expired, game_deadline, move_deadline
from .commands import Command, Context, Forfeit, GameClockExpiry, MoveClockTimeout, Start
from .dice import Die, Roller, count_active, other, reroll, roll_all, with_values
from .errors import ErrorCode, Rejection
from .events import (
    Event,
    GameEnded,
    GameStarted,
    MindAttacked,
    StrengthAttacked,
    TurnSkipped,
)
from .moves import DieToken, Mind, Skip, Strength
from .rules import check_move, first_player, timeout_winner
from .ruleset import Ruleset
from .state import GameState, Status, WinReason


def _end_by_clock(state: GameState) -> GameEnded:
    r1, r2 = state.remaining(1), state.remaining(2)
    winner = timeout_winner(r1, r2, state.first, state.ruleset)
    return GameEnded(winner, WinReason.GAME_CLOCK.value, r1, r2)


def _start(state: GameState, command: Start, context: Context) -> list[Event] | Rejection:
    if state.status is not Status.NEW:
        return Rejection(ErrorCode.ALREADY_STARTED, "the game has already started")
    roller = Roller(context.seed)
    dice1, dice2 = roll_all(roller), roll_all(roller)
    first = first_player(dice1, dice2, command.ruleset, roller)
    clocks = command.clocks
    return [
        GameStarted(
            seed=context.seed,
            rules=tuple(command.ruleset.to_dict().items()),
            game_seconds=clocks.game_seconds,
            move_seconds=clocks.move_seconds,
            dice1=tuple(v for v in dice1 if v is not None),
            dice2=tuple(v for v in dice2 if v is not None),
            first=first.player,
            rolloff=first.rolloff,
            started_at_ms=context.now_ms,
            game_deadline_ms=game_deadline(context.now_ms, clocks),
            move_deadline_ms=move_deadline(context.now_ms, clocks),
        )
    ]


def _move(
    state: GameState, move: Strength | Mind | Skip, context: Context
) -> list[Event] | Rejection:
    resolution = check_move(state, move)
    if isinstance(resolution, Rejection):
        return resolution
    if expired(state.game_deadline_ms, context.now_ms):
        # The game clock is authoritative: a move that arrives after it ran out is not played.
        return [_end_by_clock(state)]
    deadline = move_deadline(context.now_ms, state.clocks)
    if isinstance(move, Skip):
        return [TurnSkipped(move.player, "skip", deadline)]
    rerolls = tuple((d.value, v) for d, v in reroll(Roller(context.seed), resolution.used))
    assert resolution.captured is not None
    event: Event
    if isinstance(move, Strength):
        event = StrengthAttacked(
            move.player, move.attackers[0], move.target, context.seed, rerolls, deadline
        )
    else:
        names = tuple(t.die if isinstance(t, DieToken) else str(t) for t in move.tokens)
        value = state.dice(other(move.player))[resolution.captured.position]
        assert value is not None
        event = MindAttacked(
            move.player, move.target, names, value, context.seed, rerolls, deadline
        )
    events: list[Event] = [event]
    opponent = other(move.player)
    if count_active(state.dice(opponent)) == 1:
        r_mover = state.remaining(move.player)
        r1, r2 = (r_mover, 0) if move.player == 1 else (0, r_mover)
        events.append(GameEnded(move.player, WinReason.ALL_CAPTURED.value, r1, r2))
    return events


def decide(state: GameState, command: Command, context: Context) -> list[Event] | Rejection:
    """The events ``command`` causes in ``state``, or why it is refused. Pure."""
    if isinstance(command, Start):
        return _start(state, command, context)
    if isinstance(command, (Strength, Mind, Skip)):
        return _move(state, command, context)
    if state.status is Status.NEW:
        return Rejection(ErrorCode.NOT_STARTED, "the game has not started")
    if isinstance(command, Forfeit):
        if state.status is Status.OVER:
            return Rejection(ErrorCode.GAME_OVER, "the game is over")
        if command.player not in (1, 2):
            return Rejection(ErrorCode.UNKNOWN_PLAYER, f"no player {command.player}")
        r1, r2 = state.remaining(1), state.remaining(2)
        return [GameEnded(other(command.player), WinReason.FORFEIT.value, r1, r2)]
    # Timers: a stale or early one (the deadline moved on, or the game ended) changes nothing.
    if state.status is Status.OVER:
        return []
    if isinstance(command, MoveClockTimeout):
        if command.deadline_ms != state.move_deadline_ms or context.now_ms < command.deadline_ms:
            return []
        if expired(state.game_deadline_ms, context.now_ms):
            return [_end_by_clock(state)]
        deadline = move_deadline(context.now_ms, state.clocks)
        return [TurnSkipped(state.to_move, "timeout", deadline)]
    if isinstance(command, GameClockExpiry):
        if command.deadline_ms != state.game_deadline_ms or context.now_ms < command.deadline_ms:
            return []
        return [_end_by_clock(state)]
    raise TypeError(f"not a Maths Warriors command: {command!r}")


def _after_move(state: GameState, player: int, deadline: int | None) -> GameState:
    return replace(
        state, to_move=other(player), move_count=state.move_count + 1, move_deadline_ms=deadline
    )


def apply(state: GameState, event: Event) -> GameState:
    """Fold one event into the state. Never rolls: every value comes from the event."""
    if isinstance(event, GameStarted):
        return GameState(
            status=Status.PLAYING,
            ruleset=Ruleset.from_dict(dict(event.rules)),
            clocks=ClockSettings(event.game_seconds, event.move_seconds),
            dice1=event.dice1,
            dice2=event.dice2,
            first=event.first,
            to_move=event.first,
            game_deadline_ms=event.game_deadline_ms,
            move_deadline_ms=event.move_deadline_ms,
        )
    if isinstance(event, (StrengthAttacked, MindAttacked)):
        mover, opponent = event.player, other(event.player)
        own = with_values(state.dice(mover), [(Die(d), v) for d, v in event.rerolls])
        theirs = with_values(state.dice(opponent), [(Die(event.target), None)])
        dice1, dice2 = (own, theirs) if mover == 1 else (theirs, own)
        moved = _after_move(replace(state, dice1=dice1, dice2=dice2), mover, event.move_deadline_ms)
        if count_active(theirs) == 0:
            return replace(moved, to_move=mover)  # a winning move does not pass the turn
        return moved
    if isinstance(event, TurnSkipped):
        return _after_move(state, event.player, event.move_deadline_ms)
    if isinstance(event, GameEnded):
        return replace(
            state,
            status=Status.OVER,
            winner=event.winner,
            win_reason=WinReason(event.reason),
            move_deadline_ms=None,
        )
    raise TypeError(f"not a Maths Warriors event: {event!r}")


def replay(events: Iterable[Event], state: GameState | None = None) -> GameState:
    for event in events:
        state = apply(state or GameState(), event)
    return state or GameState()


def run(
    commands: Sequence[tuple[Command, Context]], state: GameState | None = None
) -> tuple[GameState, list[Event], list[Rejection]]:
    """Decide and apply each command in turn (a match's authority loop, in miniature)."""
    state = state or GameState()
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
    """Re-running the commands with their recorded seeds reproduces the events exactly."""
    _, log, _ = run(commands)
    return log == list(events)
