"""The queries of the read API: profiles, match history, leaderboards, a match's log.

Each takes an SQLAlchemy session and returns typed pydantic models (the gateway's read API
answers with them as they are). Pages are keyset-paged: a page carries ``next_cursor``, an opaque
string to pass back for the next page, so a page never repeats or skips a row however many
games are recorded meanwhile. A cursor that is not one of ours is an :class:`InvalidCursorError`.

Orders, all total (so every page boundary is exact):

* history: newest first by ``(ended_at_ms, match_id)``, descending;
* leaderboard: rating descending, then whoever reached that rating first (the ladder sequence
  of the event that gave it), then the player id. Only players with a ranked game are listed.

What depends on the game comes from the game's module (``arena_games``), which the caller passes
in: the tier shown beside a rating (``tier``), a statistics board's indices, and a match's
replay, which each game makes from :func:`match_record` itself (the runtime holds no game code).
A match has any number of seats (``match_seats``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from pydantic import BaseModel, Field
from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from arena_runtime.envelope import CODEC, Codec, Event
from arena_runtime.readmodels.tables import (
    credit_movements,
    game_statistics,
    match_events,
    match_index,
    match_seats,
    rating_history,
    rating_players,
    season_standings,
)
from arena_runtime.readmodels.tables import (
    ghost_sharing as ghost_sharing_table,
)
from arena_runtime.schemas import rating as _rating  # noqa: F401  (registers the payloads)

MAX_PAGE = 100
DEFAULT_PAGE = 20

#: The tier shown beside a rating on a game's ladder: ``tier(game, rating)``.
Tier = Callable[[str, int], str]


class InvalidCursorError(ValueError):
    """A ``cursor`` that no page of this listing handed out."""


# -- models ------------------------------------------------------------------------------------


class GameRecord(BaseModel):
    """A player's standing in one game."""

    game: str = Field(examples=["maths-warriors"])
    rating: int = Field(description="Elo rating (1000 before any ranked game)", examples=[1012])
    tier: str = Field(description="Rank tier derived from the rating", examples=["Silver"])
    games: int = Field(description="Games recorded, ranked and casual")
    wins: int
    losses: int
    ranked_games: int
    rank: int | None = Field(description="Place on the game's leaderboard; null before ranked play")


class PlayerProfile(BaseModel):
    player_id: str
    display_name: str
    games: list[GameRecord]


class HistoryEntry(BaseModel):
    """One finished game from the player's side."""

    match_id: str
    game: str
    mode: Literal["ranked", "casual"]
    result: Literal["win", "loss", "draw", "solo"] = Field(
        description=(
            "win: ranked first; draw: every seat ranked first; loss: otherwise; solo: a game "
            "of one seat (the reason says how it went)"
        )
    )
    reason: str = Field(description="How the match ended, e.g. all_captured, timeout or forfeit")
    opponent_id: str = Field(description="The other seat of a two-seat match; empty otherwise")
    opponent_name: str
    opponent_ai: bool
    rating_before: int | None = Field(description="null for an unrated game")
    rating_after: int | None
    rating_change: int | None = Field(description="null for an unrated game (no change)")
    rank: int = Field(description="The player's place in the match (1 is best; ties share it)")
    seats: int = Field(description="How many seats the match had")
    ended_at: datetime


class HistoryPage(BaseModel):
    player_id: str
    matches: list[HistoryEntry]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null: last")


class LeaderboardEntry(BaseModel):
    rank: int = Field(description="1 for the top; every player has a distinct rank")
    player_id: str
    display_name: str
    rating: int
    tier: str
    ranked_games: int
    wins: int
    losses: int


class LeaderboardPage(BaseModel):
    game: str
    total: int = Field(description="Players on the leaderboard (with at least one ranked game)")
    entries: list[LeaderboardEntry]
    next_cursor: str | None


class MatchSeat(BaseModel):
    seat: int
    player_id: str
    display_name: str
    ai: bool
    kind: Literal["human", "ai", "scripted"]
    rank: int | None = Field(description="1 is best, equal ranks a tie; null while it plays")


