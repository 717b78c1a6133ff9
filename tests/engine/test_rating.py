"""Rating maths: Maths Warriors Elo, Digits' variant, season reset and rank tiers."""

from __future__ import annotations

import pytest
from arena_engine.rating import (
    MW_FLOOR,
    elo_digits,
    elo_maths_warriors,
    round_half_away,
    round_half_up,
    season_reset,
    tier,
)
from arena_engine.rating_vectors import run_case
from hypothesis import given
from hypothesis import strategies as st

ratings = st.integers(MW_FLOOR, 3000)


@pytest.mark.parametrize(
    ("winner", "loser", "delta", "winner_after", "loser_after"),
    [
        (1000, 1000, 12, 1012, 988),
        (1200, 1000, 6, 1206, 994),
        (1000, 1200, 18, 1018, 1182),
        (130, 100, 11, 141, 100),
        (2400, 1000, 0, 2400, 1000),
    ],
)
def test_maths_warriors(
    winner: int, loser: int, delta: int, winner_after: int, loser_after: int
) -> None:
    result = elo_maths_warriors(winner, loser)
    assert (result.delta, result.winner_after, result.loser_after) == (
        delta,
        winner_after,
        loser_after,
    )


@given(ratings, ratings)
def test_maths_warriors_properties(winner: int, loser: int) -> None:
    result = elo_maths_warriors(winner, loser)
    assert 0 <= result.delta <= 24
    assert result.winner_after == winner + result.delta
    assert result.loser_after == max(MW_FLOOR, loser - result.delta)
    # Beating a stronger player is worth at least as much as beating a weaker one.
    assert elo_maths_warriors(winner, loser + 50).delta >= result.delta


def test_digits() -> None:
    assert elo_digits(1000, 1000, 1, 0).delta == 6
    assert elo_digits(1000, 1000, 0.5, 0).delta == -6
    assert elo_digits(1000, 1000, 0, 0).delta == -18
    assert elo_digits(1000, 1000, 1, 30).delta == 4
    assert elo_digits(1000, 1000, 1, 29).delta == 6
    with pytest.raises(ValueError):
        elo_digits(1000, 1000, 0.7, 0)


def test_rounding() -> None:
    assert [round_half_up(x) for x in (0.5, 1.5, -0.5, 2.4)] == [1, 2, 0, 2]
    assert [round_half_away(x) for x in (0.5, 1.5, -0.5, -2.5, 2.4)] == [1, 2, -1, -3, 2]


@pytest.mark.parametrize(
    ("rating", "after"),
    [(1400, 1200), (800, 900), (1000, 1000), (1001, 1001), (999, 999), (1003, 1002)],
)
def test_season_reset(rating: int, after: int) -> None:
    assert season_reset(rating) == after


@pytest.mark.parametrize(
    ("rating", "name"),
    [
        (0, "Beginner"),
        (799, "Beginner"),
        (800, "Bronze"),
        (1000, "Silver"),
        (1199, "Silver"),
        (1200, "Gold"),
        (1400, "Platinum"),
        (1600, "Diamond"),
        (1800, "Master"),
        (2000, "Grandmaster"),
        (3000, "Grandmaster"),
    ],
)
def test_tiers(rating: int, name: str) -> None:
    assert tier(rating) == name


def test_vector_handler() -> None:
    assert run_case({"op": "season_reset", "rating": 1400}) == {"after": 1200}
    assert run_case({"op": "tier", "rating": 1250}) == {"tier": "Gold"}
    with pytest.raises(ValueError):
        run_case({"op": "glicko"})
    with pytest.raises(ValueError):
        run_case({"op": "elo_maths_warriors", "winner": "1000", "loser": 1000})


def test_maze_wins_are_rated_like_maths_warriors_and_draws_score_a_half() -> None:
    from arena_engine.rating import elo_maze

    # A win: the same delta as Maths Warriors' Elo, by the first player's score 1 or 0.
    for a, b in ((1000, 1000), (1350, 1000), (1000, 1350)):
        won = elo_maze(a, b, 1)
        assert (won.delta, won.first_after, won.second_after) == (
            elo_maths_warriors(a, b).delta,
            elo_maths_warriors(a, b).winner_after,
            elo_maths_warriors(a, b).loser_after,
        )
        lost = elo_maze(b, a, 0)
        assert (lost.first_after, lost.second_after) == (won.second_after, won.first_after)
    # A draw: 24 × (½ − E). Equal ratings stay; 1200 against 1000 gives E = 0.7597 → 6.23.
    assert elo_maze(1000, 1000, 0.5).delta == 0
    higher = elo_maze(1200, 1000, 0.5)
    assert (higher.delta, higher.first_after, higher.second_after) == (-6, 1194, 1006)
    lower = elo_maze(1000, 1200, 0.5)
    assert (lower.delta, lower.first_after, lower.second_after) == (6, 1006, 1194)
    # The floor holds for both sides.
    assert elo_maze(100, 100, 0).first_after == 100
    with pytest.raises(ValueError):
        elo_maze(1000, 1000, 0.25)
