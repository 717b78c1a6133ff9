"""The Digits ladder: every ranked combat rated, seasons reset, voided games taken back.

Each player's `Standing` is the fold of their ladder events. The Elo itself is
`arena_engine.rating.elo_digits` (the army's frozen rating counts 190 points lower; K 24 for a
season's first 30 ranked combats, then 16); the army's owner is never touched. A season is a
calendar month in Paris time (`paris.season_of`); entering a new season halves the distance to
1000 once, however many months were skipped (`rating.season_reset`).

A voided game's rating changes are taken back by compensating events, never by editing the log:
`take_back` compares the ladder with `rebuild` — the same history without the voided games'
combats, every later combat and reset worked out again from the ratings that history gives —
and emits one `RatingTakenBack` per player whose standing differs, which sets it to the rebuilt
one. Season resets stay where they were: the 1st of the month happened whatever was played.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from arena_engine.rating import START_RATING, digits_k, elo_digits, season_reset

from .errors import DigitsError
from .paris import parse_season

SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}


class LadderError(DigitsError):
    """A combat or season the ladder cannot record (unknown result, season gone by, …)."""


@dataclass(frozen=True, slots=True)
class Standing:
    rating: int = START_RATING
    season: str | None = None  # the season `rating` belongs to (None: never rated)
    season_combats: int = 0  # ranked combats in that season: K, and a leaderboard tie-break


@dataclass(frozen=True, slots=True)
class CombatRated:
    player: str
    game_id: str
    round_no: int
    season: str
    army_rating: int
    result: str  # win, draw or loss
    k: int
    before: int
    after: int


@dataclass(frozen=True, slots=True)
class SeasonReset:
    player: str
    season: str
    before: int
    after: int


@dataclass(frozen=True, slots=True)
class RatingTakenBack:
    """Sets a player's standing to the one the ladder would hold without `games`."""

    player: str
    games: tuple[str, ...]
    before: int
    after: int
    season_after: str | None
    season_combats_before: int
    season_combats_after: int


LadderEvent = CombatRated | SeasonReset | RatingTakenBack


def enter_season(standing: Standing, player: str, season: str) -> list[SeasonReset]:
    """The reset due when `player` enters `season` (a sweep on the 1st, or their first combat
    of the month): one, whatever the months skipped; none if already in it or never rated."""
    parse_season(season)
    if standing.season is None or standing.season >= season:
        return []
    return [SeasonReset(player, season, standing.rating, season_reset(standing.rating))]


def rate_combat(
    standing: Standing,
    player: str,
    game_id: str,
    round_no: int,
    season: str,
    army_rating: int,
    result: str,
) -> list[LadderEvent]:
    """The events of one ranked combat: the season's reset if it is the player's first in the
    season, then the rated combat."""
    if result not in SCORES:
        raise LadderError("bad_result")
    if not player or not game_id:
        raise LadderError("bad_id")
    if standing.season is not None and season < standing.season:
        raise LadderError("past_season")
    events: list[LadderEvent] = list(enter_season(standing, player, season))
    for event in events:
        standing = apply(standing, event)
    combats = standing.season_combats if standing.season == season else 0
    rated = elo_digits(standing.rating, army_rating, SCORES[result], combats)
    events.append(
        CombatRated(
            player,
            game_id,
            round_no,
            season,
            army_rating,
            result,
            digits_k(combats),
            standing.rating,
            rated.after,
        )
    )
    return events


def apply(standing: Standing, event: LadderEvent) -> Standing:
    """A player's standing after one of their ladder events."""
    if isinstance(event, CombatRated):
        combats = standing.season_combats if standing.season == event.season else 0
        return Standing(event.after, event.season, combats + 1)
    if isinstance(event, SeasonReset):
        return Standing(event.after, event.season, 0)
    return Standing(event.after, event.season_after, event.season_combats_after)


def fold(events: Iterable[LadderEvent]) -> dict[str, Standing]:
    standings: dict[str, Standing] = {}
    for event in events:
        standings[event.player] = apply(standings.get(event.player, Standing()), event)
    return standings


def rating_in_season(standing: Standing, season: str) -> int:
    """The rating shown in `season`: the season's reset is due even before the player's first
    action in it."""
    resets = enter_season(standing, "", season)
    return resets[0].after if resets else standing.rating


def rebuild(events: Iterable[LadderEvent], voided: frozenset[str]) -> list[LadderEvent]:
    """The ladder's history as if the `voided` games had never been played."""
    standings: dict[str, Standing] = {}
    out: list[LadderEvent] = []
    for event in events:
        standing = standings.get(event.player, Standing())
        fresh: list[LadderEvent]
        if isinstance(event, RatingTakenBack):
            continue
        if isinstance(event, SeasonReset):
            # Recomputed from the rebuilt rating; none for a player the void left unrated.
            fresh = list(enter_season(standing, event.player, event.season))
        elif event.game_id in voided:
            continue
        else:
            fresh = rate_combat(
                standing,
                event.player,
                event.game_id,
                event.round_no,
                event.season,
                event.army_rating,
                event.result,
            )
        for new in fresh:
            standing = apply(standing, new)
        standings[event.player] = standing
        out.extend(fresh)
    return out


def take_back(events: Iterable[LadderEvent], voided: Iterable[str]) -> list[RatingTakenBack]:
    """The compensating events after which the ladder equals `rebuild(events, voided)`.
    `voided` is every game voided so far; games already taken back change nothing again."""
    history = list(events)
    void = frozenset(voided)
    current = fold(history)
    rebuilt = fold(rebuild(history, void))
    games: dict[str, set[str]] = {}
    for event in history:
        if isinstance(event, CombatRated) and event.game_id in void:
            games.setdefault(event.player, set()).add(event.game_id)
    out = []
    for player in sorted(current):
        now, then = current[player], rebuilt.get(player, Standing())
        if now != then:
            out.append(
                RatingTakenBack(
                    player,
                    tuple(sorted(games.get(player, ()))),
                    now.rating,
                    then.rating,
                    then.season,
                    now.season_combats,
                    then.season_combats,
                )
            )
    return out


def standings_equal(a: Mapping[str, Standing], b: Mapping[str, Standing]) -> bool:
    """Two ladders hold the same standings (a player absent from one is a fresh standing)."""
    return all(a.get(p, Standing()) == b.get(p, Standing()) for p in set(a) | set(b))
