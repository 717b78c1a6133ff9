"""Sim.copy: an independent Sim in the same state (the game module keeps states as values)."""

from __future__ import annotations

from arena_engine.matrix_games import Settings, Sim
from arena_engine.matrix_games.episode import play_beat, scripted_orders
from arena_engine.matrix_games.replay import write_replay

POLICIES = ["counter", "tit-for-tat", "fixed-pick", "always-first"] * 2


def _played(settings: Settings, beats: int) -> Sim:
    sim = Sim(settings, POLICIES)
    for _ in range(beats):
        play_beat(sim, scripted_orders(sim, POLICIES))
    return sim


def test_advancing_a_copy_leaves_the_original_as_it_was() -> None:
    settings = Settings(matrix="running-with-scissors", seed=4242, beats=6)
    original = _played(settings, 3)
    before = (original.state_hash(), len(original.events), write_replay(original))
    copy = original.copy()
    for _ in range(3):
        play_beat(copy, scripted_orders(copy, POLICIES))
    copy.settle_complete()
    assert (original.state_hash(), len(original.events), write_replay(original)) == before
    assert not original.done and original.beat == 3
    # The copy went on exactly as the original would have.
    whole = _played(settings, 6)
    whole.settle_complete()
    assert copy.state_hash() == whole.state_hash()
    assert write_replay(copy) == write_replay(whole)


def test_a_copy_of_a_copy_is_independent_too() -> None:
    sim = _played(Settings(matrix="prisoners-dilemma", seed=10, beats=4), 2)
    first = sim.copy()
    second = first.copy()
    play_beat(second, scripted_orders(second, POLICIES))
    assert first.state_hash() == sim.state_hash() != second.state_hash()
    assert first.indices.conventions() == sim.indices.conventions()
