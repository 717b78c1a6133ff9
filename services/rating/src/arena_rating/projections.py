"""The rating service's projections: profiles, history and leaderboards; the match index.

``rating`` reads the ladders (``arena.rating.events``): each ``MatchRated`` or ``MatchRecorded``
already carries the ratings before and after, so a profile is the last rating it was given plus
counts, and a history row is the event seen from one player's side. ``match_index`` reads
``arena.match.events``: per match its seats, mode and result, and every event as logged, for
``GET /v1/matches/{id}/events`` and the replay.

Both apply only each stream's next event (DESIGN.md rule 2), remembering the last one in their
own tables, and both write a batch in a few statements (``apply_batch``); ``apply`` is the same
code on a batch of one, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena_engine.rating import START_RATING
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Codec, EnvelopeError, Event
from arena_runtime.eventlog import Record
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.readmodels.tables import (
    match_events,
    match_index,
    rating_history,
    rating_ladders,
    rating_players,
)
from arena_runtime.schemas import rating as _rating  # noqa: F401  (registers the payloads)
from arena_runtime.sql.projection import Projection, Skipped
from arena_runtime.streams import is_next
from sqlalchemy import Table, bindparam, case, insert, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

# Keys per IN (...) lookup: well under every driver's parameter limit.
LOOKUP_CHUNK = 500
MODES = {mw.MATCH_MODE_RANKED: "ranked", mw.MATCH_MODE_CASUAL: "casual"}


def _ms(event: Event) -> int:
    return int(event.time.timestamp() * 1000)


def _decode(codec: Codec, records: Sequence[Record]) -> tuple[list[Event], list[Skipped]]:
    events: list[Event] = []
    skipped: list[Skipped] = []
    for record in records:
        try:
            events.append(codec.decode_event(record.value))
        except EnvelopeError as exc:
            skipped.append((record, exc))
    return events, skipped


async def _lookup(
    session: AsyncSession, table: Table, columns: Sequence[str], keys: Iterable[Any]
) -> dict[Any, Any]:
    """Rows of ``table`` by primary key (one column, or a tuple of them), keyed the same way."""
    keys = list(keys)
    found: dict[Any, Any] = {}
    key_columns = list(table.primary_key.columns)
    for start in range(0, len(keys), LOOKUP_CHUNK):
        chunk = keys[start : start + LOOKUP_CHUNK]
        if len(key_columns) == 1:
            where = key_columns[0].in_(chunk)
        else:
            where = tuple_(*key_columns).in_(chunk)
        rows = await session.execute(
            select(*key_columns, *(table.c[name] for name in columns)).where(where)
        )
        for row in rows:
            key = row[0] if len(key_columns) == 1 else tuple(row[: len(key_columns)])
            found[key] = row[len(key_columns) :]
    return found


# -- rating: profiles, history, leaderboards -----------------------------------------------------


@dataclass(slots=True)
class _Profile:
    """What one batch does to one player's profile."""

    display_name: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    ranked_games: int = 0
    last_ended_at_ms: int = 0
    rating: int | None = None
    rating_seq: int = 0


