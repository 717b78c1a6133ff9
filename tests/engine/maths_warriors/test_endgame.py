"""Exact endgames, and the impossible level playing them perfectly."""

from __future__ import annotations

import pytest
from arena_engine.maths_warriors import Context, GameState, Rejection, Ruleset, Skip, decide
from arena_engine.maths_warriors.ai import Level, candidates, choose_move
from arena_engine.maths_warriors.dice import DICE, Dice, Roller, roll_all
from arena_engine.maths_warriors.endgame import capture_value, skip_value, win_chance

RULES = Ruleset()


def row(**values: int) -> Dice:
    return tuple(values.get(d.value) for d in DICE)


@pytest.mark.parametrize(
    ("own", "theirs", "first", "chance"),
    [
        (row(D6=5), row(D8=4), True, 1.0),  # 5 > 4
        (row(D6=4), row(D8=4), True, 0.0),  # the penalty: 4 is not > 4, and 4 >= 4 answers
        (row(D6=4), row(D8=4), False, 1.0),
        (row(D4=3), row(D6=4, D12=9), True, 0.0),  # cannot capture; either of theirs takes a 3
        (row(D4=2, D6=3), row(D20=6), True, 1.0),  # 2 * 3 = 6 by Mind
    ],
)
def test_known_values(own: Dice, theirs: Dice, first: bool, chance: float) -> None:
    assert win_chance(own, theirs, mover_first=first, rules=RULES, clock=True) == chance


def test_only_small_positions_are_solved() -> None:
    assert (
        win_chance(
            row(D4=1, D6=2, D8=3), row(D10=4, D12=5), mover_first=True, rules=RULES, clock=True
        )
        is None
    )


def positions(count: int) -> list[GameState]:
    """Seeded positions of one or two dice against one or two."""
    roller = Roller(77)
    found = []
    for i in range(count):
        rows = []
        for keep in (1 + roller.below(2), 1 + roller.below(2)):
            rolled = roll_all(roller)
            kept = set()
            while len(kept) < keep:
                kept.add(roller.below(6))
            rows.append(tuple(v if j in kept else None for j, v in enumerate(rolled)))
        found.append(GameState.position(rows[0], rows[1], first=1 + i % 2, to_move=1))
    return found


@pytest.mark.parametrize("state", positions(12))
def test_consistency_and_perfect_play(state: GameState) -> None:
    own, theirs = state.dice1, state.dice2
    first = state.first == 1
    total = win_chance(own, theirs, mover_first=first, rules=RULES, clock=False)
    assert total is not None
    values = [
        capture_value(
            own,
            theirs,
            c.target.position,
            tuple(d.position for d in c.used),
            mover_first=first,
            rules=RULES,
            clock=False,
        )
        for c in candidates(state)
    ]
    skip = skip_value(own, theirs, mover_first=first, rules=RULES, clock=False)
    assert total == pytest.approx(max([skip, *values]))
    move = choose_move(state, Level.IMPOSSIBLE, seed=1)
    assert not isinstance(decide(state, move, Context(seed=0)), Rejection)
    if isinstance(move, Skip):
        assert skip == pytest.approx(total)
    else:
        chosen = next(v for c, v in zip(candidates(state), values, strict=True) if c.move == move)
        assert chosen == pytest.approx(total)
