"""The Decider: the inputs of a decision are chosen once and recorded, an AI move chosen ahead
(off the event loop) is the one decide would choose, and a state that moved on discards it."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime

from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_match.decide import MatchSettings
from arena_match.runner import Decider
from arena_match.state import MatchState, apply, stream_of
from arena_runtime.envelope import Event, new_command
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection

from tests.services.match.harness import ALICE, ai, create, human

NOW = 1_790_000_000_000


def _fold(state: MatchState, payloads: object, at: datetime) -> MatchState:
    assert not isinstance(payloads, Rejection), payloads
    for number, payload in enumerate(payloads, start=1):  # type: ignore[arg-type]
        event = Event("e", "match-x", number, type(payload).DESCRIPTOR.full_name, payload, at)
        state = apply(state, event)
    return state


def _ai_on_move() -> tuple[Decider, MatchState]:
    seeds = itertools.count(1000)
    decider = Decider(MatchSettings(ai_think_ms=0), clock=lambda: NOW, seeds=lambda: next(seeds))
    # Pick a seat order where the AI moves first.
    for first in (
        (human(ALICE), ai(match_pb2.AI_LEVEL_HARD)),
        (ai(match_pb2.AI_LEVEL_HARD), human(ALICE)),
    ):
        command = new_command(stream_of("x"), create("x", first))
        state = _fold(MatchState(), decider.decide(MatchState(), command), decider.decided_at())
        if not state.seat(state.game.game.to_move).human:
            return decider, state
    raise AssertionError("no seed order put the AI first")


def test_the_decision_time_is_the_envelope_time() -> None:
    decider = Decider(MatchSettings(), clock=lambda: NOW, seeds=lambda: 7)
    decided = decider.decide(MatchState(), new_command(stream_of("x"), create("x")))
    assert not isinstance(decided, Rejection)
    assert decided[1].started_at_ms == NOW and decided[1].seed == 7
    assert decider.decided_at() == datetime.fromtimestamp(NOW / 1000, UTC)


async def test_an_ai_move_chosen_ahead_is_used_and_recorded() -> None:
    decider, state = _ai_on_move()
    timer = new_command(
        stream_of("x"), pb.AiMove(seat=state.game.game.to_move, move_number=0, due_ms=NOW)
    )
    await decider.think(stream_of("x"), state, timer)
    chosen = decider._thoughts[stream_of("x")]
    decided = decider.decide(state, timer)
    assert not isinstance(decided, Rejection)
    assert decided[0].ai_seed == chosen.seed
    assert stream_of("x") not in decider._thoughts


async def test_an_ai_move_chosen_for_another_state_is_not_used() -> None:
    decider, state = _ai_on_move()
    timer = new_command(
        stream_of("x"), pb.AiMove(seat=state.game.game.to_move, move_number=0, due_ms=NOW)
    )
    await decider.think(stream_of("x"), state, timer)
    chosen = decider._thoughts[stream_of("x")]
    moved_on = replace(state, game=replace(state.game))
    decided = decider.decide(moved_on, timer)
    assert not isinstance(decided, Rejection)
    assert decided[0].ai_seed != chosen.seed


def test_a_timer_a_little_early_is_decided_at_its_deadline() -> None:
    decider = Decider(MatchSettings(), clock=lambda: NOW, seeds=lambda: 7)
    state = _fold(
        MatchState(),
        decider.decide(MatchState(), new_command(stream_of("x"), create("x", move_seconds=5))),
        decider.decided_at(),
    )
    deadline = state.game.game.move_deadline_ms
    assert deadline == NOW + 5000
    early = Decider(MatchSettings(), clock=lambda: deadline - 1500, seeds=lambda: 7)
    timer = new_command(stream_of("x"), pb.MoveClockTimeout(deadline_ms=deadline))
    decided = early.decide(state, timer)
    assert not isinstance(decided, Rejection) and decided[0].reason == "timeout"
    assert early.decided_at() == datetime.fromtimestamp(deadline / 1000, UTC)
    too_early = Decider(MatchSettings(), clock=lambda: deadline - 3000, seeds=lambda: 7)
    refused = too_early.decide(state, timer)
    assert isinstance(refused, Rejection) and refused.code == "stale_timer"
