"""The benchmark's straightforward baseline must play the same game as the engine, or its
ratio would compare different work."""

from __future__ import annotations

from arena_engine.matrix_games import Settings, Sim
from arena_engine.matrix_games.episode import run_scripted

from bench.matrix_games_episodes import POLICIES, BaselineSim


def test_baseline_plays_the_same_episodes() -> None:
    for matrix in ("running-with-scissors", "bach-or-stravinsky"):
        cfg = Settings(matrix=matrix, seed=11, beats=2)
        fast = run_scripted(Sim(cfg, POLICIES), POLICIES)
        slow = run_scripted(BaselineSim(cfg, POLICIES), POLICIES)
        assert fast.events == slow.events
        assert fast.frames == slow.frames
        assert fast.state_hash() == slow.state_hash()
