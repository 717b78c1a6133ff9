"""The event-sourced surface beyond the vectors: the FIFO's sequences, life cycle refusals,
forfeits, the time limit, the clock, settings, and replay."""

from __future__ import annotations

import json

import pytest
from arena_engine.maze import (
    Advance,
    Context,
    Drop,
    Enqueue,
    ErrorCode,
    Forfeit,
    MazeError,
    MazeSettings,
    Move,
    ProcessNext,
    Rejection,
    Setup,
    Start,
    Submit,
    decide,
    event_from_dict,
    event_to_dict,
    project,
    replay,
    run,
    verify,
)
from arena_engine.maze.events import (
    ClockAdvanced,
    CommandQueued,
    CommandRefused,
    MatchDecided,
    MatchStarted,
    Moved,
    PlayStarted,
)
from arena_engine.maze.views import ObserverView, PlayerView

from tests.engine.maze.play import explorer_game, fold, started, submit

# A corridor of four cells: each player's key and exit at their end, starts in the middle.
CORRIDOR = Setup.from_dict(
    {
        "maze": {"width": 4, "height": 1, "cells": [2, 10, 10, 8]},
        "objects": [
            {"kind": "key", "owner": 1, "cell": 0},
            {"kind": "exit", "owner": 1, "cell": 0, "dir": "W"},
            {"kind": "key", "owner": 2, "cell": 3},
            {"kind": "exit", "owner": 2, "cell": 3, "dir": "E"},
        ],
        "start": {"1": 1, "2": 2},
    }
)
QUICK = MazeSettings(cooldown_ms=100, countdown_ms=1_000, time_limit_ms=60_000)


def test_command_sequences_are_given_on_acceptance_into_the_fifo() -> None:
    state, _ = started(QUICK, setup=CORRIDOR)
    seqs = []
    for t, role in ((1000, 1), (1000, "observer"), (1001, 2), (1002, 1)):
        outcome = decide(state, Enqueue(role, Move("E")), Context(t))  # type: ignore[arg-type]
        if isinstance(outcome, Rejection):
            assert outcome.code is ErrorCode.OBSERVER
            continue
        (queued,) = outcome
        assert isinstance(queued, CommandQueued)
        seqs.append(queued.command_seq)
        state = fold(state, outcome)
    assert seqs == [1, 2, 3]
    assert [q.command_seq for q in state.queue] == [1, 2, 3]
    # Processing is one entry at a time, from the head; a refused entry keeps its sequence.
    for seq in (1, 2):
        events = decide(state, ProcessNext(), Context())
        assert isinstance(events, list)
        assert [e.command_seq for e in events if isinstance(e, Moved)] == [seq]
        state = fold(state, events)
    third = decide(state, ProcessNext(), Context())
    assert third[-1] == CommandRefused(3, 1, "cooldown", 1002)  # type: ignore[index]
    state = fold(state, third)
    assert state.queue == () and state.next_command_seq == 4
    assert decide(state, ProcessNext(), Context()) == Rejection(
        ErrorCode.QUEUE_EMPTY, "no command is queued"
    )


def test_a_full_fifo_refuses_with_a_typed_error_and_takes_no_sequence() -> None:
    state, _ = started(QUICK, setup=CORRIDOR)
    for i in range(16):
        state = fold(state, decide(state, Enqueue(1 + i % 2, Drop()), Context(2000)))  # type: ignore[arg-type]
    refused = decide(state, Enqueue(1, Move("W")), Context(2000))
    assert isinstance(refused, Rejection) and refused.code is ErrorCode.QUEUE_FULL
    assert refused.to_dict() == {"error": "queue_full"}
    assert state.next_command_seq == 17
    # Submit processes the whole FIFO, then takes the next command.
    state = fold(state, decide(state, ProcessNext(), Context()))  # type: ignore[arg-type]
    state, events = submit(state, 1, Move("W"), 2001)
    assert state.queue == () and isinstance(events[0], CommandQueued)
    assert events[0].command_seq == 17


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (Enqueue(1, Move("X")), ErrorCode.BAD_COMMAND),
        (Enqueue(3, Move("N")), ErrorCode.BAD_COMMAND),  # type: ignore[arg-type]
        (Submit("observer", Drop()), ErrorCode.OBSERVER),
        (Forfeit(3), ErrorCode.BAD_COMMAND),
        (Forfeit(1, "bored"), ErrorCode.BAD_COMMAND),
        (Start(), ErrorCode.ALREADY_STARTED),
    ],
)
def test_malformed_and_untimely_commands_are_rejected(command: object, code: ErrorCode) -> None:
    state, _ = started(QUICK, setup=CORRIDOR)
    outcome = decide(state, command, Context(1500))  # type: ignore[arg-type]
    assert isinstance(outcome, Rejection) and outcome.code is code


