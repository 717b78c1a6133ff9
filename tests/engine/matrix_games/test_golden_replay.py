"""The reference's own golden replay, regenerated from its recorded orders, byte for byte."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
from arena_engine.matrix_games import EpisodeLog, Settings, Sim, play_scripted, read_replay
from arena_engine.matrix_games.episode import play_beat, replay_episode
from arena_engine.matrix_games.errors import ReplayError
from arena_engine.matrix_games.replay import orders_of_replay, settings_of_replay, write_replay

WORST_CASE_KINDS = [
    "always-first",
    "always-second",
    "counter",
    "tit-for-tat",
    "always-second",
    "always-first",
    "fixed-pick",
    "counter",
]


def _regenerate(golden: bytes) -> Sim:
    doc = read_replay(golden)
    sim = Sim(settings_of_replay(doc), doc["policyNames"])
    for orders in orders_of_replay(doc):
        play_beat(sim, orders)
    sim.settle_complete()
    return sim


def test_recorded_orders_give_the_golden_replay_byte_for_byte(golden_bytes: bytes) -> None:
    written = write_replay(_regenerate(golden_bytes))
    assert len(written) == 141_486
    assert written == golden_bytes


def test_key_outputs_of_the_golden_episode(golden_bytes: bytes) -> None:
    sim = _regenerate(golden_bytes)
    assert sim.score == [2209, 1543, 627, 1257, 628, 578, 1792, 1164]
    assert sim.indices.interactions == 22
    assert sim.interactions == [8, 8, 4, 5, 4, 3, 7, 5]
    assert sim.indices.conventions() == [[11, 2], [2, 7]]
    assert sim.indices.coop_rate(sim.variant) == 0.5232067510548524
    closes = [e for e in sim.events if e[0] == "beatclose"]
    assert closes[4][3] == [2209, 1225, 627, 739, 283, 578, 1230, 1164]
    assert closes[4][4] == 18
    first = next(e for e in sim.events if e[0] == "beam" and e[7] >= 0)
    assert first == ("beam", 55, 1, 19, 5, 3, 2, 7)


def test_scripted_baselines_give_the_recorded_orders(golden_bytes: bytes) -> None:
    recorded = orders_of_replay(read_replay(golden_bytes))
    log = EpisodeLog(Settings(matrix="prisoners-dilemma", seed=10, beats=6), [])
    play_scripted(log.settings, WORST_CASE_KINDS, log=log)
    ours = [[(o.intent, o.token, o.target) for o in beat] for beat in log.beats]
    theirs = [[(o.intent, o.token, o.target) for o in beat] for beat in recorded]
    assert ours == theirs


def test_compact_episode_form_regenerates_the_replay(golden_bytes: bytes) -> None:
    doc = read_replay(golden_bytes)
    log = EpisodeLog(settings_of_replay(doc), doc["policyNames"], orders_of_replay(doc))
    log.reason = "complete"
    stored = json.loads(json.dumps(log.to_json()))  # through the event log's JSON
    assert write_replay(replay_episode(EpisodeLog.from_json(stored))) == golden_bytes


def test_newer_writer_form_drops_notes(golden_bytes: bytes) -> None:
    doc = json.loads(write_replay(_regenerate(golden_bytes), include_notes=False))
    orders = [e for e in doc["events"] if e["k"] == "order"]
    assert len(orders) == 48
    assert all("notes" not in e for e in orders)
    assert list(orders[0])[-1] == "latencyMs"


def test_compressed_copies_read_the_same_and_garbage_is_a_typed_error(golden_bytes: bytes) -> None:
    doc = read_replay(golden_bytes)
    assert read_replay(gzip.compress(golden_bytes)) == doc
    assert read_replay(zlib.compress(golden_bytes)) == doc
    for bad, code in ((b"\xff\xfe", "malformed_replay"), (b'{"protocol": "x"}', "wrong_protocol")):
        with pytest.raises(ReplayError) as err:
            read_replay(bad)
        assert err.value.code == code
