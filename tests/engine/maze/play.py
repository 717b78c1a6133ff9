"""Helpers of the Maze tests: start a match, fold outcomes, play scripted games."""

from __future__ import annotations

from collections.abc import Iterable

from arena_engine.maze import (
    Action,
    Advance,
    Context,
    Event,
    Explorer,
    MazeSettings,
    MazeState,
    Rejection,
    Role,
    Setup,
    Start,
    Submit,
    apply,
    decide,
    project,
)
from arena_engine.maze.views import PlayerView


def fold(state: MazeState | None, events: Iterable[Event]) -> MazeState:
    for event in events:
        state = apply(state, event)
    assert state is not None
    return state


def started(
    settings: MazeSettings | None = None, seed: int = 0, setup: Setup | None = None, now: int = 0
) -> tuple[MazeState, list[Event]]:
    events = decide(None, Start(settings or MazeSettings(), setup), Context(now, seed))
    assert isinstance(events, list), events
    return fold(None, events), events


def submit(state: MazeState, role: Role, action: Action, t: int) -> tuple[MazeState, list[Event]]:
    events = decide(state, Submit(role, action), Context(now_ms=t))
    assert not isinstance(events, Rejection), events
    return fold(state, events), events


def explorer_game(
    settings: MazeSettings, seed: int, max_rounds: int = 2_000
) -> tuple[MazeState, list[Event]]:
    """Two explorers, each acting once per cooldown (player 1 one millisecond first)."""
    state, log = started(settings, seed)
    bots = {1: Explorer(1), 2: Explorer(2)}
    t = settings.countdown_ms
    for _ in range(max_rounds):
        if state.result is not None:
            break
        for p in (1, 2):
            view = project(state, p)
            assert isinstance(view, PlayerView)
            bots[p].observe(view)
            action = bots[p].choose()
            if action is not None:
                state, events = submit(state, p, action, t + p)
                log += events
        t += settings.cooldown_ms
        events = decide(state, Advance(), Context(now_ms=t))
        assert isinstance(events, list)
        state = fold(state, events)
        log += events
    return state, log
