"""The rating service's projections: profiles, history, leaderboards and statistics boards;
the match index.

``rating`` reads the ladders (``arena.rating.events``): each ``MatchRated`` or ``MatchRecorded``
names every seat and already carries the ratings before and after, so a profile is the last
rating it was given plus counts, and a history row is the event seen from one person's side
(AI and scripted seats have none); a ``MatchRecorded`` of a game that keeps statistics adds its
rows to the game's boards (``game_statistics``). ``match_index`` reads ``arena.match.events``:
per match its seats (any number), mode and result, and every event as logged, for
``GET /v1/matches/{id}/events`` and the replay.

Both apply only each stream's next event (architecture rule 2), remembering the last one in their
own tables, and both write a batch in a few statements (``apply_batch``); ``apply`` is the same
code on a batch of one, so the two cannot disagree.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena_games.contract import UnitStanding
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg
from arena_games.registry import READING
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Codec, EnvelopeError, Event
from arena_runtime.eventlog import Record
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.readmodels.tables import (
    credit_movements,
    game_statistics,
    ghost_sharing,
    ghost_streams,
    match_events,
    match_index,
    match_seats,
    rating_history,
    rating_ladders,
    rating_players,
    season_games,
    season_standings,
    unit_standings,
)
from arena_runtime.schemas.match import MODE_NAMES
from arena_runtime.schemas.rating import CREDITS_PREFIX, as_v2
from arena_runtime.sql.projection import Projection, Skipped, dialect_insert, dialect_name
from arena_runtime.streams import is_next
from google.protobuf.message import Message
from sqlalchemy import Table, bindparam, case, insert, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from arena_rating.ladder import module_of_ladder

# Keys per IN (...) lookup: well under every driver's parameter limit.
LOOKUP_CHUNK = 500
MODES = MODE_NAMES  # a game's own modes too (Digits' daily, room, duel, ...)


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


@dataclass(slots=True)
class _Board:
    """What one batch adds to one row of a statistics board."""

    name: str
    episodes: int = 0
    wins: int = 0
    score: int = 0
    counts: dict[str, int] = field(default_factory=dict)


HUMAN = match_pb2.SEAT_KIND_HUMAN


def seat_results(seats: Sequence[pb.LadderPlayer]) -> dict[int, str]:
    """Each seat's result: "win" (ranked first), "loss", or "draw" when every seat ranks first;
    "solo" for a match of one seat (Digits: no opponent; the reason says how it went)."""
    if len(seats) == 1:
        return {seats[0].seat: "solo"}
    best = min((s.rank for s in seats), default=0)
    tied = all(s.rank == best for s in seats)
    return {s.seat: "draw" if tied else "win" if s.rank == best else "loss" for s in seats}


class RatingProjection(Projection):
    """Player profiles, match history, statistics boards and (by query) leaderboards, from the
    ladders."""

    name = "rating"
    tables = (
        rating_ladders,
        rating_players,
        rating_history,
        game_statistics,
        unit_standings,
        season_standings,
        season_games,
        credit_movements,
    )

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
        boards: dict[tuple[str, str, str, str], _Board] = {}
        seasons = _Seasons(session)
        ledgers = _Ledgers(session)
        for event in events:
            last = gates.get(event.stream, (0, ""))
            if not is_next(event, *last):
                continue
            gates[event.stream] = (event.sequence, event.batch_id)
            payload = as_v2(event.payload)
            if isinstance(payload, (pb.MatchRated, pb.MatchRecorded)):
                self._record(payload, event.sequence, profiles, history)
            if isinstance(payload, pb.MatchRecorded):
                self._count(payload, boards)
            await seasons.apply(payload)
            await ledgers.apply(event, payload)
        await ledgers.write()
        await self._write_gates(session, gates, known_streams)
        await self._write_profiles(session, profiles)
        await self._write_boards(session, boards)
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
        ratings: dict[int, tuple[int, int]] = {}
        if isinstance(payload, pb.MatchRated):
            seats = [s.player for s in payload.seats]
            ratings = {s.player.seat: (s.before, s.after) for s in payload.seats}
        else:
            seats = list(payload.seats)
        results = seat_results(seats)
        for player in seats:
            if player.kind != HUMAN:
                continue
            # Two seats: the other one; more: no single opponent (the match's seats are in
            # the match index).
            others = [s for s in seats if s.seat != player.seat]
            opponent = others[0] if len(others) == 1 else pb.LadderPlayer()
            result = results[player.seat]
            before = after = change = None
            if player.seat in ratings:
                before, after = ratings[player.seat]
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
                    "opponent_ai": opponent.kind not in (HUMAN, match_pb2.SEAT_KIND_UNSPECIFIED),
                    "rating_before": before,
                    "rating_after": after,
                    "rating_change": change,
                    "rank": player.rank,
                    "seats": len(seats),
                }
            )

    @staticmethod
    def _count(payload: pb.MatchRecorded, boards: dict[tuple[str, str, str, str], _Board]) -> None:
        for row in payload.statistics:
            key = (payload.game, row.board, row.kind, row.key)
            board = boards.get(key)
            if board is None:
                board = boards[key] = _Board(row.name)
            board.name = row.name
            board.episodes += row.episodes
            board.wins += row.wins
            board.score += row.score
            for name, value in row.counts.items():
                board.counts[name] = board.counts.get(name, 0) + value

    @staticmethod
    async def _write_boards(
        session: AsyncSession, boards: dict[tuple[str, str, str, str], _Board]
    ) -> None:
        """Known rows added to, new ones inserted (a board's counts are a JSON object)."""
        if not boards:
            return
        t = game_statistics
        stored = await _lookup(session, t, ("episodes", "wins", "score", "counts"), boards)
        inserts: list[dict[str, Any]] = []
        updates: list[dict[str, Any]] = []
        for (game, board_name, kind, key), board in boards.items():
            counts = dict(board.counts)
            values = {"episodes": board.episodes, "wins": board.wins, "score": board.score}
            if (game, board_name, kind, key) in stored:
                episodes, wins, score, old = stored[(game, board_name, kind, key)]
                for name, value in json.loads(old).items():
                    counts[name] = counts.get(name, 0) + value
                values = {
                    "episodes": episodes + board.episodes,
                    "wins": wins + board.wins,
                    "score": score + board.score,
                }
                target = updates
            else:
                target = inserts
            target.append(
                {
                    "k_game": game,
                    "k_board": board_name,
                    "k_kind": kind,
                    "k_key": key,
                    "name": board.name,
                    "counts": json.dumps(counts, sort_keys=True, separators=(",", ":")),
                    **values,
                }
            )
        if inserts:
            await session.execute(
                insert(t),
                [
                    {
                        "game": r.pop("k_game"),
                        "board": r.pop("k_board"),
                        "kind": r.pop("k_kind"),
                        "key": r.pop("k_key"),
                        **r,
                    }
                    for r in inserts
                ],
            )
        if updates:
            await session.execute(
                update(t)
                .where(
                    t.c.game == bindparam("k_game"),
                    t.c.board == bindparam("k_board"),
                    t.c.kind == bindparam("k_kind"),
                    t.c.key == bindparam("k_key"),
                )
                .values(
                    name=bindparam("name"),
                    episodes=bindparam("episodes"),
                    wins=bindparam("wins"),
                    score=bindparam("score"),
                    counts=bindparam("counts"),
                ),
                updates,
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
        rows = [
            {
                "game": game,
                "player_id": player_id,
                "display_name": p.display_name,
                "rating": _start(game) if p.rating is None else p.rating,
                "rating_seq": p.rating_seq,
                "games": p.games,
                "wins": p.wins,
                "losses": p.losses,
                "ranked_games": p.ranked_games,
                "last_ended_at_ms": p.last_ended_at_ms,
            }
            for (game, player_id), p in profiles.items()
        ]
        await session.execute(_profiles_upsert(dialect_name(session)), rows)


@functools.cache
def _profiles_upsert(dialect: str) -> Any:
    """New players inserted, known ones added to (built once per dialect)."""
    table = rating_players
    upsert = dialect_insert(dialect)(table)
    new = upsert.excluded
    # rating_seq 0 in the batch: the player was not rated in it, the stored rating stands.
    rated = new.rating_seq > 0
    return upsert.on_conflict_do_update(
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
    )


def _start(ladder: str) -> int:
    """The rating before any rated match on ``ladder`` (its game's)."""
    module = module_of_ladder(ladder)
    return module.ratings.start if module is not None else 0


# -- match index ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Match:
    """One match's index row as this batch leaves it; ``row`` holds the changed columns, and
    ``seats`` the seat rows first known in this batch, ``ranks`` the ranks it learnt."""

    known: bool
    last_sequence: int
    last_batch_id: str
    events: int = 0
    row: dict[str, Any] = field(default_factory=dict)
    seats: dict[int, dict[str, Any]] = field(default_factory=dict)
    ranks: dict[int, int] = field(default_factory=dict)


MATCH_PREFIX = "match-"
_INDEX_STATE = ("last_sequence", "last_batch_id")
SEAT_KINDS = {
    match_pb2.SEAT_KIND_HUMAN: "human",
    match_pb2.SEAT_KIND_AI: "ai",
    match_pb2.SEAT_KIND_SCRIPTED: "scripted",
}


def winner_of(ended: match_pb2.MatchEnded) -> int | None:
    """The seat ranked first alone; None for a tie (or a result naming no seat)."""
    if not ended.seats:
        return None
    best = min(s.rank for s in ended.seats)
    first = [s.seat for s in ended.seats if s.rank == best]
    return first[0] if len(first) == 1 else None


class MatchIndexProjection(Projection):
    """Per match its seats, mode and result, and every event it admitted, from the match log
    read through the seam (``MatchOpened`` and ``MatchEnded``, whatever the game; a log written
    before the seam reads as those too). ``match_events.type`` keeps the type each record was
    written as."""

    name = "match_index"
    tables = (match_index, match_seats, match_events)

    def __init__(self, codec: Codec = READING) -> None:
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
            self._index(event, match_id, match)
            rows.append(
                {
                    "match_id": match_id,
                    "sequence": event.sequence,
                    "type": event.written_type or event.type,
                    "time_ms": _ms(event),
                    "envelope": record.value,
                }
            )
        await self._write(session, matches)
        if rows:
            await session.execute(insert(match_events), rows)
        return skipped

    @staticmethod
    def _index(event: Event, match_id: str, match: _Match) -> None:
        payload = event.payload
        row = match.row
        if "created_at_ms" not in row and event.sequence == 1:
            row.update(mode="", room_code="", status="playing", created_at_ms=_ms(event))
        if isinstance(payload, match_pb2.MatchOpened):
            row.update(mode=MODES.get(payload.mode, "casual"), room_code=payload.room_code)
            for number, seat in enumerate(payload.seats, start=1):
                match.seats[number] = {
                    "match_id": match_id,
                    "seat": number,
                    "player_id": seat.player_id,
                    "display_name": seat.display_name,
                    "kind": SEAT_KINDS.get(seat.kind, "human"),
                    "rank": None,
                }
        elif isinstance(payload, match_pb2.MatchEnded) and row.get("status") != "over":
            row.update(
                status="over",
                winner=winner_of(payload),
                reason=payload.reason,
                ended_at_ms=_ms(event),
            )
            match.ranks.update({s.seat: s.rank for s in payload.seats})

    @staticmethod
    async def _write(session: AsyncSession, matches: dict[str, _Match]) -> None:
        # One executemany per set of columns written (under load nearly every match of a batch
        # only moves on: one UPDATE for them all), not a statement per match: each statement
        # costs a round trip that outweighs its row.
        updates: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        inserts: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        seats: list[dict[str, Any]] = []
        ranks: list[dict[str, Any]] = []
        for match_id, match in matches.items():
            if match.events == 0:
                continue
            values = {
                **match.row,
                "last_sequence": match.last_sequence,
                "last_batch_id": match.last_batch_id,
            }
            if match.known:
                values.update(k_match=match_id, k_events=match.events)
                updates.setdefault(tuple(values), []).append(values)
            else:
                values.update(match_id=match_id, events=match.events)
                inserts.setdefault(tuple(values), []).append(values)
            for number, seat in match.seats.items():
                seats.append({**seat, "rank": match.ranks.get(number)})
            ranks.extend(
                {"k_match": match_id, "k_seat": number, "rank": rank}
                for number, rank in match.ranks.items()
                if number not in match.seats
            )
        for columns, rows in updates.items():
            await session.execute(_index_update(columns), rows)
        for rows in inserts.values():
            await session.execute(insert(match_index), rows)
        if seats:
            await session.execute(insert(match_seats), seats)
        if ranks:
            await session.execute(
                update(match_seats)
                .where(
                    match_seats.c.match_id == bindparam("k_match"),
                    match_seats.c.seat == bindparam("k_seat"),
                )
                .values(rank=bindparam("rank")),
                ranks,
            )


@functools.cache
def _index_update(columns: tuple[str, ...]) -> Any:
    """The UPDATE of known matches that write ``columns`` (built once per set of them)."""
    t = match_index
    return (
        update(t)
        .where(t.c.match_id == bindparam("k_match"))
        .values(
            events=t.c.events + bindparam("k_events"),
            **{name: bindparam(name) for name in columns if not name.startswith("k_")},
        )
    )


#: The ghost stores' streams (matchmaking's ``ghosts-<game>``).
GHOSTS_PREFIX = "ghosts-"
_GHOSTS_KEY = GHOSTS_PREFIX.encode()


class SharingProjection(Projection):
    """Each player's ghost sharing preference per game, from the ghost stores' streams
    (``GhostSharingSet`` on ``ghosts-<game>``, by the reading rule): the read API shows a
    Digits duel's game to the other player only if its owner shares their login."""

    name = "ghost_sharing"
    tables = (ghost_streams, ghost_sharing)

    def __init__(self, codec: Codec = READING) -> None:
        self.topics = (topics.MATCHMAKING_EVENTS,)
        self.codec = codec

    async def apply(self, session: AsyncSession, record: Record) -> None:
        await self.apply_batch(session, [record])

    def passes_over(self, record: Record) -> bool:
        # The other matchmaking streams (rooms, queues): most of the topic, and not even decoded.
        return record.key is None or not record.key.startswith(_GHOSTS_KEY)

    async def apply_batch(self, session: AsyncSession, records: Sequence[Record]) -> list[Skipped]:
        skipped: list[Skipped] = []
        states: dict[str, tuple[int, str, bool]] = {}
        for record in records:
            if self.passes_over(record):
                continue
            try:
                event = self.codec.decode_event(record.value)
            except EnvelopeError as exc:
                skipped.append((record, exc))
                continue
            stream = event.stream
            if stream not in states:
                row = (
                    await session.execute(
                        select(ghost_streams).where(ghost_streams.c.stream == stream)
                    )
                ).first()
                states[stream] = (
                    (row.last_sequence, row.last_batch_id, True) if row else (0, "", False)
                )
            sequence, batch_id, known = states[stream]
            if not is_next(event, sequence, batch_id):
                continue
            states[stream] = (event.sequence, event.batch_id, known)
            payload = event.payload
            if isinstance(payload, dg.GhostSharingSet):
                game = stream.removeprefix(GHOSTS_PREFIX)
                t = ghost_sharing
                where = (t.c.game == game, t.c.player_id == payload.player_id)
                await session.execute(t.delete().where(*where))
                await session.execute(
                    insert(t).values(
                        game=game, player_id=payload.player_id, sharing=payload.sharing
                    )
                )
        for stream, (sequence, batch_id, known) in states.items():
            values = {"last_sequence": sequence, "last_batch_id": batch_id}
            if known:
                await session.execute(
                    update(ghost_streams).where(ghost_streams.c.stream == stream).values(values)
                )
            else:
                await session.execute(insert(ghost_streams).values(stream=stream, **values))
        return skipped


def rating_projections(settings: Settings) -> list[Projection]:
    """The factory registered under ``arena.projections``."""
    return [RatingProjection(), MatchIndexProjection(), SharingProjection()]


# -- credits ledgers ---------------------------------------------------------------------------

#: A ledger event's kind in ``credit_movements``, and how it moves the held total.
_CREDIT_KINDS: dict[type[Message], tuple[str, int]] = {
    pb.CreditsCredited: ("credited", 0),
    pb.CreditsDebited: ("debited", 0),
    pb.CreditsHeld: ("held", 1),
    pb.CreditsReleased: ("released", -1),
    pb.CreditsCaptured: ("captured", -1),
}


class _Ledgers:
    """Each ``credits-<player>`` movement as a row, with the balance and held total after it."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.rows: list[dict[str, Any]] = []
        self.held: dict[str, int] = {}

    async def apply(self, event: Event, payload: Any) -> None:
        kind = _CREDIT_KINDS.get(type(payload))
        if kind is None or not event.stream.startswith(CREDITS_PREFIX):
            return
        player = event.stream.removeprefix(CREDITS_PREFIX)
        if player not in self.held:
            t = credit_movements
            last = await self.session.scalar(
                select(t.c.held)
                .where(t.c.player_id == player)
                .order_by(t.c.sequence.desc())
                .limit(1)
            )
            self.held[player] = last or 0
        name, sign = kind
        self.held[player] += sign * payload.amount
        movement = getattr(payload, "movement_id", "") or getattr(payload, "hold_id", "")
        self.rows.append(
            {
                "player_id": player,
                "sequence": event.sequence,
                "kind": name,
                "movement_id": movement,
                "amount": payload.amount,
                "reason": getattr(payload, "reason", ""),
                "balance": payload.balance,
                "held": self.held[player],
                "time_ms": _ms(event),
            }
        )

    async def write(self) -> None:
        if self.rows:
            await self.session.execute(insert(credit_movements), self.rows)


# -- per-combat ladders: standings and season leaderboards ----------------------------------------


class _Seasons:
    """The season tables of per-combat ladders (``ratings.units``), event by event: a player's
    standing (``unit_standings``), their line on each season's board (``season_standings``) and
    the finished ranked games each season counts (``season_games``; a voided one no longer
    does). A take-back sets the player's standing and their line in the season it leaves them in;
    lines of earlier seasons keep the ratings they closed with (their games still leave)."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def apply(self, payload: Any) -> None:
        if isinstance(payload, pb.UnitRated):
            await self._rated(payload)
        elif isinstance(payload, pb.SeasonReset):
            await self._standing(payload.game, payload.player_id, payload.after, payload.season, 0)
        elif isinstance(payload, pb.RatingTakenBack):
            await self._standing(
                payload.game,
                payload.player_id,
                payload.after,
                payload.season_after,
                payload.season_units_after,
            )
            if payload.season_after:
                await self._line(
                    payload.game,
                    payload.season_after,
                    payload.player_id,
                    rating=payload.after,
                    units=payload.season_units_after,
                )
        elif isinstance(payload, pb.MatchVoided):
            await self._voided(payload)
        elif isinstance(payload, pb.MatchRecorded) and payload.mode == "ranked":
            await self._finished(payload)

    async def _get(self, table: Table, *key: Any) -> Any:
        where = [
            column == value for column, value in zip(table.primary_key.columns, key, strict=True)
        ]
        return (await self.session.execute(select(table).where(*where))).first()

    async def _standing(
        self,
        game: str,
        player: str,
        rating: int,
        season: str,
        units: int,
        name: str = "",
        time_ms: int = 0,
    ) -> None:
        t = unit_standings
        row = await self._get(t, game, player)
        values = {"rating": rating, "season": season, "season_units": units}
        if row is None:
            await self.session.execute(
                insert(t).values(
                    game=game,
                    player_id=player,
                    display_name=name,
                    since_ms=time_ms,
                    **values,
                )
            )
        else:
            if name:
                values["display_name"] = name
            await self.session.execute(
                update(t).where(t.c.game == game, t.c.player_id == player).values(**values)
            )

    async def _line(
        self,
        game: str,
        season: str,
        player: str,
        *,
        rating: int | None = None,
        units: int | None = None,
        games: int = 0,
    ) -> None:
        """Set a player's rating and units on a season's board and add to its games (the line
        made from their standing if new)."""
        t = season_standings
        row = await self._get(t, game, season, player)
        if row is None:
            standing = await self._get(unit_standings, game, player)
            module = module_of_ladder(game)
            if standing is None or module is None or module.ratings.units is None:
                return
            held = UnitStanding(standing.rating, standing.season, standing.season_units)
            start = module.ratings.units.rating_in_season(held, season)
            await self.session.execute(
                insert(t).values(
                    game=game,
                    season=season,
                    player_id=player,
                    display_name=standing.display_name,
                    rating=start if rating is None else rating,
                    units=(held.season_units if held.season == season else 0)
                    if units is None
                    else units,
                    games=max(games, 0),
                    since_ms=standing.since_ms,
                )
            )
            return
        values: dict[str, Any] = {"games": max(row.games + games, 0)}
        if rating is not None:
            values["rating"] = rating
        if units is not None:
            values["units"] = units
        await self.session.execute(
            update(t)
            .where(t.c.game == game, t.c.season == season, t.c.player_id == player)
            .values(**values)
        )

    async def _rated(self, payload: pb.UnitRated) -> None:
        player = payload.player
        await self._standing(
            payload.game,
            player.player_id,
            payload.after,
            payload.season,
            payload.season_units,
            name=player.display_name,
            time_ms=payload.time_ms,
        )
        await self._line(
            payload.game,
            payload.season,
            player.player_id,
            rating=payload.after,
            units=payload.season_units,
        )

    async def _finished(self, payload: pb.MatchRecorded) -> None:
        module = module_of_ladder(payload.game)
        units = module.ratings.units if module is not None else None
        if units is None:
            return
        if await self._get(season_games, payload.game, payload.match_id) is not None:
            return  # voided before it ended
        season = units.season_of(payload.ended_at_ms)
        counted = units.counts(payload.reason)
        for seat in payload.seats:
            if seat.kind != HUMAN:
                continue
            await self.session.execute(
                insert(season_games).values(
                    game=payload.game,
                    match_id=payload.match_id,
                    player_id=seat.player_id,
                    season=season,
                    counted=counted,
                    voided=False,
                )
            )
            if counted:
                await self._line(payload.game, season, seat.player_id, games=1)
            break  # one seat (a per-combat game is played alone)

    async def _voided(self, payload: pb.MatchVoided) -> None:
        t = season_games
        row = await self._get(t, payload.game, payload.match_id)
        if row is None:
            await self.session.execute(
                insert(t).values(
                    game=payload.game,
                    match_id=payload.match_id,
                    player_id="",
                    season="",
                    counted=False,
                    voided=True,
                )
            )
            return
        if row.voided:
            return
        await self.session.execute(
            update(t)
            .where(t.c.game == payload.game, t.c.match_id == payload.match_id)
            .values(voided=True, counted=False)
        )
        if row.counted:
            await self._line(payload.game, row.season, row.player_id, games=-1)