def test_nothing_but_start_before_the_start() -> None:
    for command in (Enqueue(1, Drop()), ProcessNext(), Advance(), Forfeit(1)):
        outcome = decide(None, command, Context(5))
        assert isinstance(outcome, Rejection) and outcome.code is ErrorCode.NOT_STARTED


def test_the_countdown_ends_by_the_clock_and_counts_in_the_state_sequence() -> None:
    state, _ = started(QUICK, setup=CORRIDOR)
    assert state.position.phase == "countdown" and state.state_seq == 0
    assert decide(state, Advance(), Context(999))[1:] == []  # type: ignore[index]
    events = decide(state, Advance(), Context(1000))
    assert isinstance(events, list) and PlayStarted(1000) in events
    state = fold(state, events)
    assert state.position.phase == "playing" and state.state_seq == 1
    assert decide(state, Advance(), Context(1000)) == []  # a stale timer changes nothing


def test_a_forfeit_gives_the_match_to_the_other_player() -> None:
    state, _ = started(QUICK, setup=CORRIDOR)
    events = decide(state, Forfeit(2, "disconnect"), Context(1500))
    assert isinstance(events, list)
    assert events[-1] == MatchDecided(1, "disconnect", 1500)
    state = fold(state, events)
    assert state.result is not None and state.result.to_dict()["winner"] == 1
    assert state.position.phase == "over"
    again = decide(state, Forfeit(1), Context(1600))
    assert isinstance(again, Rejection) and again.code is ErrorCode.FINISHED
    state, events = submit(state, 1, Move("W"), 1700)
    assert isinstance(events[-1], CommandRefused) and events[-1].code == "finished"


def test_a_forfeit_after_the_window_closed_is_the_first_exit_s_win() -> None:
    state, _ = started(QUICK, setup=CORRIDOR)
    state, _ = submit(state, 1, Move("W"), 1000)
    state, _ = submit(state, 1, Move("W"), 1100)  # out: player 1 exits at 1100
    assert state.result is None
    exited = decide(state, Forfeit(1), Context(1150))
    assert isinstance(exited, Rejection) and exited.code is ErrorCode.FINISHED
    inside = decide(state, Forfeit(2), Context(1300))
    assert isinstance(inside, list) and inside[-1] == MatchDecided(1, "forfeit", 1300)
    after = decide(state, Forfeit(2), Context(1301))
    assert isinstance(after, list) and after[-1] == MatchDecided(1, "exit", 1301)


def test_the_time_limit_is_a_draw_unless_someone_is_out() -> None:
    state, _ = started(QUICK, setup=CORRIDOR)
    assert state.timing.ends_at_ms == 61_000
    assert decide(state, Advance(), Context(60_999))[-1:] != [
        MatchDecided(None, "time_limit", 60_999)
    ]  # type: ignore[index]
    events = decide(state, Advance(), Context(61_000))
    assert isinstance(events, list) and events[-1] == MatchDecided(None, "time_limit", 61_000)
    # A timer (or a command) arriving after the limit: the game still ended at the limit.
    late = decide(state, Advance(), Context(61_001))
    assert isinstance(late, list) and late[-1] == MatchDecided(None, "time_limit", 61_000)
    moved = decide(state, Submit(1, Move("W")), Context(61_500))
    assert isinstance(moved, list) and MatchDecided(None, "time_limit", 61_000) in moved
    unlimited, _ = started(MazeSettings(time_limit_ms=None), setup=CORRIDOR)
    assert unlimited.timing.ends_at_ms is None
    assert not any(
        isinstance(e, MatchDecided) for e in decide(unlimited, Advance(), Context(10**9))
    )  # type: ignore[union-attr]


def test_the_start_records_the_whole_layout_and_the_seed() -> None:
    cfg = MazeSettings(width=9, height=7, countdown_ms=2_000)
    state, (event,) = started(cfg, seed=99, now=5_000)
    assert isinstance(event, MatchStarted)
    assert event.seed == 99 and event.setup == state.setup and event.settings == cfg
    assert (event.started_at_ms, event.countdown_end_ms) == (5_000, 7_000)
    assert event.ends_at_ms == 7_000 + 600_000
    assert event_from_dict(json.loads(json.dumps(event_to_dict(event)))) == event


