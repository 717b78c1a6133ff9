"""Deciding a match command: the sender check, presence, timers and the AI around the engine.

:func:`decide` is pure: everything that varies between runs — the server time, the seed of the
rolls, the seed the AI chooses with — comes in :class:`Inputs`, and each is recorded in the events
(the time as the envelope's ``time``, the seeds in the payloads), so ``arena verify`` calls the
same function with the recorded inputs and must get the logged events back.

Every command gets an answer: events, or a rejection with a typed code (the engine's codes, e.g.
``not_your_turn``, and the match's own, :class:`MatchError`). A stale timer is rejected as
``stale_timer`` rather than ignored, so that its answer is in the log too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from arena_engine.maths_warriors import (
    Context,
    Forfeit,
    GameClockExpiry,
    GameState,
    MathsWarriorsError,
    Move,
    MoveClockTimeout,
    Start,
    Status,
)
from arena_engine.maths_warriors import Rejection as EngineRejection
from arena_engine.maths_warriors import decide as engine_decide
from arena_engine.maths_warriors.ai import choose_move
from arena_engine.maths_warriors.commands import Command as EngineCommand
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_runtime.schemas import maths_warriors as schema
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_match.state import MatchState, match_id_of


class MatchError(StrEnum):
    """Rejection codes of the match itself (the engine's ErrorCode covers the rules)."""

    UNKNOWN_MATCH = "unknown_match"
    MATCH_EXISTS = "match_exists"
    INVALID_MATCH = "invalid_match"
    NOT_A_PLAYER = "not_a_player"
    ALREADY_DISCONNECTED = "already_disconnected"
    NOT_DISCONNECTED = "not_disconnected"
    STALE_TIMER = "stale_timer"
    UNKNOWN_COMMAND = "unknown_command"
    GAME_OVER = "game_over"


@dataclass(frozen=True, slots=True)
class Inputs:
    """What a decision may depend on besides the state and the command."""

    now_ms: int
    seed: int = 0
    ai_seed: int = 0
    #: The AI's move, when it was chosen ahead (off the event loop) from this state and ai_seed;
    #: None: choose it here. Either way the same move: choose_move is a function of both.
    ai_move: Move | None = None


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """The service's settings a new match records in MatchCreated."""

    reconnect_ms: int = 30_000
    ai_think_ms: int = 700


Decision = list[Message] | Rejection

TIMERS = (pb.MoveClockTimeout, pb.GameClockExpiry, pb.ReconnectExpired, pb.AiMove)
_SEATED = (pb.Strength, pb.Mind, pb.Skip, pb.Resign, pb.PlayerDisconnected, pb.PlayerReconnected)


def _reject(code: StrEnum, message: str = "") -> Rejection:
    return Rejection(code.value, message)


def decide(
    state: MatchState,
    stream: str,
    payload: Any,
    inputs: Inputs,
    settings: MatchSettings = MatchSettings(),
) -> Decision:
    if isinstance(payload, pb.CreateMatch):
        if state.created:
            return _reject(MatchError.MATCH_EXISTS, "this match exists already")
        return _create(stream, payload, inputs, settings)
    if not state.created:
        return _reject(MatchError.UNKNOWN_MATCH, "no such match")
    if isinstance(payload, TIMERS):
        if state.over:
            return _reject(MatchError.STALE_TIMER, "the game is over")
        return _timer(state, payload, inputs)
    if not isinstance(payload, _SEATED):
        return _reject(MatchError.UNKNOWN_COMMAND, f"{type(payload).__name__} is not a command")
    if state.over:
        # Before the sender check: an evicted match no longer knows its seats.
        return _reject(MatchError.GAME_OVER, "the game is over")
    seat = state.seat_of(payload.player_id)
    if seat is None or state.seat(seat).is_ai:
        return _reject(MatchError.NOT_A_PLAYER, "the sender does not play in this match")
    if isinstance(payload, pb.PlayerDisconnected):
        if state.reconnect_deadlines[seat - 1] is not None:
            return _reject(MatchError.ALREADY_DISCONNECTED, "already disconnected")
        deadline = inputs.now_ms + state.reconnect_ms
        return [
            pb.PlayerDisconnected(
                player_id=payload.player_id, seat=seat, reconnect_deadline_ms=deadline
            )
        ]
    if isinstance(payload, pb.PlayerReconnected):
        if state.reconnect_deadlines[seat - 1] is None:
            return _reject(MatchError.NOT_DISCONNECTED, "not disconnected")
        return [pb.PlayerReconnected(player_id=payload.player_id, seat=seat)]
    command: EngineCommand
    if isinstance(payload, pb.Strength):
        command = schema.strength_move(payload, seat)
    elif isinstance(payload, pb.Mind):
        command = schema.mind_move(payload, seat)
    elif isinstance(payload, pb.Skip):
        command = schema.skip_move(seat)
    else:
        command = Forfeit(seat)
    return _engine(state, command, inputs)


def _create(
    stream: str, payload: pb.CreateMatch, inputs: Inputs, settings: MatchSettings
) -> Decision:
    if match_id_of(stream) != payload.match_id or not payload.match_id:
        return _reject(MatchError.INVALID_MATCH, "the match id does not name this stream")
    problem = _seat_problem(payload.seats)
    if problem:
        return _reject(MatchError.INVALID_MATCH, problem)
    try:
        ruleset = schema.ruleset_from_proto(payload.ruleset)
        clocks = schema.clocks_from_create(payload)
    except MathsWarriorsError as exc:
        return Rejection(exc.code.value, exc.message)
    context = Context(inputs.now_ms, inputs.seed)
    started = engine_decide(GameState(), Start(ruleset, clocks), context)
    assert not isinstance(started, EngineRejection)  # a new game always starts
    created = pb.MatchCreated(
        match_id=payload.match_id,
        seats=payload.seats,
        ruleset=schema.ruleset_to_proto(ruleset),
        game_seconds=clocks.game_seconds or 0,
        move_seconds=clocks.move_seconds,
        preview=payload.preview,
        mode=payload.mode or pb.MATCH_MODE_CASUAL,
        room_code=payload.room_code,
        reconnect_ms=settings.reconnect_ms,
        ai_think_ms=settings.ai_think_ms,
    )
    return [created, *(schema.event_to_proto(event) for event in started)]


def _seat_problem(seats: Sequence[pb.MatchSeat]) -> str:
    if len(seats) != 2:
        return "a match has exactly two seats"
    if not all(seat.player_id for seat in seats) or seats[0].player_id == seats[1].player_id:
        return "each seat needs its own player id"
    for seat in seats:
        if seat.kind == pb.SEAT_KIND_AI and seat.ai_level not in schema.AI_LEVELS:
            return "an AI seat needs an AI level"
        if seat.kind not in (pb.SEAT_KIND_HUMAN, pb.SEAT_KIND_AI):
            return "a seat is human or AI"
    return ""


def _timer(state: MatchState, payload: Any, inputs: Inputs) -> Decision:
    game = state.game
    if isinstance(payload, pb.MoveClockTimeout):
        return _engine(state, MoveClockTimeout(payload.deadline_ms), inputs)
    if isinstance(payload, pb.GameClockExpiry):
        return _engine(state, GameClockExpiry(payload.deadline_ms), inputs)
    if isinstance(payload, pb.ReconnectExpired):
        seat = payload.seat
        if (
            seat not in (1, 2)
            or state.reconnect_deadlines[seat - 1] != payload.deadline_ms
            or inputs.now_ms < payload.deadline_ms
        ):
            return _reject(MatchError.STALE_TIMER, "the player is back, or not yet due")
        return _engine(state, Forfeit(seat), inputs)
    seat = payload.seat
    if (
        game.status is not Status.PLAYING
        or seat not in (1, 2)
        or game.to_move != seat
        or not state.seat(seat).is_ai
        or game.move_count != payload.move_number
        or inputs.now_ms < payload.due_ms
    ):
        return _reject(MatchError.STALE_TIMER, "not the AI's turn any more, or not yet due")
    level = state.seat(seat).ai_level
    assert level is not None
    move = inputs.ai_move or choose_move(game, level, inputs.ai_seed)
    return _engine(state, move, inputs, ai_seed=inputs.ai_seed)


def _engine(
    state: MatchState, command: EngineCommand, inputs: Inputs, ai_seed: int | None = None
) -> Decision:
    outcome = engine_decide(state.game, command, Context(inputs.now_ms, inputs.seed))
    if isinstance(outcome, EngineRejection):
        return Rejection(outcome.code.value, outcome.message)
    if not outcome:
        # The engine ignores a stale or early timer; the match records why it did nothing.
        return _reject(MatchError.STALE_TIMER, "the deadline moved on, or is not yet due")
    events: list[Message] = []
    for index, event in enumerate(outcome):
        winner = getattr(event, "winner", None)
        events.append(
            schema.event_to_proto(
                event,
                ai_seed=ai_seed if index == 0 else None,
                winner_player_id=state.seat(winner).player_id if winner else "",
            )
        )
    return events
