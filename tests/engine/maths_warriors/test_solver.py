"""The complete move generator: sound (every expression is a legal capture), complete (agrees with
the naive enumeration), and shortest."""

from __future__ import annotations

import itertools
from fractions import Fraction

from arena_engine.maths_warriors import Context, GameState, Mind, Rejection, decide
from arena_engine.maths_warriors.dice import DICE, Dice
from arena_engine.maths_warriors.expression import ExpressionError, evaluate_tokens
from arena_engine.maths_warriors.moves import DieToken
from arena_engine.maths_warriors.naive import mind_targets, subset_values
from arena_engine.maths_warriors.ruleset import FirstPlayerPenalty, Ruleset
from arena_engine.maths_warriors.solver import capturable, legal_captures, reachable
from hypothesis import given, settings
from hypothesis import strategies as st

rows = st.tuples(*(st.one_of(st.none(), st.integers(1, die.sides)) for die in DICE))
full_rows = st.tuples(*(st.integers(1, die.sides) for die in DICE))
small_rows = rows.filter(lambda r: 2 <= sum(v is not None for v in r) <= 4)
targets = st.tuples(*(st.one_of(st.none(), st.integers(1, 20)) for _ in DICE))


def test_worked_position() -> None:
    found = capturable((2, 4, 6, 3, 11, 7), (1, 5, 8, 10, 10, 19))
    assert [d.value for d in found.mind] == ["D4", "D6", "D8", "D10", "D12", "D20"]
    assert [d.value for d in found.strength] == ["D4", "D6", "D8", "D10", "D12"]
    # One shortest expression per target: two dice make 1, 5, 8 and 10; 19 needs three.
    sizes = {s.target.value: len(s.dice) for s in found.mind_moves}
    assert sizes == {"D4": 2, "D6": 2, "D8": 2, "D10": 2, "D12": 2, "D20": 3}


def test_six_ones() -> None:
    found = capturable((1, 1, 1, 1, 1, 1), (3, 9, 10, 12, 2, 20))
    assert [d.value for d in found.mind] == ["D4", "D6", "D12"]
    nine = next(s for s in found.mind_moves if s.target.value == "D6")
    assert len(nine.dice) == 6 and nine.value_text() == "(1 + 1 + 1) * (1 + 1 + 1)"


def test_brackets_and_fractions_are_found() -> None:
    twenty = reachable((2, 3, 4), 20)  # only (2 + 3) * 4: one pair of brackets, 7 tokens
    assert twenty is not None and len(twenty) == 7 and evaluate_tokens(list(twenty)) == 20
    expression = reachable((3, 3, 8, 8), 24)  # the classic 8 / (3 - 8 / 3)
    assert expression is not None and evaluate_tokens(list(expression)) == 24
    assert reachable((1, 1), 3) is None


def test_penalty_variant_bars_mind_on_the_last_die() -> None:
    own, theirs = (2, 6, 5, 1, 7, 3), (None, None, 6, None, None, None)
    assert [d.value for d in capturable(own, theirs, mover_is_first=True).mind] == ["D8"]
    strict = Ruleset(first_player_penalty=FirstPlayerPenalty.STRENGTH_AND_MIND)
    barred = capturable(own, theirs, mover_is_first=True, ruleset=strict)
    assert barred.mind == [] and [d.value for d in barred.strength] == ["D8"]
    assert barred.strength_moves == [(DICE[4], DICE[2])]  # only the 7 beats a 6 strictly


@settings(max_examples=150, deadline=None)
@given(rows, targets)
def test_every_reported_capture_is_legal(own: Dice, theirs: Dice) -> None:
    state = GameState.position(own, theirs, first=2, to_move=1)
    for move in legal_captures(own, theirs, 1):
        result = decide(state, move, Context(seed=0))
        assert not isinstance(result, Rejection), (move, result)
        if isinstance(move, Mind):
            used = [t.die for t in move.tokens if isinstance(t, DieToken)]
            assert len(used) == len(set(used)) >= 2
            values = [t.value if isinstance(t, DieToken) else t for t in move.tokens]
            assert (
                evaluate_tokens(values)
                == theirs[DICE.index(next(d for d in DICE if d.value == move.target))]
            )


@settings(max_examples=150, deadline=None)
@given(small_rows, targets)
def test_agrees_with_the_naive_enumeration(own: Dice, theirs: Dice) -> None:
    found = capturable(own, theirs)
    assert {theirs[d.position] for d in found.mind} == mind_targets(own, theirs)


@settings(max_examples=80, deadline=None)
@given(small_rows, st.integers(1, 20))
def test_fewest_dice(own: Dice, target: int) -> None:
    values = [v for v in own if v is not None]
    by_mask = subset_values(values)
    sizes = [bin(m).count("1") for m, vals in by_mask.items() if Fraction(target) in vals]
    sizes = [s for s in sizes if s >= 2]
    theirs = (None, None, None, None, None, target)
    found = capturable(own, theirs)
    if not sizes:
        assert found.mind == []
    else:
        assert len(found.mind_moves[0].dice) == min(sizes)


@settings(max_examples=40, deadline=None)
@given(full_rows, full_rows)
def test_six_against_six(own: Dice, theirs: Dice) -> None:
    found = capturable(own, theirs)
    for solution in found.mind_moves:
        values = [t.value if isinstance(t, DieToken) else t for t in solution.tokens]
        assert evaluate_tokens(values) == theirs[solution.target.position]
        assert len(solution.tokens) <= 64


def _all_three_dice_strings(a: int, b: int, c: int) -> dict[Fraction, int]:
    """Shortest token count per value over every written form of three dice (independent of the
    solver: the strings are built from templates and evaluated by the evaluator)."""
    best: dict[Fraction, int] = {}
    for x, y, z in itertools.permutations((a, b, c)):
        for o1, o2 in itertools.product("+-*/", repeat=2):
            for tokens in (
                [x, o1, y, o2, z],
                ["(", x, o1, y, ")", o2, z],
                [x, o1, "(", y, o2, z, ")"],
            ):
                try:
                    value = evaluate_tokens(tokens)
                except ExpressionError:
                    continue
                if value not in best or len(tokens) < best[value]:
                    best[value] = len(tokens)
    return best


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 20), st.integers(1, 20), st.integers(1, 20))
def test_fewest_brackets_with_three_dice(a: int, b: int, c: int) -> None:
    for value, length in _all_three_dice_strings(a, b, c).items():
        if value.denominator != 1 or value < 1:
            continue
        found = reachable((a, b, c), int(value))
        assert found is not None and len(found) == length, (a, b, c, value, found)
