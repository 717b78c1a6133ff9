"""The scripted explorer finishes games against itself, from its own view only."""

from __future__ import annotations

from arena_engine.maze import Explorer, MazeSettings, Setup, project
from arena_engine.maze.events import Exited, PlayersMet
from arena_engine.maze.views import PlayerView

from tests.engine.maze.play import explorer_game, started, submit


def test_explorers_finish_every_game_by_their_exits() -> None:
    outcomes = []
    met = 0
    for seed in range(12):
        state, log = explorer_game(MazeSettings(width=11, height=11), seed)
        assert state.result is not None, seed
        assert state.result.reason in ("exit", "window")
        assert any(isinstance(e, Exited) for e in log)
        outcomes.append(state.result.winner)
        met += sum(isinstance(e, PlayersMet) for e in log)
    assert {1, 2} <= set(outcomes)  # neither seat always wins
    assert met > 0


def test_explorers_find_their_way_in_a_big_maze() -> None:
    state, _ = explorer_game(MazeSettings(width=31, height=31, loops_percent=5), seed=3)
    assert state.result is not None and state.result.reason in ("exit", "window")


def test_an_explorer_drops_the_opponent_s_key_that_blocks_its_own() -> None:
    # Player 2's key lies between player 1 and player 1's own key: walking there picks it up.
    corridor = Setup.from_dict(
        {
            "maze": {"width": 6, "height": 1, "cells": [2, 10, 10, 10, 10, 8]},
            "objects": [
                {"kind": "key", "owner": 2, "cell": 1},
                {"kind": "key", "owner": 1, "cell": 3},
                {"kind": "exit", "owner": 1, "cell": 0, "dir": "W"},
                {"kind": "exit", "owner": 2, "cell": 5, "dir": "E"},
            ],
            "start": {"1": 0, "2": 5},
        }
    )
    state, _ = started(MazeSettings(cooldown_ms=0, countdown_ms=0), setup=corridor)
    bot = Explorer(1)
    actions = []
    for t in range(1, 40):
        view = project(state, 1)
        assert isinstance(view, PlayerView)
        bot.observe(view)
        action = bot.choose()
        if action is None or state.position.player(1).exited:
            break
        actions.append(action)
        state, _ = submit(state, 1, action, t)
    assert state.position.player(1).exited
    assert [type(a).__name__ for a in actions].count("Drop") == 1
    assert state.position.keys[1].cell == 1  # player 2's key left where it was dropped
