"""The event-sourced game: start, clocks and timers, forfeit, replay and verification."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from arena_engine.maths_warriors import (
    ClockSettings,
    Context,
    ErrorCode,
    Forfeit,
    GameClockExpiry,
    GameEnded,
    GameStarted,
    GameState,
    MathsWarriorsError,
    MoveClockTimeout,
    Rejection,
    Ruleset,
    Skip,
    Start,
    Status,
    TurnSkipped,
    WinReason,
    apply,
    decide,
    replay,
    run,
    verify,
)
from arena_engine.maths_warriors.clocks import ClockState, clock_state, remaining_ms
from arena_engine.maths_warriors.events import event_from_dict, event_to_dict
from arena_engine.maths_warriors.ruleset import AllEqualStart
from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import play_ai_game


def started(seed: int = 1, clocks: ClockSettings | None = None, now: int = 0) -> GameState:
    state, _, rejections = run([(Start(clocks=clocks or ClockSettings()), Context(now, seed))])
    assert not rejections
    return state


def test_start_rolls_from_the_seed_and_records_it() -> None:
    events = decide(GameState(), Start(), Context(now_ms=5_000, seed=42))
    assert isinstance(events, list) and len(events) == 1
    event = events[0]
    assert isinstance(event, GameStarted)
    assert event.seed == 42 and event.rules == tuple(Ruleset().to_dict().items())
    assert event.game_deadline_ms == 5_000 + 720_000 and event.move_deadline_ms == 5_000 + 30_000
    assert decide(GameState(), Start(), Context(now_ms=5_000, seed=42)) == events
    assert decide(GameState(), Start(), Context(now_ms=5_000, seed=43)) != events
    state = apply(GameState(), event)
    assert state.status is Status.PLAYING and state.to_move == event.first
    assert isinstance(decide(state, Start(), Context()), Rejection)


def test_commands_before_the_start_are_refused() -> None:
    for command in (Skip(1), Forfeit(1), MoveClockTimeout(0), GameClockExpiry(0)):
        result = decide(GameState(), command, Context())
        assert isinstance(result, Rejection) and result.code is ErrorCode.NOT_STARTED


def test_rolloff_start_records_the_tiebreak() -> None:
    rules = Ruleset(all_equal_start=AllEqualStart.ROLLOFF)
    events = decide(GameState(), Start(ruleset=rules), Context(seed=3))
    assert isinstance(events, list)
    event = events[0]
    assert isinstance(event, GameStarted)
    assert apply(GameState(), event).ruleset == rules


def test_move_clock_timeout_skips_and_counts_as_a_move() -> None:
    state = started(clocks=ClockSettings(720, 30))
    deadline = state.move_deadline_ms
    assert deadline == 30_000
    assert decide(state, MoveClockTimeout(deadline), Context(now_ms=29_999)) == []  # early
    assert decide(state, MoveClockTimeout(deadline - 1), Context(now_ms=40_000)) == []  # stale
    events = decide(state, MoveClockTimeout(deadline), Context(now_ms=30_000))
    assert events == [TurnSkipped(state.to_move, "timeout", 60_000)]
    after = apply(state, events[0])  # type: ignore[index]
    assert after.to_move != state.to_move and after.move_count == 1
    # The old timer is now stale.
    assert decide(after, MoveClockTimeout(deadline), Context(now_ms=60_000)) == []


def test_game_clock_expiry_decides_by_the_timeout_rule() -> None:
    state = started(clocks=ClockSettings(60, 0))
    assert decide(state, GameClockExpiry(59_000), Context(now_ms=60_000)) == []
    events = decide(state, GameClockExpiry(60_000), Context(now_ms=60_000))
    assert isinstance(events, list) and len(events) == 1
    end = events[0]
    assert isinstance(end, GameEnded) and end.reason == WinReason.GAME_CLOCK.value
    assert end.winner != state.first  # 6 against 6: a tie goes to the player who did not start
    # A move arriving after the deadline is not played: the clock ends the game instead.
    late = decide(state, Skip(state.to_move), Context(now_ms=61_000))
    assert late == events
    over = apply(state, end)
    assert decide(over, GameClockExpiry(60_000), Context(now_ms=60_000)) == []


def test_forfeit() -> None:
    state = started()
    events = decide(state, Forfeit(1), Context())
    assert isinstance(events, list)
    over = apply(state, events[0])
    assert over.winner == 2 and over.win_reason is WinReason.FORFEIT
    result = decide(over, Forfeit(2), Context())
    assert isinstance(result, Rejection) and result.code is ErrorCode.GAME_OVER
    bad = decide(state, Forfeit(3), Context())
    assert isinstance(bad, Rejection) and bad.code is ErrorCode.UNKNOWN_PLAYER


def test_clock_settings() -> None:
    assert ClockSettings.online() == ClockSettings(720, 30)
    assert ClockSettings.online(10, 500) == ClockSettings(60, 120)
    assert ClockSettings.online(99_999, -5) == ClockSettings(3600, 0)
    assert ClockSettings.offline() == ClockSettings(720, 0)
    assert ClockSettings.offline(0) == ClockSettings(None, 0)
    with pytest.raises(MathsWarriorsError):
        ClockSettings.offline(61)
    with pytest.raises(MathsWarriorsError):
        ClockSettings(720, 121)
    assert remaining_ms(None, 5) is None and remaining_ms(100, 150) == 0
    assert clock_state(181_000) is ClockState.NORMAL
    assert clock_state(180_000) is ClockState.WARNING
    assert clock_state(60_000) is ClockState.CRITICAL
    assert clock_state(10_000) is ClockState.FINAL


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(["easy", "medium", "hard"]))
def test_replay_and_verification(seed: int, level: str) -> None:
    state, events, commands = play_ai_game(level, "easy", seed)
    assert state.over and state.winner in (1, 2)
    # Replaying the events (through their JSON form) reaches the same state, without rolling.
    wire = [json.loads(json.dumps(event_to_dict(e))) for e in events]
    assert replay(event_from_dict(w) for w in wire) == state
    # Re-deciding the commands with their recorded contexts reproduces the events exactly.
    assert verify(commands, events)
    winner_dice = state.dice(state.winner or 1)
    loser_dice = state.dice(3 - (state.winner or 1))
    assert all(v is None for v in loser_dice) and any(v is not None for v in winner_dice)


def test_verification_detects_a_changed_seed() -> None:
    _, events, commands = play_ai_game("hard", "hard", 11)
    changed = [(c, replace(ctx, seed=ctx.seed + 1)) for c, ctx in commands]
    assert verify(commands, events)
    assert not verify(changed, events)


def test_state_snapshot_is_plain_data() -> None:
    state = started(seed=4, now=1_000)
    snapshot = state.to_dict()
    assert json.loads(json.dumps(snapshot)) == snapshot
    assert snapshot["dice"] == {"1": list(state.dice1), "2": list(state.dice2)}
    assert snapshot["status"] == "playing" and snapshot["rules"]["tag"] == "2026.07.31"
    assert snapshot["game_deadline_ms"] == 721_000