def test_every_event_of_a_whole_game_round_trips_and_replays_to_the_state() -> None:
    state, log = explorer_game(MazeSettings(width=9, height=9), seed=4)
    assert state.result is not None
    kinds = {type(e).__name__ for e in log}
    assert {"MatchStarted", "CommandQueued", "Moved", "Exited", "MatchDecided"} <= kinds
    wire = [json.loads(json.dumps(event_to_dict(e))) for e in log]
    assert [event_from_dict(d) for d in wire] == log
    assert replay(log) == state


def test_verify_re_decides_recorded_commands() -> None:
    commands = [
        (Start(QUICK, CORRIDOR), Context(0, 0)),
        (Submit(1, Move("W")), Context(1000)),
        (Submit(2, Move("E")), Context(1010)),
        (Submit(1, Move("W")), Context(1100)),
        (Submit(2, Move("E")), Context(1250)),
    ]
    state, events, rejections = run(commands)
    assert state is not None and state.result is not None and state.result.winner is None
    assert rejections == []
    assert verify(commands, events)
    assert not verify([*commands[:-1], (Submit(2, Move("E")), Context(1301))], events)


def test_unknown_events_and_settings_are_typed_errors() -> None:
    with pytest.raises(MazeError) as unknown:
        event_from_dict({"type": "teleported"})
    assert unknown.value.code is ErrorCode.UNKNOWN_EVENT
    with pytest.raises(MazeError) as missing:
        event_from_dict({"type": "moved", "player": 1})
    assert missing.value.code is ErrorCode.UNKNOWN_EVENT
    for bad in ({"width": 4}, {"cooldown_ms": -1}, {"time_limit_ms": 10}, {"speed": 3}):
        with pytest.raises(MazeError) as invalid:
            MazeSettings.from_dict(bad)
        assert invalid.value.code is ErrorCode.INVALID_SETTING
    assert MazeSettings.from_dict(MazeSettings().to_dict()) == MazeSettings()


def test_players_see_the_opponent_s_key_only_while_the_opponent_is_visible() -> None:
    wide = Setup.from_dict(
        {
            "maze": {"width": 9, "height": 1, "cells": [2] + [10] * 7 + [8]},
            "objects": [
                {"kind": "key", "owner": 1, "cell": 7},
                {"kind": "exit", "owner": 1, "cell": 0, "dir": "W"},
                {"kind": "key", "owner": 2, "cell": 1},
                {"kind": "exit", "owner": 2, "cell": 8, "dir": "E"},
            ],
            "start": {"1": 0, "2": 8},
        }
    )
    state, _ = started(MazeSettings(countdown_ms=0, cooldown_ms=0), setup=wide)
    state, _ = submit(state, 2, Move("W"), 10)  # player 2 picks up player 1's key at 7
    far = project(state, 1)
    assert isinstance(far, PlayerView) and far.opponent is None
    state, _ = submit(state, 2, Move("W"), 20)
    state, _ = submit(state, 2, Move("W"), 30)
    state, _ = submit(state, 2, Move("W"), 40)
    assert project(state, 1).opponent is None  # type: ignore[union-attr]
    state, _ = submit(state, 2, Move("W"), 50)  # at 3: three cells from player 1
    near = project(state, 1)
    assert isinstance(near, PlayerView) and near.opponent is not None
    assert (near.opponent.cell, near.opponent.carrying) == (3, 1)
    watcher = project(state, "observer")
    assert isinstance(watcher, ObserverView)
    assert [p.carrying for p in watcher.players] == [None, 1]


def test_next_deadline_is_when_the_clock_would_decide_something() -> None:
    from arena_engine.maze import next_deadline

    state, _ = started(QUICK, setup=CORRIDOR)
    assert next_deadline(state) == 1_000  # the end of the countdown
    state = fold(state, decide(state, Advance(), Context(1_000)))  # type: ignore[arg-type]
    assert next_deadline(state) == 61_000  # the time limit
    state, _ = submit(state, 1, Move("W"), 1_000)
    state, _ = submit(state, 1, Move("W"), 1_100)  # player 1 is out at 1100
    assert next_deadline(state) == 1_301  # the first millisecond past the window
    assert decide(state, Advance(), Context(1_300))[-1:] == [ClockAdvanced(1_300)]  # type: ignore[index]
    state = fold(state, decide(state, Advance(), Context(1_301)))  # type: ignore[arg-type]
    assert state.result is not None and next_deadline(state) is None