class RatingProjection(Projection):
    """Player profiles, match history and (by query) leaderboards, from the ladders."""

    name = "rating"
    tables = (rating_ladders, rating_players, rating_history)

    def __init__(self, codec: Codec = CODEC) -> None:
        self.topics = (topics.RATING_EVENTS,)
        self.codec = codec

    async def apply(self, session: AsyncSession, record: Record) -> None:
        await self.apply_batch(session, [record])

    async def apply_batch(self, session: AsyncSession, records: Sequence[Record]) -> list[Skipped]:
        events, skipped = _decode(self.codec, records)
        if not events:
            return skipped
        gates = {
            stream: (sequence, batch_id)
            for stream, (sequence, batch_id) in (
                await _lookup(
                    session, rating_ladders, ("sequence", "batch_id"), {e.stream for e in events}
                )
            ).items()
        }
        known_streams = set(gates)
        profiles: dict[tuple[str, str], _Profile] = {}
        history: list[dict[str, Any]] = []
        for event in events:
            last = gates.get(event.stream, (0, ""))
            if not is_next(event, *last):
                continue
            gates[event.stream] = (event.sequence, event.batch_id)
            payload = event.payload
            if isinstance(payload, (pb.MatchRated, pb.MatchRecorded)):
                self._record(payload, event.sequence, profiles, history)
        await self._write_gates(session, gates, known_streams)
        await self._write_profiles(session, profiles)
        if history:
            await session.execute(insert(rating_history), history)
        return skipped

    @staticmethod
    def _record(
        payload: pb.MatchRated | pb.MatchRecorded,
        sequence: int,
        profiles: dict[tuple[str, str], _Profile],
        history: list[dict[str, Any]],
    ) -> None:
        sides = (
            (payload.winner, payload.loser, "win"),
            (payload.loser, payload.winner, "loss"),
        )
        for player, opponent, result in sides:
            if player.ai:
                continue
            before = after = change = None
            if isinstance(payload, pb.MatchRated):
                if result == "win":
                    before, after = payload.winner_before, payload.winner_after
                else:
                    before, after = payload.loser_before, payload.loser_after
                change = after - before
            key = (payload.game, player.player_id)
            profile = profiles.get(key)
            if profile is None:
                profile = profiles[key] = _Profile(player.display_name)
            profile.display_name = player.display_name
            profile.games += 1
            profile.wins += result == "win"
            profile.losses += result == "loss"
            profile.last_ended_at_ms = payload.ended_at_ms
            if after is not None:
                profile.ranked_games += 1
                profile.rating, profile.rating_seq = after, sequence
            history.append(
                {
                    "player_id": player.player_id,
                    "match_id": payload.match_id,
                    "game": payload.game,
                    "ladder_seq": sequence,
                    "ended_at_ms": payload.ended_at_ms,
                    "mode": "ranked" if isinstance(payload, pb.MatchRated) else payload.mode,
                    "result": result,
                    "reason": payload.reason,
                    "opponent_id": opponent.player_id,
                    "opponent_name": opponent.display_name,
                    "opponent_ai": opponent.ai,
                    "rating_before": before,
                    "rating_after": after,
                    "rating_change": change,
                }
            )

    @staticmethod
    async def _write_gates(
        session: AsyncSession, gates: dict[str, tuple[int, str]], known: set[str]
    ) -> None:
        updates = [
            {"k_stream": s, "sequence": q, "batch_id": b}
            for s, (q, b) in gates.items()
            if s in known
        ]
        inserts = [
            {"stream": s, "sequence": q, "batch_id": b}
            for s, (q, b) in gates.items()
            if s not in known
        ]
        if updates:
            await session.execute(
                update(rating_ladders)
                .where(rating_ladders.c.stream == bindparam("k_stream"))
                .values(sequence=bindparam("sequence"), batch_id=bindparam("batch_id")),
                updates,
            )
        if inserts:
            await session.execute(insert(rating_ladders), inserts)

    @staticmethod
    async def _write_profiles(
        session: AsyncSession, profiles: dict[tuple[str, str], _Profile]
    ) -> None:
        """One upsert for the batch: new players inserted, known ones added to."""
        if not profiles:
            return
        table = rating_players
        rows = [
            {
                "game": game,
                "player_id": player_id,
                "display_name": p.display_name,
                "rating": START_RATING if p.rating is None else p.rating,
                "rating_seq": p.rating_seq,
                "games": p.games,
                "wins": p.wins,
                "losses": p.losses,
                "ranked_games": p.ranked_games,
                "last_ended_at_ms": p.last_ended_at_ms,
            }
            for (game, player_id), p in profiles.items()
        ]
        upsert = _insert_for(session)(table)
        new = upsert.excluded
        # rating_seq 0 in the batch: the player was not rated in it, the stored rating stands.
        rated = new.rating_seq > 0
        await session.execute(
            upsert.on_conflict_do_update(
                index_elements=[table.c.game, table.c.player_id],
                set_={
                    "display_name": new.display_name,
                    "games": table.c.games + new.games,
                    "wins": table.c.wins + new.wins,
                    "losses": table.c.losses + new.losses,
                    "ranked_games": table.c.ranked_games + new.ranked_games,
                    "last_ended_at_ms": new.last_ended_at_ms,
                    "rating": case((rated, new.rating), else_=table.c.rating),
                    "rating_seq": case((rated, new.rating_seq), else_=table.c.rating_seq),
                },
            ),
            rows,
        )


