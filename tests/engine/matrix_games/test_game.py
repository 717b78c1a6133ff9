"""decide/apply: commands become the compact events, and folding them rebuilds the episode."""

from __future__ import annotations

import json

from arena_engine.matrix_games import Settings, Sim, play_scripted
from arena_engine.matrix_games.episode import scripted_orders
from arena_engine.matrix_games.game import (
    BeatPlayed,
    EndEpisode,
    Event,
    PlayBeat,
    Rejection,
    StartEpisode,
    apply,
    decide,
    event_from_dict,
    event_to_dict,
)
from arena_engine.matrix_games.orders import gather, hold, hunt
from arena_engine.matrix_games.replay import write_replay

POLICIES = ["counter"] * 8


def _fold(events: list[Event]) -> Sim:
    sim: Sim | None = None
    for event in events:
        sim = apply(sim, event)
    assert sim is not None
    return sim


def _start(cfg: Settings) -> Sim:
    outcome = decide(None, StartEpisode(cfg))
    assert not isinstance(outcome, Rejection)
    return _fold(outcome)


def test_scripted_episode_through_decide_and_apply_matches_play_scripted() -> None:
    cfg = Settings(matrix="stag-hunt", seed=21, beats=3)
    log: list[Event] = []
    sim: Sim | None = None
    commands = [StartEpisode(cfg, tuple(POLICIES))]
    for command in commands:
        outcome = decide(sim, command)
        assert not isinstance(outcome, Rejection)
        for event in outcome:
            sim = apply(sim, event)
            log.append(event)
    assert sim is not None
    for beat in range(3):
        outcome = decide(sim, PlayBeat(beat, tuple(scripted_orders(sim, POLICIES))))
        assert not isinstance(outcome, Rejection)
        for event in outcome:
            sim = apply(sim, event)
            log.append(event)
    outcome = decide(sim, EndEpisode("complete"))
    assert not isinstance(outcome, Rejection)
    log.extend(outcome)
    sim = apply(sim, outcome[0])
    expected = write_replay(play_scripted(cfg, POLICIES))
    assert write_replay(sim) == expected
    stored = [event_from_dict(json.loads(json.dumps(event_to_dict(e)))) for e in log]
    assert write_replay(_fold(stored)) == expected


def test_rejections_change_nothing() -> None:
    cfg = Settings(matrix="prisoners-dilemma", beats=1)
    assert isinstance(decide(None, PlayBeat(0, (hold(),) * 8)), Rejection)
    sim = _start(cfg)
    for command, code in (
        (PlayBeat(1, (hold(),) * 8), "wrong_beat"),
        (PlayBeat(0, (hunt(0),) + (hold(),) * 7), "invalid_target"),
        (PlayBeat(0, (gather(5),) + (hold(),) * 7), "token_out_of_range"),
        (EndEpisode("complete"), "beats_left"),
        (EndEpisode("bored"), "illegal_reason"),
        (StartEpisode(cfg), "already_started"),
    ):
        outcome = decide(sim, command)
        assert isinstance(outcome, Rejection) and outcome.code == code
    assert sim.tick == 0 and sim.events == []


def test_a_seat_without_an_order_plays_the_fallback() -> None:
    sim = _start(Settings(beats=1))
    outcome = decide(sim, PlayBeat(0, (None,) + (hold(),) * 7))
    assert isinstance(outcome, list) and isinstance(outcome[0], BeatPlayed)
    first = outcome[0].orders[0]
    assert first.source == "fallback" and first.intent == "gather"
    assert isinstance(decide(sim, EndEpisode("deadline")), list)
