"""How a Maths Warriors result feeds its ladder: Elo between two people, ranked games only.

The maths is the engine's (``arena_engine.rating``: start 1000, K 24, halves up, floor 100, no
ceiling; the tournament reference §11): forfeits and timeouts are rated like any win, there are
no draws, a casual game or a game with the AI is recorded unrated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from arena_engine.rating import START_RATING, EloResult, elo_maths_warriors
from arena_engine.rating import tier as elo_tier
from google.protobuf.message import Message

from arena_games.contract import RANKED, MatchInfo, Result, SeatKind, StatisticsRow
from arena_games.maths_warriors.wire import GAME, PROTOCOL_REASON

__all__ = ["START_RATING", "EloResult", "MathsWarriorsRatings", "rate", "tier"]

CASUAL_GAME = "casual"
AI_SEAT = "ai_seat"


def rate(winner: int, loser: int) -> EloResult:
    """The ratings after a rated win of ``winner`` over ``loser`` (ratings before)."""
    return elo_maths_warriors(winner, loser)


def tier(rating: int) -> str:
    """The cosmetic rank tier of a rating (Beginner … Grandmaster)."""
    return elo_tier(rating)


def unrated(match: MatchInfo) -> str:
    if match.mode != RANKED:
        return CASUAL_GAME
    if any(seat.kind is not SeatKind.HUMAN for seat in match.seats):
        return AI_SEAT
    return ""


def rate_seats(before: Sequence[int], result: Result) -> tuple[int, ...]:
    """The two seats' ratings after a rated result (there are no draws)."""
    (winner,) = result.winners
    loser = 3 - winner
    after = rate(before[winner - 1], before[loser - 1])
    ratings = {winner: after.winner_after, loser: after.loser_after}
    return (ratings[1], ratings[2])


class MathsWarriorsRatings:
    ladder: str | None = GAME
    elo = True
    reasons = frozenset(PROTOCOL_REASON.values())
    start = START_RATING
    units = None
    indices: Mapping[str, tuple[str, str]] = MappingProxyType({})

    def rate(self, before: Sequence[int], result: Result) -> tuple[int, ...]:
        return rate_seats(before, result)

    def statistics(self, match: MatchInfo, final: Message) -> list[StatisticsRow]:
        return []

    def unrated(self, match: MatchInfo) -> str:
        return unrated(match)

    def tier(self, rating: int) -> str:
        return tier(rating)
