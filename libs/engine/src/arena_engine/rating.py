"""Rating maths of every game: pure functions of integers.

Maths Warriors (tournament reference §11): start 1000, K = 24, the winner gains
``round(24 × (1 − E))`` (halves up) and the loser loses as much, never below 100, no ceiling.
The Maze (docs/rules/maze.md): the same Elo for a win, and a draw scored ½ each, so a draw moves
both ratings towards each other by the same amount (halves away from zero), floor 100.
Digits (its rules, "Rating"): the player against a frozen army that counts 190 points lower,
K = 24 for the first 30 ranked combats of the season and 16 after, halves away from zero; the
army's owner is unaffected. Seasons: ``1000 + (rating − 1000) / 2``, the half-difference rounded
away from zero (so ratings equally far above and below 1000 move symmetrically).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

START_RATING = 1000
MW_K = 24
MW_FLOOR = 100
DIGITS_ARMY_HANDICAP = 190
DIGITS_K_EARLY = 24
DIGITS_K_LATE = 16
DIGITS_EARLY_COMBATS = 30
SEASON_CENTRE = 1000

#: Rank tiers by minimum rating (cosmetic), highest first.
TIERS: tuple[tuple[int, str], ...] = (
    (2000, "Grandmaster"),
    (1800, "Master"),
    (1600, "Diamond"),
    (1400, "Platinum"),
    (1200, "Gold"),
    (1000, "Silver"),
    (800, "Bronze"),
    (0, "Beginner"),
)


def expected_score(rating: float, opponent: float) -> float:
    """Elo expectation of ``rating`` against ``opponent``."""
    return float(1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0)))


def round_half_up(x: float) -> int:
    return math.floor(x + 0.5)


def round_half_away(x: float) -> int:
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


@dataclass(frozen=True)
class EloResult:
    delta: int
    winner_after: int
    loser_after: int


def elo_maths_warriors(winner: int, loser: int) -> EloResult:
    """A rated Maths Warriors result (forfeits and timeouts count like any win)."""
    delta = round_half_up(MW_K * (1.0 - expected_score(winner, loser)))
    return EloResult(delta, winner + delta, max(MW_FLOOR, loser - delta))


@dataclass(frozen=True)
class PairResult:
    delta: int  # what the first player gains (negative: loses); the second moves by -delta
    first_after: int
    second_after: int


def elo_maze(first: int, second: int, score: float) -> PairResult:
    """A rated Maze result; ``score`` is the first player's: 1 (won), 0.5 (draw) or 0 (lost)."""
    if score not in (0, 0.5, 1):
        raise ValueError(f"score must be 1, 0.5 or 0, not {score!r}")
    delta = round_half_away(MW_K * (score - expected_score(first, second)))
    return PairResult(delta, max(MW_FLOOR, first + delta), max(MW_FLOOR, second - delta))


@dataclass(frozen=True)
class DigitsResult:
    delta: int
    after: int


def digits_k(ranked_combats_before: int) -> int:
    return DIGITS_K_EARLY if ranked_combats_before < DIGITS_EARLY_COMBATS else DIGITS_K_LATE


def elo_digits(
    rating: int, army_rating: int, score: float | Fraction, ranked_combats_before: int
) -> DigitsResult:
    """One ranked Digits combat: ``score`` is 1 (win), 0.5 (draw) or 0 (loss)."""
    if score not in (0, 0.5, 1):
        raise ValueError(f"score must be 1, 0.5 or 0, not {score!r}")
    if ranked_combats_before < 0:
        raise ValueError("ranked_combats_before must be >= 0")
    expected = expected_score(rating, army_rating - DIGITS_ARMY_HANDICAP)
    delta = round_half_away(digits_k(ranked_combats_before) * (float(score) - expected))
    return DigitsResult(delta, rating + delta)


def season_reset(rating: int) -> int:
    """The rating at the start of a new season (applied once, however many months passed)."""
    diff = rating - SEASON_CENTRE
    half = (abs(diff) + 1) // 2
    return SEASON_CENTRE + (half if diff >= 0 else -half)


def tier(rating: int) -> str:
    for minimum, name in TIERS:
        if rating >= minimum:
            return name
    return TIERS[-1][1]
