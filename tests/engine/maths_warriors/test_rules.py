"""Rulings of the tournament reference, the ruleset options, and rejections that change nothing."""

from __future__ import annotations

import pytest
from arena_engine.maths_warriors import (
    Context,
    DieToken,
    ErrorCode,
    GameState,
    MathsWarriorsError,
    Mind,
    Rejection,
    Ruleset,
    Skip,
    Strength,
    apply,
    decide,
    run,
)
from arena_engine.maths_warriors.dice import DICE, Roller
from arena_engine.maths_warriors.moves import Move, move_from_dict, move_to_dict
from arena_engine.maths_warriors.rules import first_player, timeout_winner
from arena_engine.maths_warriors.ruleset import (
    AllEqualStart,
    FirstPlayerCompare,
    FirstPlayerPenalty,
    TimeoutWinner,
)
from hypothesis import given, settings
from hypothesis import strategies as st

WORKED = GameState.position((2, 4, 6, 3, 11, 7), (1, 5, 8, 10, 10, 19), first=2, to_move=1)
LAST_DIE = GameState.position(
    (2, 6, 5, 1, 7, 3), (None, None, 6, None, None, None), first=1, to_move=1
)


def d(name: str, value: int) -> DieToken:
    return DieToken(name, value)


def outcome(state: GameState, move: Move, seed: int = 0) -> list[object] | Rejection:
    return decide(state, move, Context(seed=seed))  # type: ignore[return-value]


def code(state: GameState, move: Move) -> ErrorCode | None:
    result = outcome(state, move)
    return result.code if isinstance(result, Rejection) else None


def test_worked_turn_of_the_rulebook() -> None:
    move = Mind(1, "D20", (d("D12", 11), "+", d("D8", 6), "+", d("D4", 2)))
    events = outcome(WORKED, move, seed=3)
    assert not isinstance(events, Rejection)
    state = WORKED
    for event in events:
        state = apply(state, event)  # type: ignore[arg-type]
    assert state.dice2[5] is None
    assert state.to_move == 2 and state.move_count == 1
    # Unused dice are untouched; used dice were rerolled within their sides.
    assert (state.dice1[1], state.dice1[3], state.dice1[5]) == (4, 3, 7)
    for die in (DICE[0], DICE[2], DICE[4]):
        value = state.dice1[die.position]
        assert value is not None and 1 <= value <= die.sides


@pytest.mark.parametrize(
    ("move", "expected"),
    [
        (Skip(2), ErrorCode.NOT_YOUR_TURN),
        (Strength(1, ("D12",), "D20"), ErrorCode.THRESHOLD_NOT_MET),
        (Strength(1, ("D12", "D4"), "D8"), ErrorCode.STRENGTH_NEEDS_ONE_DIE),
        (Strength(1, ("D7",), "D8"), ErrorCode.UNKNOWN_DIE),
        (Strength(1, ("D12",), "D3"), ErrorCode.UNKNOWN_DIE),
        (Mind(1, "D12", (d("D12", 11),)), ErrorCode.MIND_NEEDS_TWO_DICE),
        (Mind(1, "D8", (d("D6", 4), "+", d("D6", 4))), ErrorCode.DIE_USED_TWICE),
        (Mind(1, "D8", (d("D6", 5), "+", d("D10", 3))), ErrorCode.VALUE_MISMATCH),
        (Mind(1, "D8", (d("D6", 4), "+", d("D10", 3))), ErrorCode.NOT_EQUAL_TARGET),
        (Mind(1, "D8", (d("D6", 4), "/", d("D4", 2), "-", d("D4", 2))), ErrorCode.DIE_USED_TWICE),
        (Mind(1, "D8", (d("D6", 4), "+", 4)), ErrorCode.MIND_NEEDS_TWO_DICE),
        (Mind(1, "D8", (d("D6", 4), "+", 4, "+", d("D4", 2))), ErrorCode.MALFORMED_EXPRESSION),
        (Mind(1, "D8", (d("D6", 4), "+")), ErrorCode.MIND_NEEDS_TWO_DICE),
        (Mind(1, "D8", (d("D6", 4), "+", "(", d("D4", 2))), ErrorCode.UNBALANCED_PARENTHESES),
        (Mind(1, "D8", (d("D10", 3), "/", d("D4", 2))), ErrorCode.NON_INTEGER_RESULT),
        (Mind(1, "D8", (d("D6", 4), d("D4", 2))), ErrorCode.MALFORMED_EXPRESSION),
    ],
)
def test_rejections(move: Move, expected: ErrorCode) -> None:
    assert code(WORKED, move) is expected


