"""How a Matrix Games result feeds its ladder: statistics per variant, no Elo.

Eight seats of people and scripted policies play for points; an Elo between them would mean
little (the reference ranks policies by their mean score and indices). The ladder
``matrix-games`` keeps, per variant, one row for each player and each scripted policy, summed
over their episodes; :func:`statistics` gives the rows one finished episode adds, and
``MatrixGamesRatings.statistics`` the same as the contract's rows (the board is the variant; the
score centipoints; counts ``interactions``, ``mass``, ``coop_mass``). The rating service records
them on the ladder (``MatchRecorded.statistics``) and its projection sums them in
``game_statistics`` keyed by (game, board, kind, key), where ``kind`` is ``player`` (``key`` the
player id) or ``policy`` (``key`` the policy name). ``GET /v1/statistics/matrix-games/<variant>``
shows episodes, wins, the mean score (centipoints per episode) and the cooperation index
``coop_mass / mass`` (the share of the cooperation token in what the entry carried into its
resolutions; none before any resolution).

An episode that ended by ``forfeit`` (nobody joined) adds no row, and a person's seat adds one
only if its client gave at least one of the orders played (a seat played by the fallback all
along says nothing about its player).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arena_engine.matrix_games.constants import LEGAL_REASONS
from arena_engine.rating import START_RATING
from google.protobuf.message import Message

from arena_games import contract
from arena_games.contract import MatchInfo, Result
from arena_games.matrix_games import wire
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb

PLAYER = "player"
POLICY = "policy"


@dataclass(frozen=True, slots=True)
class StatisticsRow:
    """What one seat of one episode adds to the ladder (every count to be summed)."""

    variant: str
    kind: str
    key: str
    episodes: int
    wins: int
    score_cp: int
    interactions: int
    mass: int
    coop_mass: int


def statistics(match: MatchInfo, ended: pb.EpisodeEnded) -> list[StatisticsRow]:
    """The rows a finished episode adds, seat by seat."""
    if ended.reason == "forfeit":
        return []
    result = wire.result_of(ended)
    rows = []
    for outcome in ended.seats:
        seat = match.seat(outcome.seat)
        if seat.human and outcome.orders_given == 0:
            continue
        rows.append(
            StatisticsRow(
                variant=ended.variant,
                kind=PLAYER if seat.human else POLICY,
                key=seat.player_id if seat.human else seat.policy,
                episodes=1,
                wins=int(result.of(outcome.seat).rank == 1),
                score_cp=outcome.score_cp,
                interactions=outcome.interactions,
                mass=outcome.mass,
                coop_mass=outcome.coop_mass,
            )
        )
    return rows


def board_rows(match: MatchInfo, ended: pb.EpisodeEnded) -> list[contract.StatisticsRow]:
    """:func:`statistics` as the contract's rows: the board is the variant."""
    names = {seat.player_id: seat.display_name for seat in match.seats if seat.human}
    return [
        contract.StatisticsRow(
            board=row.variant,
            kind=row.kind,
            key=row.key,
            name=names.get(row.key, row.key) if row.kind == PLAYER else row.key,
            episodes=row.episodes,
            wins=row.wins,
            score=row.score_cp,
            counts=(
                ("interactions", row.interactions),
                ("mass", row.mass),
                ("coop_mass", row.coop_mass),
            ),
        )
        for row in statistics(match, ended)
    ]


class MatrixGamesRatings:
    ladder: str | None = wire.GAME
    elo = False
    reasons = frozenset(LEGAL_REASONS)
    start = START_RATING
    units = None
    indices: Mapping[str, tuple[str, str]] = MappingProxyType(
        {"cooperation_index": ("coop_mass", "mass")}
    )

    def unrated(self, match: MatchInfo) -> str:
        return ""  # every episode counts for the statistics (see statistics() for the seats)

    def rate(self, before: Sequence[int], result: Result) -> tuple[int, ...]:
        raise NotImplementedError("Matrix Games keeps statistics only")

    def statistics(self, match: MatchInfo, final: Message) -> list[contract.StatisticsRow]:
        assert isinstance(final, pb.EpisodeEnded)
        return board_rows(match, final)

    def tier(self, rating: int) -> str:
        return ""
