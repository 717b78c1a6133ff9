"""Helpers for the Maths Warriors tests."""

from __future__ import annotations

from arena_engine.maths_warriors import ClockSettings, Context, GameState, Start, apply, decide
from arena_engine.maths_warriors.ai import Level, choose_move
from arena_engine.maths_warriors.commands import Command
from arena_engine.maths_warriors.dice import Roller
from arena_engine.maths_warriors.errors import Rejection
from arena_engine.maths_warriors.events import Event

NO_CLOCKS = ClockSettings(None, 0)


def play_ai_game(
    level1: Level | str, level2: Level | str, seed: int, max_moves: int = 300
) -> tuple[GameState, list[Event], list[tuple[Command, Context]]]:
    """A whole seeded game between two AI levels: final state, events, commands with contexts."""
    roller = Roller(seed * 7919 + 17)
    commands: list[tuple[Command, Context]] = [(Start(clocks=NO_CLOCKS), Context(0, seed))]
    state = GameState()
    events: list[Event] = []
    for step in range(max_moves + 1):
        command, context = commands[-1]
        outcome = decide(state, command, context)
        assert not isinstance(outcome, Rejection), (outcome, command)
        for event in outcome:
            state = apply(state, event)
            events.append(event)
        if state.over or step == max_moves:
            break
        level = level1 if state.to_move == 1 else level2
        move = choose_move(state, level, roller.next64())
        commands.append((move, Context(1000 * (step + 1), roller.next64())))
    return state, events, commands
