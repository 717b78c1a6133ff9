"""Deciding a match command, whatever the game: the sender check, presence and the match's own
bookkeeping around the game's rules (docs/games.md).

:func:`decide` is pure: everything that varies between runs — the server time, the seeds, a
thought worked out ahead — comes in :class:`~arena_games.contract.Inputs`, and each is recorded
in the events (the time as the envelope's ``time``, the seeds in the payloads), so ``arena
verify`` calls the same function with the recorded inputs and must get the logged events back.

- ``StartMatch`` (a legacy ``CreateMatch`` reads as one): the game found by name, the seats
  checked against its plan, its ``rules.settings``; answered by ``MatchOpened`` and the game's
  ``rules.start``.
- A seat's command (``player_id`` names the sender): the game's ``rules.decide``; ``Resign``:
  ``rules.forfeit``; ``PlayerDisconnected``/``PlayerReconnected``: the reconnect window, kept
  here for every game whose absent seats matter (``ReconnectPolicy``).
- A timer (seat 0): the game's ``rules.decide``; ``ReconnectExpired``: ``rules.forfeit``.
- A command another service sends (the game's ``wire.service``; seat 0): ``rules.decide``.
- When the game's final event is decided it is written inside ``MatchEnded``, with the result
  it records (``wire.result_of``): the one terminal event of every game.

Every command gets an answer: events, or a rejection with a typed code (the game's, and the
match's own, :class:`MatchError`). A stale timer is rejected as ``stale_timer`` rather than
ignored, so that its answer is in the log too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from arena_games.contract import (
    Decision,
    GameError,
    Inputs,
    Presence,
    ServiceSettings,
    pack,
)
from arena_games.registry import STANDARD, Registry
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_match.state import MODES, MatchState, info_of, match_id_of, opened_state

__all__ = ["Decision", "Inputs", "MatchError", "MatchSettings", "decide", "is_timer"]


class MatchError(StrEnum):
    """Rejection codes of the match itself (the game's rules have their own)."""

    UNKNOWN_MATCH = "unknown_match"
    MATCH_EXISTS = "match_exists"
    INVALID_MATCH = "invalid_match"
    INVALID_SETTINGS = "invalid_settings"
    NOT_A_PLAYER = "not_a_player"
    ALREADY_DISCONNECTED = "already_disconnected"
    NOT_DISCONNECTED = "not_disconnected"
    NO_PRESENCE = "no_presence"
    STALE_TIMER = "stale_timer"
    UNKNOWN_COMMAND = "unknown_command"
    GAME_OVER = "game_over"


#: The service's settings a new match records in MatchOpened.
MatchSettings = ServiceSettings
DEFAULT_SETTINGS = MatchSettings()

PRESENCE = (match_pb2.PlayerDisconnected, match_pb2.PlayerReconnected)


@dataclass(frozen=True, slots=True)
class Kinds:
    """The command types of every registered game: a seat's, and the timers (seat 0)."""

    seated: tuple[type[Message], ...]
    timers: tuple[type[Message], ...]
    service: tuple[type[Message], ...]


@cache
def kinds(registry: Registry = STANDARD) -> Kinds:
    seated: list[type[Message]] = [match_pb2.Resign, *PRESENCE]
    timers: list[type[Message]] = [match_pb2.ReconnectExpired]
    service: list[type[Message]] = []
    for module in registry:
        seated.extend(module.wire.commands)
        timers.extend(module.wire.timers)
        service.extend(module.wire.service)
    return Kinds(tuple(seated), tuple(timers), tuple(service))


def is_timer(payload: object, registry: Registry = STANDARD) -> bool:
    return isinstance(payload, kinds(registry).timers)


def _reject(code: StrEnum, message: str = "") -> Rejection:
    return Rejection(code.value, message)


def decide(
    state: MatchState,
    stream: str,
    payload: Any,
    inputs: Inputs,
    settings: MatchSettings = DEFAULT_SETTINGS,
    registry: Registry = STANDARD,
) -> Decision:
    if isinstance(payload, match_pb2.StartMatch):
        if state.created:
            return _reject(MatchError.MATCH_EXISTS, "this match exists already")
        return _start(stream, payload, inputs, settings, registry)
    if not state.created:
        return _reject(MatchError.UNKNOWN_MATCH, "no such match")
    known = kinds(registry)
    if isinstance(payload, known.timers):
        if state.over:
            return _reject(MatchError.STALE_TIMER, "the game is over")
        return _ended(state, _timer(state, payload, inputs))
    if isinstance(payload, known.service):
        if state.over:
            return _reject(MatchError.GAME_OVER, "the game is over")
        assert state.module is not None
        return _ended(state, state.module.rules.decide(state.game, 0, payload, inputs))
    if not isinstance(payload, known.seated):
        return _reject(MatchError.UNKNOWN_COMMAND, f"{type(payload).__name__} is not a command")
    if state.over:
        # Before the sender check: an evicted match no longer knows its seats.
        return _reject(MatchError.GAME_OVER, "the game is over")
    seat = state.seat_of(str(getattr(payload, "player_id", "")))
    if seat is None or not state.seat(seat).human:
        return _reject(MatchError.NOT_A_PLAYER, "the sender does not play in this match")
    if isinstance(payload, PRESENCE):
        return _presence(state, seat, payload, inputs)
    assert state.module is not None
    rules = state.module.rules
    if isinstance(payload, match_pb2.Resign):
        return _ended(state, rules.forfeit(state.game, seat, inputs))
    return _ended(state, rules.decide(state.game, seat, payload, inputs))


def _start(
    stream: str,
    payload: match_pb2.StartMatch,
    inputs: Inputs,
    settings: MatchSettings,
    registry: Registry,
) -> Decision:
    if match_id_of(stream) != payload.match_id or not payload.match_id:
        return _reject(MatchError.INVALID_MATCH, "the match id does not name this stream")
    try:
        module = registry.find(payload.game)
        info = info_of(payload)
    except GameError as exc:
        return exc.rejection()
    except ValueError as exc:
        return _reject(MatchError.INVALID_MATCH, str(exc))
    problem = module.seats.problem(info.seats)
    if problem:
        return _reject(MatchError.INVALID_MATCH, problem)
    if info.mode not in module.modes:
        return _reject(MatchError.INVALID_MATCH, f"{module.name} is not played {info.mode}")
    given = None
    if payload.HasField("settings"):
        given = module.wire.settings()
        if not payload.settings.Unpack(given):
            return _reject(
                MatchError.INVALID_SETTINGS, f"not {module.wire.settings.DESCRIPTOR.full_name}"
            )
    played = module.rules.settings(given)
    if isinstance(played, Rejection):
        return played
    opened = match_pb2.MatchOpened(
        match_id=payload.match_id,
        game=module.name,
        seats=[seat.to_proto() for seat in info.seats],
        mode=MODES[info.mode],
        room_code=payload.room_code,
        settings=pack(played),
        service=match_pb2.ServiceSettings(
            reconnect_ms=settings.reconnect_ms, ai_think_ms=settings.ai_think_ms
        ),
    )
    state = opened_state(opened, registry)
    return _ended(state, module.rules.start(state.game, inputs), opened)


def _presence(state: MatchState, seat: int, payload: Any, inputs: Inputs) -> Decision:
    presence = state.presence
    if presence is Presence.NONE:
        return _reject(MatchError.NO_PRESENCE, f"{state.info.game} keeps no presence")  # type: ignore[union-attr]
    away = state.away_until(seat)
    if isinstance(payload, match_pb2.PlayerDisconnected):
        if away is not None:
            return _reject(MatchError.ALREADY_DISCONNECTED, "already disconnected")
        # A game whose absent seats play on (Matrix Games) has no window to close.
        deadline = inputs.now_ms + state.reconnect_ms if presence is Presence.FORFEIT else 0
        return [
            match_pb2.PlayerDisconnected(
                player_id=payload.player_id, seat=seat, reconnect_deadline_ms=deadline
            )
        ]
    if away is None:
        return _reject(MatchError.NOT_DISCONNECTED, "not disconnected")
    return [match_pb2.PlayerReconnected(player_id=payload.player_id, seat=seat)]


def _timer(state: MatchState, payload: Any, inputs: Inputs) -> Decision:
    assert state.module is not None
    rules = state.module.rules
    if isinstance(payload, match_pb2.ReconnectExpired):
        seat = payload.seat
        if (
            state.presence is not Presence.FORFEIT
            or state.away_until(seat) != payload.deadline_ms
            or inputs.now_ms < payload.deadline_ms
        ):
            return _reject(MatchError.STALE_TIMER, "the player is back, or not yet due")
        return rules.forfeit(state.game, seat, inputs)
    return rules.decide(state.game, 0, payload, inputs)


def _ended(state: MatchState, decision: Decision, *opening: Message) -> Decision:
    """The decision with the game's final event written inside MatchEnded."""
    if isinstance(decision, Rejection):
        return decision
    module, info = state.module, state.info
    assert module is not None and info is not None
    final = module.wire.final
    events: list[Message] = list(opening)
    for event in decision:
        if isinstance(event, final):
            event = module.wire.result_of(event).to_proto(info.match_id, info.game, event)
        events.append(event)
    return events
