"""The replay test of issue 5: many concurrent games rated while the rating service restarts;
then every projection is rebuilt from the log and equals the live one, and the ratings equal the
fold of the ladder. On the embedded log with SQLite, and on the real broker with PostgreSQL."""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import pytest
from arena_engine import rating as elo
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_games.registry import ladder_tier
from arena_rating import ladder
from arena_rating.projections import rating_projections
from arena_rating.service import build_service, ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Event, new_id
from arena_runtime.eventlog import EventLog
from arena_runtime.host import Runtime, Service, open_runtime
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.readmodels import queries
from arena_runtime.readmodels.tables import rating_players
from arena_runtime.schemas.rating import ladder_stream
from arena_runtime.snapshots import SnapshotStore
from arena_runtime.sql import session_factory
from arena_runtime.sql.rebuild import runners
from arena_runtime.streams import fold
from sqlalchemy import insert

from tests.harness.tables import snapshot
from tests.services.rating import matches
from tests.services.rating.backends import distributed_settings, rebuilt_equals_live

LADDER = ladder_stream("maths-warriors")
PLAYERS = [f"p_{n:02d}" for n in range(10)]


async def eventually(check: Callable[[], Awaitable[bool]], what: str, limit: float = 90) -> None:
    """Wait until ``check`` holds (a bound on waiting, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting: {what}")
        await asyncio.sleep(0.05)


def games(rng: random.Random, count: int) -> list[list[Event]]:
    """``count`` match streams: mostly ranked between two people, some casual, some vs the AI."""
    streams = []
    for number in range(count):
        a, b = rng.sample(PLAYERS, 2)
        kind = rng.random()
        if kind < 0.15:
            seats = (matches.seat(a), matches.seat("ai-hard", ai=True))
            mode = match_pb2.MATCH_MODE_CASUAL
        else:
            seats = (matches.seat(a), matches.seat(b))
            mode = match_pb2.MATCH_MODE_CASUAL if kind < 0.3 else match_pb2.MATCH_MODE_RANKED
        match_id = f"g{number:03d}-{secrets.token_hex(3)}"
        streams.append(matches.match_events(match_id, seats, mode, matches.play(rng)))
    return streams


async def write_concurrently(log: EventLog, streams: list[list[Event]], rng: random.Random) -> None:
    """Each match appends its events in its own task, with random pauses: they interleave."""

    async def one(events: list[Event], seed: int) -> None:
        pause = random.Random(seed)
        for event in events:
            await matches.append(log, [event])
            await asyncio.sleep(pause.random() * 0.004)

    await asyncio.gather(*(one(s, rng.getrandbits(32)) for s in streams))


def zombies(streams: list[list[Event]]) -> list[Event]:
    """Events a zombie writer could leave: a second GameEnded for an existing sequence number,
    claiming the other seat won. Readers must ignore them."""
    out = []
    for events in streams[:5]:
        last = events[-1]
        assert isinstance(last.payload, mw.GameEnded)
        flipped = mw.GameEnded()
        flipped.CopyFrom(last.payload)
        flipped.winner = 3 - last.payload.winner
        out.append(replace(last, event_id=new_id(), payload=flipped, batch_id=new_id()))
    return out


async def recorded(log: EventLog) -> ladder.Ladder:
    return (await ladder_runner(log).load(LADDER)).state


async def run_service(runtime: Runtime, until: Callable[[], Awaitable[bool]], what: str) -> None:
    service: Service = await build_service(runtime)
    await service.start()
    try:
        await eventually(until, what)
    finally:
        await service.stop()


async def check_replay(settings: Settings, count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    streams = games(rng, count)
    thirds = [
        streams[: count // 3],
        streams[count // 3 : 2 * count // 3],
        streams[2 * count // 3 :],
    ]
    async with open_runtime(settings) as runtime:
        log = runtime.log
        await topics.ensure_topics(log, settings.partitions)
        sessions = session_factory(runtime.db)
        projections = rating_projections(settings)
        live = runners(settings, log, sessions, projections)

        async def follow() -> None:
            for runner in live:
                await runner.step()

        async def at_least(n: int) -> bool:
            await follow()
            return len((await recorded(log)).recorded) >= n

        # 1. Games written before the service ever ran; it stops (a restart) part-way through.
        await write_concurrently(log, thirds[0], rng)
        await run_service(runtime, lambda: at_least(len(thirds[0]) // 2), "half the first third")
        # 2. Games finish while no rating service runs at all.
        await write_concurrently(log, thirds[1], rng)
        # 3. The service comes back, and the last games are played while it is running; then it
        #    restarts again while games are still arriving.
        writing = asyncio.create_task(write_concurrently(log, thirds[2], rng))
        await run_service(runtime, lambda: at_least(len(thirds[0]) + 3), "the first third")
        await matches.append(log, zombies(streams))
        await writing
        # A GameEnded delivered twice (a producer retry) is the same record again.
        await matches.append(log, [streams[0][-1]])
        await run_service(runtime, lambda: at_least(count), "every game")

        state = await recorded(log)
        assert len(state.recorded) == count
        for runner in live:
            await runner.catch_up()
        live_tables = await snapshot(sessions, projections)

        # The ladder is the fold of its own events; the zombies and the duplicate changed nothing.
        partition = await ladder_runner(log).partition_of(LADDER)
        ladder_events = [
            CODEC.decode_event(r.value)
            for r in await log.read(topics.RATING_EVENTS, partition, 0, 10 * count)
            if r.key == LADDER.encode()
        ]
        assert [e.sequence for e in ladder_events] == list(range(1, count + 1))
        folded, _ = fold(ladder.initial(LADDER), ladder.apply, ladder_events)
        assert folded == state
        # The service snapshotted the ladder's partition as it went (after each replay, at each
        # graceful stop): the newest snapshot plus the tail holds what the full replay holds.
        resumed, replayed = ladder_runner(log), ladder_runner(log)
        _, used = await resumed.gain_partition(partition, SnapshotStore(log, topics.RATING_EVENTS))
        await replayed.catch_up_partition(partition)
        assert used and resumed.view(LADDER) == replayed.view(LADDER)
        # Each rated game is the engine's Elo on the ratings before it; winners are the logged ones.
        winners = {
            events[0].payload.match_id: events[-1].payload.winner_player_id for events in streams
        }
        ratings: dict[str, int] = {}
        for event in ladder_events:
            payload = matches.sides(event.payload)
            assert payload.winner.player_id == winners[event.payload.match_id]
            if isinstance(event.payload, pb.MatchRated):
                w, lo = payload.winner.player_id, payload.loser.player_id
                result = elo.elo_maths_warriors(ratings.get(w, 1000), ratings.get(lo, 1000))
                assert (payload.winner_after, payload.loser_after) == (
                    result.winner_after,
                    result.loser_after,
                )
                ratings[w], ratings[lo] = result.winner_after, result.loser_after
        assert ratings == state.ratings
        assert any(isinstance(e.payload, pb.MatchRecorded) for e in ladder_events)

        # The read side shows the same ratings.
        async with sessions() as session:
            board = await queries.leaderboard(
                session, "maths-warriors", tier=ladder_tier, limit=100
            )
            assert {e.player_id: e.rating for e in board.entries} == state.ratings
            assert [e.rank for e in board.entries] == list(range(1, len(board.entries) + 1))
            assert len(live_tables["match_index"]) == count

        # A row no event explains: the rebuild must drop it.
        async with sessions() as session, session.begin():
            await session.execute(
                insert(rating_players).values(
                    game="maths-warriors",
                    player_id="p_ghost",
                    display_name="GHOST",
                    rating=2500,
                    rating_seq=0,
                    games=1,
                    wins=1,
                    losses=0,
                    ranked_games=1,
                    last_ended_at_ms=0,
                )
            )

    # `arena rebuild`, as an operator runs it: every projection emptied and replayed from the log.
    await rebuilt_equals_live(monkeypatch, settings, projections, live_tables)


async def test_replay_equals_live_on_the_embedded_log_and_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await check_replay(Settings(data_dir=tmp_path, partitions=4), 45, monkeypatch)


@pytest.mark.kafka
@pytest.mark.postgres
async def test_replay_equals_live_on_the_broker_and_postgresql(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = await distributed_settings(request, tmp_path)
    await check_replay(settings, 24, monkeypatch)
