"""The projection runner on SQLite and PostgreSQL: exactly-once application across batches,
restarts, failures, malformed records and a second runner racing on the same projection."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from arena_runtime.config import Settings
from arena_runtime.eventlog import EventLog, OutgoingRecord, Record, TopicPartition, TopicSpec
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.sql import (
    Projection,
    ProjectionError,
    ProjectionRunner,
    StreamActivity,
    stream_activity,
)
from arena_runtime.sql.metadata import projection_offsets
from arena_runtime.sql.projection import Skipped
from sqlalchemy import event, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from structlog.testing import capture_logs

from tests.runtime.sql.ledger import TOPICS, Ledger, create_ledger_table, ledger_rows


@pytest.fixture
async def ledger_table(engine: AsyncEngine) -> None:
    await create_ledger_table(engine)


async def fill(log: EventLog, records_per_topic: int = 120, partitions: int = 3) -> None:
    await log.create_topics([TopicSpec(t, partitions=partitions) for t in TOPICS])
    for topic in TOPICS:
        await log.append(
            topic,
            [
                OutgoingRecord(value=f"v{i}".encode(), key=f"s{i % 7}".encode())
                for i in range(records_per_topic)
            ],
        )


async def all_positions(log: EventLog) -> list[tuple[str, int, int]]:
    positions = []
    for topic in TOPICS:
        for p, end in (await log.end_offsets(topic)).items():
            positions.extend((topic, p, o) for o in range(end))
    return sorted(positions)


@pytest.mark.usefixtures("ledger_table")
async def test_applies_every_record_once_and_stores_offsets(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    await fill(log)
    runner = ProjectionRunner(Ledger(), log, sessions, batch_size=16)
    assert await runner.lag() == 240
    assert await runner.catch_up() == 240
    assert await ledger_rows(sessions) == await all_positions(log)
    ends = await runner.end_offsets()
    assert await runner.stored_offsets() == ends
    assert await runner.lag() == 0
    assert await runner.step() == 0


@pytest.mark.usefixtures("ledger_table")
async def test_a_new_runner_resumes_from_the_stored_offsets(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    await fill(log, records_per_topic=30)
    await ProjectionRunner(Ledger(), log, sessions, batch_size=7).step()
    partial = await ledger_rows(sessions)
    assert 0 < len(partial) < 60
    for topic in TOPICS:
        await log.append(topic, [OutgoingRecord(value=b"late", key=b"s1")])
    await ProjectionRunner(Ledger(), log, sessions, batch_size=7).catch_up()
    assert await ledger_rows(sessions) == await all_positions(log)


@pytest.mark.usefixtures("ledger_table")
async def test_a_failing_batch_leaves_rows_and_offsets_untouched(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    await log.create_topics([TopicSpec(TOPICS[0])])
    await log.append(TOPICS[0], [OutgoingRecord(value=f"v{i}".encode()) for i in range(10)])
    failing = ProjectionRunner(Ledger(fail_on=b"v5"), log, sessions, batch_size=4)
    with pytest.raises(RuntimeError, match="bug in the projection"):
        await failing.catch_up()
    # The first batch (0-3) committed; the failing one (4-7) left nothing behind.
    assert [o for _, _, o in await ledger_rows(sessions)] == [0, 1, 2, 3]
    assert await failing.stored_offsets() == {TopicPartition(TOPICS[0], 0): 4}
    await ProjectionRunner(Ledger(), log, sessions, batch_size=4).catch_up()
    assert [o for _, _, o in await ledger_rows(sessions)] == list(range(10))


@pytest.mark.usefixtures("ledger_table")
async def test_malformed_records_are_skipped_and_counted(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    from arena_runtime.metrics import sample

    series = "arena_malformed_records_total"
    labels = {"topic": TOPICS[0], "group": "projection:ledger", "reason": "malformed"}
    before = sample(series, labels)
    undecodable = {**labels, "reason": "undecodable"}
    before_undecodable = sample(series, undecodable)
    await log.create_topics([TopicSpec(TOPICS[0])])
    values = [b"v0", b"malformed", b"v2", b"undecodable", b"v4"]
    await log.append(TOPICS[0], [OutgoingRecord(value=v) for v in values])
    runner = ProjectionRunner(Ledger(), log, sessions)
    assert await runner.catch_up() == 5
    assert [o for _, _, o in await ledger_rows(sessions)] == [0, 2, 4]
    assert await runner.lag() == 0
    assert sample(series, labels) == before + 1
    assert sample(series, undecodable) == before_undecodable + 1


@pytest.mark.usefixtures("ledger_table")
async def test_two_runners_racing_on_one_projection_apply_each_record_once(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    await fill(log, records_per_topic=200, partitions=2)
    a = ProjectionRunner(Ledger(), log, sessions, batch_size=5)
    b = ProjectionRunner(Ledger(), log, sessions, batch_size=5)
    await asyncio.gather(a.catch_up(), b.catch_up())
    rows = await ledger_rows(sessions)
    assert [k for k, n in Counter(rows).items() if n > 1] == []
    assert rows == await all_positions(log)


async def test_two_runners_racing_on_shared_rows_end_with_the_same_table(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    # stream_activity rows are shared by many records: racing runners collide on them (duplicate
    # keys, row locks) before they collide on the offsets, and must still count each record once.
    await fill(log, records_per_topic=200, partitions=2)
    a = ProjectionRunner(StreamActivity(TOPICS), log, sessions, batch_size=5)
    b = ProjectionRunner(StreamActivity(TOPICS), log, sessions, batch_size=5)
    await asyncio.gather(a.catch_up(), b.catch_up())
    async with sessions() as session:
        raced = sorted((await session.execute(select(stream_activity))).all())
    await ProjectionRunner(StreamActivity(TOPICS), log, sessions).rebuild()
    async with sessions() as session:
        assert sorted((await session.execute(select(stream_activity))).all()) == raced


async def test_topics_that_do_not_exist_yet_are_waited_for(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    runner = ProjectionRunner(StreamActivity(["later"]), log, sessions)
    assert await runner.catch_up() == 0
    await log.create_topics([TopicSpec("later", partitions=2)])
    await log.append("later", [OutgoingRecord(value=b"x", key=b"k", partition=1)])
    assert await runner.lag() == 1
    assert await runner.catch_up() == 1


async def test_run_follows_the_log_until_stopped(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    await log.create_topics([TopicSpec("live")])
    runner = ProjectionRunner(StreamActivity(["live"]), log, sessions, idle_sleep=0.01)
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    await log.append("live", [OutgoingRecord(value=b"x", key=b"m1") for _ in range(3)])
    for _ in range(500):  # bounded: the runner polls every 10 ms
        if await runner.lag() == 0:
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(task, 5)
    async with sessions() as session:
        assert await session.scalar(select(stream_activity.c.records)) == 3


async def test_stream_activity_counts_per_stream(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    await fill(log, records_per_topic=50)
    await log.append(TOPICS[0], [OutgoingRecord(value=b"no stream")])  # keyless: not counted
    await ProjectionRunner(StreamActivity(TOPICS), log, sessions, batch_size=9).catch_up()
    expected: dict[tuple[str, str], list[Record]] = {}
    for topic in TOPICS:
        for p in range(await log.partitions(topic)):
            for r in await log.read(topic, p, 0, 1000):
                if r.key is not None:
                    expected.setdefault((topic, r.key.decode()), []).append(r)
    async with sessions() as session:
        rows = (await session.execute(select(stream_activity))).all()
        assert await session.scalar(select(func.count()).select_from(stream_activity)) == 14
    for row in rows:
        records = expected[(row.topic, row.stream)]
        last = max(records, key=lambda r: r.offset)
        assert row.records == len(records)
        assert row.first_seen_ms == min(r.timestamp_ms for r in records)
        assert row.last_seen_ms == last.timestamp_ms
        assert (row.last_partition, row.last_offset) == (last.partition, last.offset)


class OneByOne(StreamActivity):
    """stream_activity through the plain per-record ``apply``."""

    apply_batch = Projection.apply_batch


@pytest.mark.parametrize("batch_size", [1, 4, 64])
async def test_stream_activity_in_batches_equals_record_by_record(
    sessions: async_sessionmaker[AsyncSession], log: EventLog, batch_size: int
) -> None:
    rng = random.Random(batch_size)
    await log.create_topics([TopicSpec(t, partitions=2) for t in TOPICS])
    for _ in range(6):
        topic = rng.choice(TOPICS)
        await log.append(
            topic,
            [
                OutgoingRecord(
                    value=b"e",
                    key=None if rng.random() < 0.1 else f"s{rng.randrange(12)}".encode(),
                    partition=rng.randrange(2),
                )
                for _ in range(rng.randint(1, 40))
            ],
        )

    async def table_after(projection: StreamActivity) -> list[Any]:
        runner = ProjectionRunner(projection, log, sessions, batch_size=batch_size)
        await runner.rebuild()
        async with sessions() as session:
            return sorted((await session.execute(select(stream_activity))).all())

    one_by_one = await table_after(OneByOne(TOPICS))
    assert one_by_one
    assert await table_after(StreamActivity(TOPICS)) == one_by_one


async def test_rebuild_reproduces_the_live_tables(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    await fill(log, records_per_topic=40)
    live = ProjectionRunner(StreamActivity(TOPICS), log, sessions, batch_size=3)
    for round_ in range(4):  # appends and applications interleaved, as in a live service
        await live.step()
        await log.append(TOPICS[round_ % 2], [OutgoingRecord(value=b"x", key=b"s3")])
    await live.catch_up()
    async with sessions() as session:
        before = sorted((await session.execute(select(stream_activity))).all())
    rebuilt = ProjectionRunner(StreamActivity(TOPICS), log, sessions, batch_size=50)
    assert await rebuilt.rebuild() == 84
    async with sessions() as session:
        after = sorted((await session.execute(select(stream_activity))).all())
    assert after == before


def test_badly_declared_projections_are_refused(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    with pytest.raises(ProjectionError, match="at least one named topic"):
        ProjectionRunner(StreamActivity([]), log, sessions)
    nameless = StreamActivity(["t"])
    nameless.name = ""
    with pytest.raises(ProjectionError, match="name"):
        ProjectionRunner(nameless, log, sessions)
    with pytest.raises(ValueError, match="batch_size"):
        ProjectionRunner(StreamActivity(["t"]), log, sessions, batch_size=0)


@pytest.mark.usefixtures("ledger_table")
async def test_a_step_tells_whether_a_partition_had_more_than_one_batch(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
) -> None:
    # The projection worker lingers between steps only when no partition filled a batch.
    await fill(log, records_per_topic=30, partitions=1)
    runner = ProjectionRunner(Ledger(), log, sessions, batch_size=20)
    assert await runner.step() == 40 and runner.filled_a_batch
    assert await runner.step() == 20 and not runner.filled_a_batch
    assert await runner.step() == 0 and not runner.filled_a_batch


@pytest.mark.usefixtures("ledger_table")
async def test_offsets_past_the_end_of_a_new_log_are_reported_once_and_nothing_applied(
    sessions: async_sessionmaker[AsyncSession], log: EventLog, tmp_path: Path
) -> None:
    """The rows were applied from another log (an in-memory broker restarted, topics made again):
    the runner cannot tell which rows hold, so it applies nothing and says so, once a partition,
    with the way out."""
    await fill(log, records_per_topic=30)
    await ProjectionRunner(Ledger(), log, sessions).catch_up()
    rows = await ledger_rows(sessions)
    async with open_event_log(Settings(data_dir=tmp_path / "new-log")) as new_log:
        await fill(new_log, records_per_topic=6)
        runner = ProjectionRunner(Ledger(), new_log, sessions)
        with capture_logs() as logs:
            assert await runner.step() == 0
            assert await runner.step() == 0
    ahead = [entry for entry in logs if entry["log_level"] == "error"]
    assert len(ahead) == 2 * 3  # each partition of each topic, once
    assert all("arena rebuild" in entry["event"] for entry in ahead)
    every = {(topic, partition) for topic in TOPICS for partition in range(3)}
    assert {(e["topic"], e["partition"]) for e in ahead} == every
    assert all(e["stored_offset"] > e["end_offset"] for e in ahead)
    assert await ledger_rows(sessions) == rows


class _Calls(Ledger):
    """A ledger that remembers the records of each ``apply_batch`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[tuple[str, int, int]]] = []

    async def apply_batch(self, session: AsyncSession, records: Sequence[Record]) -> list[Skipped]:
        self.calls.append([(r.topic, r.partition, r.offset) for r in records])
        return await super().apply_batch(session, records)


@pytest.mark.usefixtures("ledger_table")
async def test_a_step_applies_every_partition_in_one_call_and_its_offsets_in_one_statement(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], log: EventLog
) -> None:
    # Statements per step, not per partition: under load a step touches most partitions with a
    # few records each (the projections process's CPU went on per-partition statements).
    await fill(log, records_per_topic=30)
    projection = _Calls()
    runner = ProjectionRunner(projection, log, sessions, batch_size=4)
    await runner.step()  # the offsets' rows are made
    projection.calls.clear()
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        statements.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", seen)
    try:
        assert await runner.step() == 6 * 4
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", seen)
    # Partitions one after the other, in the order of the topics and partitions.
    positions = [
        (topic, partition, offset)
        for topic in TOPICS
        for partition in range(3)
        for offset in range(4, 8)
    ]
    assert projection.calls == [positions]
    assert len([s for s in statements if "projection_offsets" in s]) == 1
    assert await runner.stored_offsets() == {
        TopicPartition(topic, partition): 8 for topic in TOPICS for partition in range(3)
    }


@pytest.mark.usefixtures("ledger_table")
async def test_a_step_is_rolled_back_whole_when_one_partition_moved(
    sessions: async_sessionmaker[AsyncSession], log: EventLog
) -> None:
    await fill(log, records_per_topic=30)
    runner = ProjectionRunner(Ledger(), log, sessions, batch_size=4)
    await runner.step()
    rows = await ledger_rows(sessions)
    moved = TopicPartition(TOPICS[1], 2)
    # Another runner of the projection took that partition's next batch meanwhile.
    async with sessions() as session, session.begin():
        await session.execute(
            update(projection_offsets)
            .where(
                projection_offsets.c.projection == "ledger",
                projection_offsets.c.topic == moved.topic,
                projection_offsets.c.partition == moved.partition,
            )
            .values(next_offset=8)
        )
    assert await runner.step() == 0
    assert await ledger_rows(sessions) == rows
    stored = await runner.stored_offsets()
    assert stored.pop(moved) == 8
    assert set(stored.values()) == {4}


class _PassingOver(Ledger):
    """A ledger that writes nothing for records whose value starts with "x", and says so."""

    def passes_over(self, record: Record) -> bool:
        return record.value.startswith(b"x")

    async def apply(self, session: AsyncSession, record: Record) -> None:
        if not self.passes_over(record):
            await super().apply(session, record)


@pytest.mark.usefixtures("ledger_table")
async def test_records_passed_over_move_the_offsets_without_a_transaction_of_their_own(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], log: EventLog
) -> None:
    # A projection that ignores most of its topics' records (ghost sharing, on matchmaking's)
    # committed a transaction of offsets alone on every step.
    topic = TOPICS[0]
    tp = TopicPartition(topic, 0)
    await log.create_topics([TopicSpec(topic)])
    await log.append(topic, [OutgoingRecord(value=f"x{i}".encode()) for i in range(10)])
    runner = ProjectionRunner(_PassingOver(topics=(topic,)), log, sessions)
    await runner.step()  # the offsets' row is made
    assert await runner.stored_offsets() == {tp: 0}  # nothing stored yet
    await log.append(topic, [OutgoingRecord(value=f"x{i}".encode()) for i in range(10, 15)])
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        statements.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", seen)
    try:
        assert await runner.step() == 5
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", seen)
    assert statements == []
    # A restart now reads them again, and passes over them again.
    assert await ProjectionRunner(_PassingOver(topics=(topic,)), log, sessions).lag() == 15
    # The next transaction stores them with its own.
    await log.append(topic, [OutgoingRecord(value=b"v15")])
    assert await runner.step() == 1
    assert await runner.stored_offsets() == {tp: 16}
    assert await ledger_rows(sessions) == [(topic, 0, 15)]
    # With nothing new, a step stores what it held.
    await log.append(topic, [OutgoingRecord(value=b"x16")])
    assert await runner.step() == 1
    assert await runner.stored_offsets() == {tp: 16}
    assert await runner.step() == 0
    assert await runner.stored_offsets() == {tp: 17}
    # And catching up leaves nothing unsaved.
    await log.append(topic, [OutgoingRecord(value=b"x17")])
    assert await runner.catch_up() == 1
    assert await runner.stored_offsets() == {tp: 18}


@pytest.mark.usefixtures("ledger_table")
async def test_offsets_held_unsaved_are_stored_within_a_bound_under_steady_traffic(
    sessions: async_sessionmaker[AsyncSession],
    log: EventLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arena_runtime.sql import runner as runner_module

    topic = TOPICS[0]
    await log.create_topics([TopicSpec(topic)])
    runner = ProjectionRunner(_PassingOver(topics=(topic,)), log, sessions)
    monkeypatch.setattr(runner_module, "UNSAVED_SECONDS", 0.05)
    await log.append(topic, [OutgoingRecord(value=b"x0")])
    assert await runner.step() == 1
    assert await runner.stored_offsets() == {TopicPartition(topic, 0): 0}
    await asyncio.sleep(0.06)
    await log.append(topic, [OutgoingRecord(value=b"x1")])
    assert await runner.step() == 1
    assert await runner.stored_offsets() == {TopicPartition(topic, 0): 2}


@pytest.mark.usefixtures("ledger_table")
async def test_offsets_held_unsaved_give_way_to_another_runner(
    sessions: async_sessionmaker[AsyncSession], log: EventLog
) -> None:
    topic = TOPICS[0]
    await log.create_topics([TopicSpec(topic)])
    await log.append(topic, [OutgoingRecord(value=b"x0"), OutgoingRecord(value=b"x1")])
    a = ProjectionRunner(_PassingOver(topics=(topic,)), log, sessions)
    b = ProjectionRunner(_PassingOver(topics=(topic,)), log, sessions)
    assert await a.step() == 2  # held
    await log.append(topic, [OutgoingRecord(value=b"v2")])
    assert await b.catch_up() == 3
    await log.append(topic, [OutgoingRecord(value=b"v3")])
    assert await a.step() == 0  # its held offset moved under it: rolled back, reloaded
    await a.catch_up()
    assert await ledger_rows(sessions) == [(topic, 0, 2), (topic, 0, 3)]
    assert await a.stored_offsets() == {TopicPartition(topic, 0): 4}