def test_division_by_zero_in_a_mind_attack() -> None:
    state = GameState.position((2, 2, 6, 3, 11, 7), (1, 5, 8, 10, 10, 19), first=2, to_move=1)
    move = Mind(1, "D8", (d("D8", 6), "/", "(", d("D4", 2), "-", d("D6", 2), ")"))
    assert code(state, move) is ErrorCode.DIVISION_BY_ZERO


def test_first_player_penalty() -> None:
    assert code(LAST_DIE, Strength(1, ("D6",), "D8")) is ErrorCode.THRESHOLD_NOT_MET
    assert code(LAST_DIE, Strength(1, ("D12",), "D8")) is None
    mind = Mind(1, "D8", (d("D4", 2), "*", d("D20", 3)))
    assert code(LAST_DIE, mind) is None
    strict = Ruleset(first_player_penalty=FirstPlayerPenalty.STRENGTH_AND_MIND)
    from dataclasses import replace

    assert code(replace(LAST_DIE, ruleset=strict), mind) is ErrorCode.FIRST_PLAYER_PENALTY
    # A wrong Mind attack is reported as wrong before the penalty.
    wrong = Mind(1, "D8", (d("D4", 2), "+", d("D20", 3)))
    assert code(replace(LAST_DIE, ruleset=strict), wrong) is ErrorCode.NOT_EQUAL_TARGET
    # The second player has no penalty.
    assert code(replace(LAST_DIE, first=2), Strength(1, ("D6",), "D8")) is None


def test_winning_capture_ends_the_game_without_passing_the_turn() -> None:
    events = outcome(LAST_DIE, Strength(1, ("D12",), "D8"))
    assert not isinstance(events, Rejection)
    state = LAST_DIE
    for event in events:
        state = apply(state, event)  # type: ignore[arg-type]
    assert state.over and state.winner == 1 and state.to_move == 1
    assert code(state, Skip(1)) is ErrorCode.GAME_OVER


@pytest.mark.parametrize(
    ("dice1", "dice2", "compare", "first"),
    [
        ((3, 5, 2, 9, 7, 14), (1, 6, 8, 4, 12, 20), FirstPlayerCompare.SORTED_VALUES, 2),
        ((3, 5, 2, 9, 7, 14), (1, 6, 8, 4, 12, 20), FirstPlayerCompare.BY_DIE_TYPE, 2),
        ((1, 6, 2, 9, 7, 14), (1, 5, 8, 4, 12, 20), FirstPlayerCompare.SORTED_VALUES, 1),
        ((1, 6, 2, 9, 7, 14), (1, 5, 8, 4, 12, 20), FirstPlayerCompare.BY_DIE_TYPE, 2),
        ((4, 4, 4, 4, 4, 4), (4, 4, 4, 4, 4, 4), FirstPlayerCompare.SORTED_VALUES, 1),
    ],
)
def test_first_player(
    dice1: tuple[int, ...], dice2: tuple[int, ...], compare: FirstPlayerCompare, first: int
) -> None:
    assert first_player(dice1, dice2, Ruleset(first_player_compare=compare)).player == first


def test_rolloff_is_seeded_and_recorded() -> None:
    rules = Ruleset(all_equal_start=AllEqualStart.ROLLOFF)
    same = (4, 4, 4, 4, 4, 4)
    with pytest.raises(ValueError, match="seed"):
        first_player(same, same, rules)
    results = {first_player(same, same, rules, Roller(seed)) for seed in range(40)}
    assert {r.player for r in results} == {1, 2}
    for r in results:
        r1, r2 = r.rolloff[-1]
        assert r.player == (1 if r1 > r2 else 2)
        assert all(a == b for a, b in r.rolloff[:-1])
    assert first_player(same, same, rules, Roller(7)) == first_player(same, same, rules, Roller(7))


