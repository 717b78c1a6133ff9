"""The queries of the read API: profiles, match history, leaderboards, a match's log and replay.

Each takes an SQLAlchemy session and returns typed pydantic models (the gateway's read API
answers with them as they are). Pages are keyset-paged: a page carries ``next_cursor``, an opaque
string to pass back for the next page, so a page never repeats or skips a row however many
games are recorded meanwhile. A cursor that is not one of ours is an :class:`InvalidCursorError`.

Orders, all total (so every page boundary is exact):

* history: newest first by ``(ended_at_ms, match_id)``, descending;
* leaderboard: rating descending, then whoever reached that rating first (the ladder sequence
  of the event that gave it), then the player id. Only players with a ranked game are listed.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from arena_engine import rating as elo
from arena_engine.maths_warriors import DICE, GameState
from arena_engine.maths_warriors import apply as engine_apply
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from pydantic import BaseModel, Field
from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from arena_runtime.envelope import CODEC, Codec, Event
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime.readmodels.tables import (
    match_events,
    match_index,
    rating_history,
    rating_players,
)
from arena_runtime.schemas import maths_warriors as mw_schema
from arena_runtime.schemas import rating as _rating  # noqa: F401  (registers the payloads)

MAX_PAGE = 100
DEFAULT_PAGE = 20
ENGINE_EVENTS = (
    mw.GameStarted,
    mw.StrengthAttacked,
    mw.MindAttacked,
    mw.TurnSkipped,
    mw.GameEnded,
)


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
    result: Literal["win", "loss"]
    reason: str = Field(description="all_captured, timeout or forfeit")
    opponent_id: str
    opponent_name: str
    opponent_ai: bool
    rating_before: int | None = Field(description="null for an unrated game")
    rating_after: int | None
    rating_change: int | None = Field(description="null for an unrated game (no change)")
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


class MatchEvent(BaseModel):
    """One event of the match stream, as logged (payload in protobuf's JSON mapping)."""

    sequence: int
    type: str = Field(examples=["arena.v1.StrengthAttacked"])
    time: datetime
    payload: dict[str, Any]


class MatchLog(BaseModel):
    match_id: str
    mode: str
    status: Literal["playing", "over"]
    seats: list[MatchSeat]
    winner: int | None
    reason: str | None
    events: list[MatchEvent]


class DieView(BaseModel):
    die: str = Field(examples=["D12"])
    value: int | None = Field(description="null once captured")


class ReplayState(BaseModel):
    """The game after one event (the engine's fold)."""

    sequence: int
    type: str
    status: str
    to_move: int
    move_count: int
    dice1: list[DieView]
    dice2: list[DieView]
    winner: int | None
    win_reason: str | None = Field(description="all_captured, timeout or forfeit once over")


class Replay(BaseModel):
    match_id: str
    seats: list[MatchSeat]
    states: list[ReplayState]


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


async def player_profile(session: AsyncSession, player_id: str) -> PlayerProfile | None:
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
                tier=elo.tier(r.rating),
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
                ended_at=_time(r.ended_at_ms),
            )
            for r in rows
        ],
        next_cursor=encode_cursor((rows[-1].ended_at_ms, rows[-1].match_id)) if more else None,
    )


async def leaderboard(
    session: AsyncSession, game: str, *, limit: int = DEFAULT_PAGE, cursor: str | None = None
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
            tier=elo.tier(r.rating),
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


def _seats(row: Any) -> list[MatchSeat]:
    return [
        MatchSeat(
            seat=n,
            player_id=row[f"seat{n}_id"],
            display_name=row[f"seat{n}_name"],
            ai=row[f"seat{n}_ai"],
        )
        for n in (1, 2)
    ]


async def _match(session: AsyncSession, match_id: str, codec: Codec) -> tuple[Any, list[Event]]:
    row = (
        await session.execute(select(match_index).where(match_index.c.match_id == match_id))
    ).first()
    if row is None:
        return None, []
    envelopes = await session.scalars(
        select(match_events.c.envelope)
        .where(match_events.c.match_id == match_id)
        .order_by(match_events.c.sequence)
    )
    return row._mapping, [codec.decode_event(e) for e in envelopes]


def _payload(payload: Any) -> dict[str, Any]:
    if isinstance(payload, Message):
        return MessageToDict(payload, preserving_proto_field_name=True)
    return payload if isinstance(payload, dict) else {"value": payload}


async def match_log(session: AsyncSession, match_id: str, codec: Codec = CODEC) -> MatchLog | None:
    """Every event of the match, in stream order; None for an unknown match."""
    row, events = await _match(session, match_id, codec)
    if row is None:
        return None
    return MatchLog(
        match_id=match_id,
        mode=row["mode"],
        status=row["status"],
        seats=_seats(row),
        winner=row["winner"],
        reason=row["reason"],
        events=[
            MatchEvent(sequence=e.sequence, type=e.type, time=e.time, payload=_payload(e.payload))
            for e in events
        ],
    )


def _dice(values: Sequence[int | None]) -> list[DieView]:
    return [DieView(die=die.value, value=value) for die, value in zip(DICE, values, strict=False)]


async def match_replay(session: AsyncSession, match_id: str, codec: Codec = CODEC) -> Replay | None:
    """The game's state after each of its game events, folded with the engine."""
    row, events = await _match(session, match_id, codec)
    if row is None:
        return None
    state = GameState()
    states: list[ReplayState] = []
    for event in events:
        if not isinstance(event.payload, ENGINE_EVENTS):
            continue
        state = engine_apply(state, mw_schema.event_from_proto(event.payload))
        states.append(
            ReplayState(
                sequence=event.sequence,
                type=event.type,
                status=state.status.value,
                to_move=state.to_move,
                move_count=state.move_count,
                dice1=_dice(state.dice1),
                dice2=_dice(state.dice2),
                winner=state.winner,
                win_reason=(
                    mw_schema.PROTOCOL_REASON[state.win_reason.value] if state.win_reason else None
                ),
            )
        )
    return Replay(match_id=match_id, seats=_seats(row), states=states)
