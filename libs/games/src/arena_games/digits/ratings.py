"""How Digits feeds its ladder: its own Elo per ranked combat (``arena_engine.digits.ladder``).

A Digits game is not rated as a whole: each ranked combat is, against the army's frozen rating
(counted 190 points lower), K 24 for the season's first 30 ranked combats then 16; the army's
owner is untouched. So the rating service reads the game's ``CombatFought`` events (with the
``ShopEnded`` before each, which names the army and its rating), not the MatchEnded;
:func:`rated_combats` gives them, and ``ladder.rate_combat`` turns each into ladder events. A
house ghost carries no rating: it counts at the player's own rating (an equal, so a win earns
the handicap's few points, as against an equal player). Seasons are Paris months
(``paris.season_of`` of the combat's time). A voided game is taken back by ``ladder.take_back``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arena_engine.digits import ladder, paris
from arena_engine.digits.leaderboards import (
    SEASON_MIN_RANKED_GAMES,
    SEASON_PRIZES,
    SeasonEntry,
    ranked_game_counts,
    season_leaderboard,
)
from arena_engine.rating import START_RATING
from arena_engine.rating import tier as elo_tier
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as rpb
from google.protobuf.message import Message

from arena_games.contract import (
    RANKED,
    MatchInfo,
    RatedUnit,
    Result,
    SeasonLine,
    StatisticsRow,
    UnitStanding,
)
from arena_games.digits import wire
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

UNRATED_MODE = "not_ranked"
#: Why a ranked game, as a whole, changes no rating: its ranked combats do, one by one.
PER_COMBAT = "per_combat"
#: How a game may end (``wire.reason_of``): its status, or the stop that closed it.
REASONS = frozenset({"won", "lost", "closed", "forfeited", "midnight", "deadline", "expired"})


@dataclass(frozen=True, slots=True)
class RankedCombat:
    """One ranked combat as the ladder rates it."""

    round_no: int
    result: str
    #: The army's frozen rating; None for a house ghost (rated at the player's own rating).
    army_rating: int | None
    time_ms: int


def rated_combats(match: MatchInfo, events: Iterable[tuple[Message, int]]) -> list[RankedCombat]:
    """The ranked combats of a game's events (each with its time), in order; none when the
    match is not ranked."""
    if unrated(match):
        return []
    army: pb.Army | None = None
    out = []
    for event, time_ms in events:
        event = wire.unwrapped(event)
        if isinstance(event, pb.ShopEnded):
            army = event.army
        elif isinstance(event, pb.CombatFought):
            rating = None if army is None or army.house else army.rating
            out.append(RankedCombat(event.round, event.result, rating, time_ms))
    return out


def rate(
    standing: ladder.Standing, player: str, game_id: str, combat: RankedCombat
) -> list[ladder.LadderEvent]:
    """The ladder events of one ranked combat (a season's reset first when it is due)."""
    season = paris.season_of(combat.time_ms)
    army = combat.army_rating
    if army is None:
        army = ladder.rating_in_season(standing, season)
    return ladder.rate_combat(
        standing, player, game_id, combat.round_no, season, army, combat.result
    )


def unrated(match: MatchInfo) -> str:
    return "" if match.mode == RANKED else UNRATED_MODE


def _standing(standing: UnitStanding) -> ladder.Standing:
    return ladder.Standing(standing.rating, standing.season or None, standing.season_units)


def _unit_standing(standing: ladder.Standing) -> UnitStanding:
    return UnitStanding(standing.rating, standing.season or "", standing.season_combats)


def _to_engine(game_event: Message) -> ladder.LadderEvent:
    if isinstance(game_event, rpb.UnitRated):
        return ladder.CombatRated(
            game_event.player.player_id,
            game_event.match_id,
            game_event.unit,
            game_event.season,
            game_event.opponent_rating,
            game_event.result,
            game_event.k,
            game_event.before,
            game_event.after,
        )
    if isinstance(game_event, rpb.SeasonReset):
        return ladder.SeasonReset(
            game_event.player_id, game_event.season, game_event.before, game_event.after
        )
    if isinstance(game_event, rpb.RatingTakenBack):
        return ladder.RatingTakenBack(
            game_event.player_id,
            tuple(game_event.match_ids),
            game_event.before,
            game_event.after,
            game_event.season_after or None,
            game_event.season_units_before,
            game_event.season_units_after,
        )
    raise TypeError(f"not a per-combat ladder event: {type(game_event).__name__}")


class DigitsUnits:
    """Digits' per-combat ladder (``contract.UnitRatings``): each ranked combat rated as it is
    fought (``CombatFought``, against the army of the ``ShopEnded`` before it), a void
    (``GameVoided``) taken back, seasons by the Paris month."""

    follows: tuple[type[Message], ...] = (pb.ShopEnded, pb.CombatFought, pb.GameVoided)
    min_games = SEASON_MIN_RANKED_GAMES
    prizes: tuple[int, ...] = SEASON_PRIZES

    def rated(self, match: MatchInfo, events: Sequence[tuple[Message, int]]) -> list[RatedUnit]:
        return [
            RatedUnit(1, c.round_no, c.result, c.army_rating, c.time_ms)
            for c in rated_combats(match, events)
        ]

    def voided(self, event: Message) -> tuple[str, str] | None:
        if isinstance(event, pb.GameVoided):
            return (event.by or event.reason, event.note)
        return None

    def rate(self, standing: UnitStanding, request: rpb.RateUnit) -> list[Message]:
        player = request.player
        army = request.opponent_rating if request.HasField("opponent_rating") else None
        combat = RankedCombat(request.unit, request.result, army, request.time_ms)
        events = rate(_standing(standing), player.player_id, request.match_id, combat)
        out: list[Message] = []
        for event in events:
            if isinstance(event, ladder.SeasonReset):
                out.append(
                    rpb.SeasonReset(
                        game=request.game,
                        player_id=event.player,
                        season=event.season,
                        before=event.before,
                        after=event.after,
                    )
                )
            elif isinstance(event, ladder.CombatRated):
                after = ladder.apply(_standing(standing), event)
                out.append(
                    rpb.UnitRated(
                        match_id=request.match_id,
                        game=request.game,
                        player=player,
                        unit=event.round_no,
                        season=event.season,
                        opponent_rating=event.army_rating,
                        result=event.result,
                        k=event.k,
                        before=event.before,
                        after=event.after,
                        time_ms=request.time_ms,
                        season_units=after.season_combats,
                    )
                )
            standing = _unit_standing(ladder.apply(_standing(standing), event))
        return out

    def apply(self, standing: UnitStanding, event: Message) -> UnitStanding:
        return _unit_standing(ladder.apply(_standing(standing), _to_engine(event)))

    def take_back(
        self, game: str, history: Sequence[Message], voided: frozenset[str]
    ) -> list[Message]:
        return [
            rpb.RatingTakenBack(
                game=game,
                player_id=back.player,
                match_ids=back.games,
                before=back.before,
                after=back.after,
                season_after=back.season_after or "",
                season_units_before=back.season_combats_before,
                season_units_after=back.season_combats_after,
            )
            for back in ladder.take_back([_to_engine(e) for e in history], voided)
        ]

    def season_of(self, time_ms: int) -> str:
        return paris.season_of(time_ms)

    def counts(self, reason: str) -> bool:
        # ``wire.reason_of``: won, lost, closed (the last round); a stop or a forfeit does not.
        return ranked_game_counts(reason, "record")

    def rating_in_season(self, standing: UnitStanding, season: str) -> int:
        return ladder.rating_in_season(_standing(standing), season)

    def season_end_ms(self, season: str) -> int:
        return paris.season_end_ms(season)  # ParisTimeError is a ValueError

    def previous_season(self, time_ms: int) -> str:
        year, month = paris.parse_season(paris.season_of(time_ms))
        return f"{year - (month == 1):04d}-{(month - 2) % 12 + 1:02d}"

    def places(self, entries: Sequence[SeasonLine]) -> list[tuple[int, SeasonLine, int]]:
        lines = {line.player_id: line for line in entries}
        placed = season_leaderboard(
            SeasonEntry(e.player_id, e.rating, e.units, e.games, e.since_ms) for e in entries
        )
        return [(p.place, lines[p.player], p.prize) for p in placed]


class DigitsRatings:
    ladder: str | None = wire.GAME
    units = DigitsUnits()
    elo = True
    reasons = REASONS
    start = START_RATING
    indices: Mapping[str, tuple[str, str]] = MappingProxyType({})

    def unrated(self, match: MatchInfo) -> str:
        """A match as a whole never changes a rating (MatchEnded is recorded unrated): its
        ranked combats are rated one by one (:func:`rated_combats`)."""
        return unrated(match) or PER_COMBAT

    def rate(self, before: Sequence[int], result: Result) -> tuple[int, ...]:
        raise NotImplementedError("Digits rates each ranked combat, not the game (rated_combats)")

    def statistics(self, match: MatchInfo, final: Message) -> list[StatisticsRow]:
        return []

    def tier(self, rating: int) -> str:
        return elo_tier(rating)