@pytest.mark.parametrize(
    ("r1", "r2", "first", "rule", "winner"),
    [
        (3, 2, 1, TimeoutWinner.FEWER_OWN_DICE, 2),
        (2, 3, 1, TimeoutWinner.FEWER_OWN_DICE, 1),
        (4, 4, 1, TimeoutWinner.FEWER_OWN_DICE, 2),
        (4, 4, 2, TimeoutWinner.FEWER_OWN_DICE, 1),
        (3, 2, 1, TimeoutWinner.FEWER_OPPONENT_DICE, 1),
        (4, 4, 2, TimeoutWinner.FEWER_OPPONENT_DICE, 1),
    ],
)
def test_timeout_winner(r1: int, r2: int, first: int, rule: TimeoutWinner, winner: int) -> None:
    assert timeout_winner(r1, r2, first, Ruleset(timeout_winner=rule)) == winner


def test_ruleset_round_trip_and_bad_options() -> None:
    rules = Ruleset(timeout_winner=TimeoutWinner.FEWER_OPPONENT_DICE)
    assert Ruleset.from_dict(rules.to_dict()) == rules
    assert Ruleset.from_dict({}) == Ruleset()
    assert Ruleset().tag == "2026.07.31"
    for bad in ({"timeout_winner": "coin_flip"}, {"no_such_option": "x"}, {"tag": "1999"}):
        with pytest.raises(MathsWarriorsError) as info:
            Ruleset.from_dict(bad)
        assert info.value.code is ErrorCode.INVALID_RULESET


def test_move_wire_format_round_trip() -> None:
    for move in (
        Skip(1),
        Strength(2, ("D12",), "D20"),
        Mind(1, "D20", (d("D12", 11), "+", "(", d("D8", 6), "-", d("D4", 2), ")")),
    ):
        assert move_from_dict(move_to_dict(move)) == move
    for bad in ({"player": 1, "kind": "fly"}, {"player": "1", "kind": "skip"}, {"kind": "mind"}):
        with pytest.raises(MathsWarriorsError) as info:
            move_from_dict(bad)
        assert info.value.code is ErrorCode.INVALID_COMMAND


names = st.sampled_from([d.value for d in DICE] + ["D7"])
die_tokens = st.builds(DieToken, names, st.integers(0, 21))
tokens = st.lists(
    st.one_of(die_tokens, st.sampled_from(["+", "-", "*", "/", "(", ")", "%"])), max_size=70
)
moves = st.one_of(
    st.builds(Skip, st.integers(0, 3)),
    st.builds(Strength, st.integers(1, 2), st.lists(names, max_size=3).map(tuple), names),
    st.builds(Mind, st.integers(1, 2), names, tokens.map(tuple)),
)
dice_rows = st.tuples(*(st.one_of(st.none(), st.integers(1, die.sides)) for die in DICE))


@settings(max_examples=400, deadline=None)
@given(dice_rows, dice_rows, st.integers(1, 2), st.integers(1, 2), moves, st.booleans())
def test_a_rejected_move_changes_nothing(
    dice1: tuple[int | None, ...],
    dice2: tuple[int | None, ...],
    first: int,
    to_move: int,
    move: Move,
    over: bool,
) -> None:
    state = GameState.position(dice1, dice2, first=first, to_move=to_move, over=over)
    before = repr(state)
    result = decide(state, move, Context(seed=1))
    assert repr(state) == before  # frozen, and decide never mutates
    if isinstance(result, Rejection):
        assert isinstance(result.code, ErrorCode)
        after, log, rejections = run([(move, Context(seed=1))], state)
        assert after == state and log == [] and rejections == [result]
    else:
        # An accepted move is legal: right player, a live game, and a live target.
        assert not over and move.player == to_move
