"""How a Maze result feeds its ladder: Elo with draws, ranked games between two people only.

The maths is the engine's (``arena_engine.rating.elo_maze``; docs/rules/maze.md, "Ratings"):
start 1000, K 24, floor 100; a win (forfeits and disconnects included) scores 1, and a draw
(inside the finish window, or the time limit) scores ½ each, so it moves the two ratings toward
each other. A casual game is recorded unrated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from arena_engine.rating import START_RATING, PairResult, elo_maze
from arena_engine.rating import tier as elo_tier
from google.protobuf.message import Message

from arena_games.contract import RANKED, MatchInfo, Result, StatisticsRow
from arena_games.maze.wire import GAME, REASON

CASUAL_GAME = "casual"


def score_of_first(result: Result) -> float:
    """Seat 1's score: 1 (ranked above seat 2), ½ (equal ranks: a draw) or 0."""
    first, second = result.of(1).rank, result.of(2).rank
    return 1.0 if first < second else 0.5 if first == second else 0.0


def rate(first: int, second: int, result: Result) -> PairResult:
    """The ratings of seats 1 and 2 after a rated result (ratings before)."""
    return elo_maze(first, second, score_of_first(result))


def unrated(match: MatchInfo) -> str:
    """Casual games; every Maze seat is a person (the seat plan takes no other kind)."""
    return CASUAL_GAME if match.mode != RANKED else ""


class MazeRatings:
    ladder: str | None = GAME
    elo = True
    reasons = frozenset(REASON)
    start = START_RATING
    units = None
    indices: Mapping[str, tuple[str, str]] = MappingProxyType({})

    def rate(self, before: Sequence[int], result: Result) -> tuple[int, ...]:
        after = rate(before[0], before[1], result)
        return (after.first_after, after.second_after)

    def statistics(self, match: MatchInfo, final: Message) -> list[StatisticsRow]:
        return []

    def unrated(self, match: MatchInfo) -> str:
        return unrated(match)

    def tier(self, rating: int) -> str:
        return elo_tier(rating)
