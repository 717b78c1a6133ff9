"""The rating and match-index projections: a batch at once equals record by record, and only
each stream's next event counts (duplicates and a zombie writer's events change nothing)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from arena_games.registry import READING
from arena_rating.projections import SharingProjection, rating_projections
from arena_rating.results import MatchSoFar, rate_match
from arena_rating.service import ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, new_command, new_id
from arena_runtime.eventlog import OutgoingRecord, Record
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.readmodels.tables import match_events, match_index, rating_history
from arena_runtime.schemas.rating import ladder_stream, rate_command_id
from arena_runtime.sql import ProjectionRunner, create_engine, session_factory, upgrade_head
from sqlalchemy import func, select

from tests.harness.tables import snapshot
from tests.services.rating import matches

LADDER = ladder_stream("maths-warriors")


async def test_batches_equal_single_records_and_only_next_events_count(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    rng = random.Random(8)
    async with open_event_log(settings) as log:
        await topics.ensure_topics(log, 2)
        runner = ladder_runner(log)
        streams = []
        for number in range(12):
            a, b = rng.sample(["p_a", "p_b", "p_c", "p_d"], 2)
            mode = match_pb2.MATCH_MODE_RANKED if number % 3 else match_pb2.MATCH_MODE_CASUAL
            seats = (matches.seat(a), matches.seat(b))
            stream = matches.match_events(f"m{number}", seats, mode, matches.play(rng))
            streams.append(stream)
            await matches.append(log, stream)
            so_far = MatchSoFar()
            for event in stream:
                so_far.admit(READING.decode_event(matches.LEGACY.encode_event(event)))
            assert so_far.opened is not None and so_far.ended is not None
            rate = rate_match(so_far.opened, so_far.ended)
            assert rate is not None
            await runner.handle(new_command(LADDER, rate, command_id=rate_command_id(f"m{number}")))
        # A duplicate delivery, a zombie's event on a taken number, and a record that is no event.
        first = streams[0]
        zombie = replace(first[1], event_id=new_id(), batch_id=new_id())
        await matches.append(log, [first[-1], zombie])
        await log.append(topics.MATCH_EVENTS, [OutgoingRecord(value=b"junk", key=b"match-m0")])
        await log.append(topics.RATING_EVENTS, [OutgoingRecord(value=b"junk", key=LADDER.encode())])

        tables = []
        for batch_size in (1, 500):
            engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / f'b{batch_size}.sqlite3'}")
            await upgrade_head(engine)
            sessions = session_factory(engine)
            projections = rating_projections(settings)
            for projection in projections:
                await ProjectionRunner(projection, log, sessions, batch_size=batch_size).catch_up()
            tables.append(await snapshot(sessions, projections))
            async with sessions() as session:
                logged = sum(len(s) for s in streams)
                assert await session.scalar(select(func.count()).select_from(match_events)) == (
                    logged
                )
                assert await session.scalar(select(func.count()).select_from(match_index)) == 12
                # Two rows per game: one from each player's side.
                assert await session.scalar(select(func.count()).select_from(rating_history)) == (
                    24
                )
                envelopes = await session.scalars(
                    select(match_events.c.envelope)
                    .where(match_events.c.match_id == "m0")
                    .order_by(match_events.c.sequence)
                )
                assert [CODEC.decode_event(e).event_id for e in envelopes] == [
                    e.event_id for e in first
                ]
            await engine.dispose()
        assert tables[0] == tables[1]


def test_ghost_sharing_passes_over_every_stream_but_the_ghost_stores() -> None:
    # Most of matchmaking's records (rooms, queues): their offsets need no transaction each.
    sharing = SharingProjection()

    def record(key: bytes | None) -> Record:
        return Record(topics.MATCHMAKING_EVENTS, 0, 0, key, b"")

    assert sharing.passes_over(record(b"room-ABCD"))
    assert sharing.passes_over(record(None))
    assert not sharing.passes_over(record(b"ghosts-digits"))
