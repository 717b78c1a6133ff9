"""The per-beat observation: the reference's keys, and nothing a seat may not know."""

from __future__ import annotations

import json

from arena_engine.matrix_games import Settings, Sim, play_scripted
from arena_engine.matrix_games.episode import play_beat
from arena_engine.matrix_games.observation import build_observation, final_message, welcome_message
from arena_engine.matrix_games.orders import gather, hold
from arena_engine.matrix_games.policies import scripted_order

KEYS = [
    "type", "protocol", "slot", "name", "camp", "variant", "beat", "beats", "ticksPerBeat",
    "tick", "board", "rules", "you", "zones", "visibleTokens", "cogs", "log", "indices",
    "legal", "notes",
]  # fmt: skip


def test_keys_and_hidden_information() -> None:
    sim = Sim(Settings(matrix="bach-or-stravinsky", seed=77, beats=2))
    play_beat(sim, [gather(0, notes="secret plan")] + [hold()] * 7)
    obs = build_observation(sim, 4)
    assert list(obs) == KEYS
    assert obs["camp"] == "column" and obs["beat"] == 1 and obs["tick"] == 50
    assert obs["legal"]["targets"] == ["Ash", "Birch", "Cedar", "Dune"]
    assert [c["eligible"] for c in obs["cogs"]] == [True] * 4 + [False] * 3
    assert [z["token"] for z in obs["zones"]] == ["bach", "stravinsky", "mixed"]
    text = json.dumps(obs)
    assert "secret plan" not in text and "77" not in json.dumps(obs["you"])
    assert build_observation(sim, 0)["notes"] == "secret plan"


def test_seen_ticks_ago_is_at_least_one_and_unseen_inventories_are_null() -> None:
    sim = Sim(Settings(seed=3, beats=1))
    play_beat(sim, [hold()] * 8)
    obs = build_observation(sim, 0)
    for entry in obs["cogs"]:
        assert entry["seenTicksAgo"] == -1 or entry["seenTicksAgo"] >= 1
        assert (entry["inv"] is None) == (entry["mix"] is None)
    far = [c for c in obs["cogs"] if c["seenTicksAgo"] == -1]
    assert far and all(c["inv"] is None for c in far)


def test_policies_read_only_the_observation() -> None:
    sim = play_scripted(Settings(matrix="chicken", seed=5, beats=2), ["counter"] * 8)
    obs = json.loads(json.dumps(build_observation(sim, 2)))  # a frozen copy, no Sim in reach
    order = scripted_order(obs, "counter")
    assert order.intent in ("gather", "hunt", "hold")
    assert scripted_order({}, "always-first").intent == "gather"  # missing fields degrade


def test_welcome_and_final_messages() -> None:
    sim = play_scripted(Settings(matrix="bach-or-stravinsky", seed=1, beats=1), ["counter"] * 8)
    assert welcome_message(sim, 5) == {
        "type": "welcome", "protocol": "matrix.player.v1", "slot": 5, "name": "Fern",
        "camp": "column", "variant": "bach-or-stravinsky", "beats": 1, "ticksPerBeat": 50,
    }  # fmt: skip
    final = final_message(sim, 5)
    assert final["reason"] == "complete" and final["ending"] == "full_match"
    assert final["scores"] == [cp / 100 for cp in sim.score]
    assert final["result"]["ticks"] == 50