class MatchEvent(BaseModel):
    """One event of the match stream, as logged (payload in protobuf's JSON mapping)."""

    sequence: int
    type: str = Field(examples=["arena.v1.StrengthAttacked"])
    time: datetime
    payload: dict[str, Any]


class StatisticsEntry(BaseModel):
    """One player or scripted policy on a game's statistics board, summed over its matches."""

    rank: int = Field(description="1 for the best mean score; every entry has a distinct rank")
    kind: Literal["player", "policy"]
    key: str = Field(description="The player id, or the scripted policy's name")
    name: str
    episodes: int
    wins: int
    mean_score: float = Field(description="The score per match, in the game's unit")
    indices: dict[str, float | None] = Field(
        description="The game's indices (e.g. cooperation_index); null before any count"
    )
    counts: dict[str, int] = Field(description="The game's own sums the indices are made of")


class StatisticsPage(BaseModel):
    game: str
    board: str = Field(description="The board (Matrix Games: the variant)")
    total: int
    entries: list[StatisticsEntry]
    next_cursor: str | None


class MatchLog(BaseModel):
    match_id: str
    mode: str
    status: Literal["playing", "over"]
    seats: list[MatchSeat]
    winner: int | None
    reason: str | None
    events: list[MatchEvent]


# -- cursors -----------------------------------------------------------------------------------


def encode_cursor(values: Sequence[Any]) -> str:
    raw = json.dumps(list(values), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, shape: Sequence[type]) -> list[Any]:
    """The values of a cursor, checked against their types; InvalidCursorError otherwise."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        values = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursorError("cursor is not one this listing handed out") from exc
    if (
        not isinstance(values, list)
        or len(values) != len(shape)
        or not all(type(v) is t for v, t in zip(values, shape, strict=True))
    ):
        raise InvalidCursorError("cursor is not one this listing handed out")
    return values


def _limit(limit: int) -> int:
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be 1-{MAX_PAGE}, not {limit}")
    return limit


def _time(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


# -- profile, history, leaderboard -------------------------------------------------------------


async def player_profile(
    session: AsyncSession, player_id: str, *, tier: Tier
) -> PlayerProfile | None:
    """A player's standing in every game they have played; None if they have no recorded game."""
    rows = (
        await session.execute(
            select(rating_players)
            .where(rating_players.c.player_id == player_id)
            .order_by(rating_players.c.game)
        )
    ).all()
    if not rows:
        return None
    latest = max(rows, key=lambda r: (r.last_ended_at_ms, r.game))
    return PlayerProfile(
        player_id=player_id,
        display_name=latest.display_name,
        games=[
            GameRecord(
                game=r.game,
                rating=r.rating,
                tier=tier(r.game, r.rating),
                games=r.games,
                wins=r.wins,
                losses=r.losses,
                ranked_games=r.ranked_games,
                rank=await _rank(session, r) if r.ranked_games else None,
            )
            for r in rows
        ],
    )


async def _rank(session: AsyncSession, row: Any) -> int:
    """1 + the players ahead of ``row`` in the leaderboard's order."""
    t = rating_players
    ahead = await session.scalar(
        select(func.count())
        .select_from(t)
        .where(
            t.c.game == row.game,
            t.c.ranked_games > 0,
            or_(
                t.c.rating > row.rating,
                and_(t.c.rating == row.rating, t.c.rating_seq < row.rating_seq),
                and_(
                    t.c.rating == row.rating,
                    t.c.rating_seq == row.rating_seq,
                    t.c.player_id < row.player_id,
                ),
            ),
        )
    )
    return int(ahead or 0) + 1