def _insert_for(session: AsyncSession) -> Any:
    """The dialect's INSERT, which knows ON CONFLICT (PostgreSQL and SQLite alike)."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert
    return sqlite.insert


# -- match index ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Match:
    """One match's index row as this batch leaves it; ``row`` holds the changed columns."""

    known: bool
    last_sequence: int
    last_batch_id: str
    events: int = 0
    row: dict[str, Any] = field(default_factory=dict)


MATCH_PREFIX = "match-"
_INDEX_STATE = ("last_sequence", "last_batch_id")


def _seat(seats: Sequence[mw.MatchSeat], number: int) -> dict[str, Any]:
    seat = seats[number - 1] if len(seats) >= number else mw.MatchSeat()
    return {
        f"seat{number}_id": seat.player_id,
        f"seat{number}_name": seat.display_name,
        f"seat{number}_ai": seat.kind == mw.SEAT_KIND_AI,
    }


class MatchIndexProjection(Projection):
    """Per match its seats, mode and result, and every event it admitted, from the match log."""

    name = "match_index"
    tables = (match_index, match_events)

    def __init__(self, codec: Codec = CODEC) -> None:
        self.topics = (topics.MATCH_EVENTS,)
        self.codec = codec

    async def apply(self, session: AsyncSession, record: Record) -> None:
        await self.apply_batch(session, [record])

    async def apply_batch(self, session: AsyncSession, records: Sequence[Record]) -> list[Skipped]:
        skipped: list[Skipped] = []
        decoded: list[tuple[Event, Record]] = []
        for record in records:
            try:
                event = self.codec.decode_event(record.value)
            except EnvelopeError as exc:
                skipped.append((record, exc))
                continue
            if event.stream.startswith(MATCH_PREFIX):
                decoded.append((event, record))
        if not decoded:
            return skipped
        ids = {e.stream.removeprefix(MATCH_PREFIX) for e, _ in decoded}
        stored = await _lookup(session, match_index, _INDEX_STATE, ids)
        matches = {
            match_id: _Match(True, sequence, batch_id)
            for match_id, (sequence, batch_id) in stored.items()
        }
        rows: list[dict[str, Any]] = []
        for event, record in decoded:
            match_id = event.stream.removeprefix(MATCH_PREFIX)
            match = matches.get(match_id)
            if match is None:
                match = matches[match_id] = _Match(False, 0, "")
            if not is_next(event, match.last_sequence, match.last_batch_id):
                continue
            match.last_sequence, match.last_batch_id = event.sequence, event.batch_id
            match.events += 1
            self._index(event, match.row)
            rows.append(
                {
                    "match_id": match_id,
                    "sequence": event.sequence,
                    "type": event.type,
                    "time_ms": _ms(event),
                    "envelope": record.value,
                }
            )
        await self._write(session, matches)
        if rows:
            await session.execute(insert(match_events), rows)
        return skipped

    @staticmethod
    def _index(event: Event, row: dict[str, Any]) -> None:
        payload = event.payload
        if "created_at_ms" not in row and event.sequence == 1:
            row.update(
                mode="",
                room_code="",
                status="playing",
                created_at_ms=_ms(event),
                **_seat((), 1),
                **_seat((), 2),
            )
        if isinstance(payload, mw.MatchCreated):
            row.update(
                mode=MODES.get(payload.mode, "casual"),
                room_code=payload.room_code,
                **_seat(payload.seats, 1),
                **_seat(payload.seats, 2),
            )
        elif isinstance(payload, mw.GameEnded) and row.get("status") != "over":
            row.update(
                status="over", winner=payload.winner, reason=payload.reason, ended_at_ms=_ms(event)
            )

    @staticmethod
    async def _write(session: AsyncSession, matches: dict[str, _Match]) -> None:
        for match_id, match in matches.items():
            if match.events == 0:
                continue
            values = {
                **match.row,
                "last_sequence": match.last_sequence,
                "last_batch_id": match.last_batch_id,
            }
            if match.known:
                await session.execute(
                    update(match_index)
                    .where(match_index.c.match_id == match_id)
                    .values(events=match_index.c.events + match.events, **values)
                )
            else:
                await session.execute(
                    insert(match_index).values(match_id=match_id, events=match.events, **values)
                )


def rating_projections(settings: Settings) -> list[Projection]:
    """The factory registered under ``arena.projections``."""
    return [RatingProjection(), MatchIndexProjection()]