async def match_history(
    session: AsyncSession, player_id: str, *, limit: int = DEFAULT_PAGE, cursor: str | None = None
) -> HistoryPage:
    """A page of the player's finished games, newest first."""
    limit = _limit(limit)
    t = rating_history
    query = select(t).where(t.c.player_id == player_id)
    if cursor is not None:
        ended, match_id = decode_cursor(cursor, (int, str))
        query = query.where(
            or_(t.c.ended_at_ms < ended, and_(t.c.ended_at_ms == ended, t.c.match_id < match_id))
        )
    rows = (
        await session.execute(
            query.order_by(t.c.ended_at_ms.desc(), t.c.match_id.desc()).limit(limit + 1)
        )
    ).all()
    more = len(rows) > limit
    rows = rows[:limit]
    return HistoryPage(
        player_id=player_id,
        matches=[
            HistoryEntry(
                match_id=r.match_id,
                game=r.game,
                mode=r.mode,
                result=r.result,
                reason=r.reason,
                opponent_id=r.opponent_id,
                opponent_name=r.opponent_name,
                opponent_ai=r.opponent_ai,
                rating_before=r.rating_before,
                rating_after=r.rating_after,
                rating_change=r.rating_change,
                rank=r.rank,
                seats=r.seats,
                ended_at=_time(r.ended_at_ms),
            )
            for r in rows
        ],
        next_cursor=encode_cursor((rows[-1].ended_at_ms, rows[-1].match_id)) if more else None,
    )


async def leaderboard(
    session: AsyncSession,
    game: str,
    *,
    tier: Tier,
    limit: int = DEFAULT_PAGE,
    cursor: str | None = None,
) -> LeaderboardPage:
    """A page of a game's leaderboard (players with at least one ranked game)."""
    limit = _limit(limit)
    t = rating_players
    query = select(t).where(t.c.game == game, t.c.ranked_games > 0)
    rank = 1
    if cursor is not None:
        rating, seq, player_id, rank = decode_cursor(cursor, (int, int, str, int))
        query = query.where(
            or_(
                t.c.rating < rating,
                and_(t.c.rating == rating, t.c.rating_seq > seq),
                and_(t.c.rating == rating, t.c.rating_seq == seq, t.c.player_id > player_id),
            )
        )
    rows = (
        await session.execute(
            query.order_by(t.c.rating.desc(), t.c.rating_seq, t.c.player_id).limit(limit + 1)
        )
    ).all()
    more = len(rows) > limit
    rows = rows[:limit]
    entries = [
        LeaderboardEntry(
            rank=rank + i,
            player_id=r.player_id,
            display_name=r.display_name,
            rating=r.rating,
            tier=tier(game, r.rating),
            ranked_games=r.ranked_games,
            wins=r.wins,
            losses=r.losses,
        )
        for i, r in enumerate(rows)
    ]
    next_cursor = None
    if more:
        last = rows[-1]
        next_cursor = encode_cursor((last.rating, last.rating_seq, last.player_id, rank + limit))
    total = await leaderboard_size(session, game)
    return LeaderboardPage(game=game, total=total, entries=entries, next_cursor=next_cursor)


async def leaderboard_size(session: AsyncSession, game: str) -> int:
    t = rating_players
    count = await session.scalar(
        select(func.count()).select_from(t).where(t.c.game == game, t.c.ranked_games > 0)
    )
    return int(count or 0)


# -- a match's log and replay ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """What the read models hold of one match: its index row, its seats and its events."""

    match_id: str
    row: Mapping[Any, Any]
    seats: list[MatchSeat]
    events: list[Event]


def _seat(row: Any) -> MatchSeat:
    return MatchSeat(
        seat=row.seat,
        player_id=row.player_id,
        display_name=row.display_name,
        ai=row.kind == "ai",
        kind=row.kind,
        rank=row.rank,
    )


async def match_record(
    session: AsyncSession, match_id: str, codec: Codec = CODEC
) -> MatchRecord | None:
    """The match's index row, seats and events in order; None for an unknown match."""
    row = (
        await session.execute(select(match_index).where(match_index.c.match_id == match_id))
    ).first()
    if row is None:
        return None
    seats = await session.execute(
        select(match_seats).where(match_seats.c.match_id == match_id).order_by(match_seats.c.seat)
    )
    envelopes = await session.scalars(
        select(match_events.c.envelope)
        .where(match_events.c.match_id == match_id)
        .order_by(match_events.c.sequence)
    )
    return MatchRecord(
        match_id,
        row._mapping,
        [_seat(seat) for seat in seats],
        [codec.decode_event(e) for e in envelopes],
    )


#: Matches a board made at query time reads at most (a day's daily games, a room's).
MAX_BOARD_MATCHES = 5_000


async def match_records(
    session: AsyncSession,
    *,
    mode: str,
    since_ms: int | None = None,
    until_ms: int | None = None,
    room_code: str | None = None,
    codec: Codec = CODEC,
) -> list[MatchRecord]:
    """Every match of ``mode`` started in ``[since_ms, until_ms)`` and/or played in
    ``room_code``, with its seats and events (three queries, whatever the count)."""
    t = match_index
    query = select(t).where(t.c.mode == mode)
    if since_ms is not None:
        query = query.where(t.c.created_at_ms >= since_ms)
    if until_ms is not None:
        query = query.where(t.c.created_at_ms < until_ms)
    if room_code is not None:
        query = query.where(t.c.room_code == room_code)
    rows = (await session.execute(query.order_by(t.c.created_at_ms).limit(MAX_BOARD_MATCHES))).all()
    if not rows:
        return []
    ids = [row.match_id for row in rows]
    seats: dict[str, list[MatchSeat]] = {}
    events: dict[str, list[Event]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for seat in await session.execute(
            select(match_seats)
            .where(match_seats.c.match_id.in_(chunk))
            .order_by(match_seats.c.match_id, match_seats.c.seat)
        ):
            seats.setdefault(seat.match_id, []).append(_seat(seat))
        for match_id, envelope in await session.execute(
            select(match_events.c.match_id, match_events.c.envelope)
            .where(match_events.c.match_id.in_(chunk))
            .order_by(match_events.c.match_id, match_events.c.sequence)
        ):
            events.setdefault(match_id, []).append(codec.decode_event(envelope))
    return [
        MatchRecord(
            row.match_id, row._mapping, seats.get(row.match_id, []), events.get(row.match_id, [])
        )
        for row in rows
    ]


def _payload(payload: Any) -> dict[str, Any]:
    if isinstance(payload, Message):
        return MessageToDict(payload, preserving_proto_field_name=True)
    return payload if isinstance(payload, dict) else {"value": payload}


async def match_log(session: AsyncSession, match_id: str, codec: Codec = CODEC) -> MatchLog | None:
    """Every event of the match, in stream order; None for an unknown match."""
    record = await match_record(session, match_id, codec)
    if record is None:
        return None
    row = record.row
    return MatchLog(
        match_id=match_id,
        mode=row["mode"],
        status=row["status"],
        seats=record.seats,
        winner=row["winner"],
        reason=row["reason"],
        events=[
            MatchEvent(sequence=e.sequence, type=e.type, time=e.time, payload=_payload(e.payload))
            for e in record.events
        ],
    )


# -- statistics boards -------------------------------------------------------------------------


async def statistics_board(
    session: AsyncSession,
    game: str,
    board: str,
    *,
    indices: Mapping[str, tuple[str, str]],
    limit: int = DEFAULT_PAGE,
    cursor: str | None = None,
) -> StatisticsPage:
    """A page of a game's statistics board: mean score descending, then more matches first,
    then kind and key (a total order; the comparisons are exact: scores cross-multiplied)."""
    limit = _limit(limit)
    t = game_statistics
    query = select(t).where(t.c.game == game, t.c.board == board, t.c.episodes > 0)
    rank = 1
    if cursor is not None:
        score, episodes, kind, key, rank = decode_cursor(cursor, (int, int, str, str, int))
        # After (score/episodes, episodes, kind, key) in the order: a lower mean, or the same
        # mean and fewer matches, or the same both and a later (kind, key).
        mine, theirs = t.c.score * episodes, score * t.c.episodes
        query = query.where(
            or_(
                mine < theirs,
                and_(mine == theirs, t.c.episodes < episodes),
                and_(mine == theirs, t.c.episodes == episodes, t.c.kind > kind),
                and_(mine == theirs, t.c.episodes == episodes, t.c.kind == kind, t.c.key > key),
            )
        )
    mean = t.c.score * 1.0 / t.c.episodes
    rows = (
        await session.execute(
            query.order_by(mean.desc(), t.c.episodes.desc(), t.c.kind, t.c.key).limit(limit + 1)
        )
    ).all()
    more = len(rows) > limit
    rows = rows[:limit]
    entries = []
    for i, r in enumerate(rows):
        counts = {name: int(value) for name, value in json.loads(r.counts).items()}
        entries.append(
            StatisticsEntry(
                rank=rank + i,
                kind=r.kind,
                key=r.key,
                name=r.name,
                episodes=r.episodes,
                wins=r.wins,
                mean_score=r.score / r.episodes,
                indices={
                    name: (counts.get(top, 0) / counts[bottom] if counts.get(bottom) else None)
                    for name, (top, bottom) in indices.items()
                },
                counts=counts,
            )
        )
    next_cursor = None
    if more:
        last = rows[-1]
        next_cursor = encode_cursor((last.score, last.episodes, last.kind, last.key, rank + limit))
    total = await session.scalar(
        select(func.count())
        .select_from(t)
        .where(t.c.game == game, t.c.board == board, t.c.episodes > 0)
    )
    return StatisticsPage(
        game=game, board=board, total=int(total or 0), entries=entries, next_cursor=next_cursor
    )


# -- a per-combat ladder's season leaderboard ----------------------------------------------------


class SeasonPlace(BaseModel):
    place: int = Field(description="1 for the top; never shared")
    player_id: str
    display_name: str
    rating: int = Field(description="The rating in the season (at its end once it is over)")
    ranked_combats: int
    ranked_games: int = Field(description="Finished ranked games that count, voided ones out")
    prize: int = Field(description="The credits this place receives at the season's end")


class SeasonLeaderboardPage(BaseModel):
    game: str
    season: str
    min_games: int = Field(description="Counted games a player needs to be listed")
    prizes: list[int] = Field(description="The credits of places 1, 2, … (the page shows them)")
    total: int
    entries: list[SeasonPlace]
    next_cursor: str | None


async def season_leaderboard(
    session: AsyncSession,
    game: str,
    season: str,
    *,
    min_games: int,
    prizes: Sequence[int],
    limit: int = DEFAULT_PAGE,
    cursor: str | None = None,
) -> SeasonLeaderboardPage:
    """A page of a season's leaderboard: players with ``min_games`` counted games, by rating,
    then the most ranked combats, then the oldest (first seen), then the player id; never a
    shared place. Prizes go by place (every listed player is an account until guests are
    told apart)."""
    limit = _limit(limit)
    t = season_standings
    query = select(t).where(t.c.game == game, t.c.season == season, t.c.games >= min_games)
    place = 1
    if cursor is not None:
        rating, units, since, player_id, place = decode_cursor(cursor, (int, int, int, str, int))
        query = query.where(
            or_(
                t.c.rating < rating,
                and_(t.c.rating == rating, t.c.units < units),
                and_(t.c.rating == rating, t.c.units == units, t.c.since_ms > since),
                and_(
                    t.c.rating == rating,
                    t.c.units == units,
                    t.c.since_ms == since,
                    t.c.player_id > player_id,
                ),
            )
        )
    order = (t.c.rating.desc(), t.c.units.desc(), t.c.since_ms, t.c.player_id)
    rows = (await session.execute(query.order_by(*order).limit(limit + 1))).all()
    more = len(rows) > limit
    rows = rows[:limit]
    entries = [
        SeasonPlace(
            place=place + i,
            player_id=r.player_id,
            display_name=r.display_name,
            rating=r.rating,
            ranked_combats=r.units,
            ranked_games=r.games,
            prize=prizes[place + i - 1] if place + i - 1 < len(prizes) else 0,
        )
        for i, r in enumerate(rows)
    ]
    next_cursor = None
    if more:
        last = rows[-1]
        next_cursor = encode_cursor(
            (last.rating, last.units, last.since_ms, last.player_id, place + limit)
        )
    total = await session.scalar(
        select(func.count())
        .select_from(t)
        .where(t.c.game == game, t.c.season == season, t.c.games >= min_games)
    )
    return SeasonLeaderboardPage(
        game=game,
        season=season,
        min_games=min_games,
        prizes=list(prizes),
        total=int(total or 0),
        entries=entries,
        next_cursor=next_cursor,
    )


# -- credits ledgers ---------------------------------------------------------------------------


class CreditMovement(BaseModel):
    sequence: int = Field(description="The movement's sequence in the ledger's stream")
    kind: str = Field(description="credited, debited, held, released or captured")
    movement_id: str = Field(description="The movement's id (a hold's id for holds)")
    amount: int
    reason: str = Field(description="season_prize, duel_stake, duel_won, …")
    balance: int = Field(description="Credits available after it")
    held: int = Field(description="Credits held (duel stakes) after it")
    time: datetime


class CreditsBalance(BaseModel):
    player_id: str
    balance: int = Field(description="Credits available (never below 0)")
    held: int = Field(description="Credits held for duels under way")
    movements: int = Field(description="Movements in the ledger")


class CreditsLedgerPage(BaseModel):
    player_id: str
    movements: list[CreditMovement]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null: last")


async def credits_balance(session: AsyncSession, player_id: str) -> CreditsBalance:
    """The account's balance and held total (0 and 0 for a ledger with no movement)."""
    t = credit_movements
    last = (
        await session.execute(
            select(t.c.sequence, t.c.balance, t.c.held)
            .where(t.c.player_id == player_id)
            .order_by(t.c.sequence.desc())
            .limit(1)
        )
    ).first()
    if last is None:
        return CreditsBalance(player_id=player_id, balance=0, held=0, movements=0)
    count = await session.scalar(
        select(func.count()).select_from(t).where(t.c.player_id == player_id)
    )
    return CreditsBalance(
        player_id=player_id, balance=last.balance, held=last.held, movements=int(count or 0)
    )


async def credits_ledger(
    session: AsyncSession, player_id: str, *, limit: int = DEFAULT_PAGE, cursor: str | None = None
) -> CreditsLedgerPage:
    """A page of the account's movements, newest first."""
    limit = _limit(limit)
    t = credit_movements
    query = select(t).where(t.c.player_id == player_id)
    if cursor is not None:
        (before,) = decode_cursor(cursor, (int,))
        query = query.where(t.c.sequence < before)
    rows = (await session.execute(query.order_by(t.c.sequence.desc()).limit(limit + 1))).all()
    more = len(rows) > limit
    rows = rows[:limit]
    return CreditsLedgerPage(
        player_id=player_id,
        movements=[
            CreditMovement(
                sequence=r.sequence,
                kind=r.kind,
                movement_id=r.movement_id,
                amount=r.amount,
                reason=r.reason,
                balance=r.balance,
                held=r.held,
                time=_time(r.time_ms),
            )
            for r in rows
        ],
        next_cursor=encode_cursor((rows[-1].sequence,)) if more else None,
    )


async def ghost_sharing(session: AsyncSession, game: str, player_id: str) -> str | None:
    """The player's ghost sharing preference in ``game`` (``login``, ``anonymous``, ``none``);
    None if never set."""
    t = ghost_sharing_table
    found = await session.scalar(
        select(t.c.sharing).where(t.c.game == game, t.c.player_id == player_id)
    )
    return None if found is None else str(found)


async def match_row(session: AsyncSession, match_id: str) -> Mapping[Any, Any] | None:
    """The match's index row (mode, status, …) and nothing else; None for an unknown match."""
    row = (
        await session.execute(select(match_index).where(match_index.c.match_id == match_id))
    ).first()
    return None if row is None else row._mapping


async def seat_players(session: AsyncSession, match_id: str) -> list[str]:
    t = match_seats
    return list(await session.scalars(select(t.c.player_id).where(t.c.match_id == match_id)))


async def first_event(session: AsyncSession, match_id: str, codec: Codec = CODEC) -> Event | None:
    """The match's first event (its MatchOpened, which names the game); None if none."""
    envelope = await session.scalar(
        select(match_events.c.envelope)
        .where(match_events.c.match_id == match_id)
        .order_by(match_events.c.sequence)
        .limit(1)
    )
    return None if envelope is None else codec.decode_event(envelope)
