"""Projection runner throughput on SQLite and PostgreSQL, beside a baseline from the same run.

* stream_activity: the runtime's example projection replaying an embedded log from the start
  through ProjectionRunner.catch_up, record by record (an UPDATE, and an INSERT for a new
  stream, per record) and with its apply_batch (one upsert per batch);
* ledger: a projection that inserts one row per record, through the runner;
* baseline: the same rows inserted with executemany in transactions of the same batch size,
  with no log and no runner — the database's own ceiling for this write pattern.

The ratio of the ledger to the baseline is the cost of reading the log, applying record by
record and storing offsets in each transaction.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from arena_runtime.config import Settings
from arena_runtime.eventlog import EventLog, OutgoingRecord, Record, TopicSpec
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.sql import (
    Projection,
    ProjectionRunner,
    StreamActivity,
    create_engine,
    session_factory,
    stream_activity,
    upgrade_head,
)
from sqlalchemy import Column, Integer, MetaData, String, Table, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from bench import postgres

TOPICS = ("bench.match.events", "bench.rating.events")
PARTITIONS = 4
BATCH = 500

rows = Table(
    "bench_ledger",
    MetaData(),
    Column("topic", String(100), nullable=False),
    Column("partition", Integer, nullable=False),
    Column("offset", Integer, nullable=False),
)


class OneByOne(StreamActivity):
    """stream_activity through the plain per-record ``apply``."""

    name = "bench_stream_activity_one_by_one"
    apply_batch = Projection.apply_batch


class Ledger(Projection):
    name = "bench_ledger"
    tables = (rows,)
    topics = TOPICS

    async def apply(self, session: AsyncSession, record: Record) -> None:
        await session.execute(
            insert(rows).values(
                topic=record.topic, partition=record.partition, offset=record.offset
            )
        )


async def fill(log: EventLog, count: int) -> None:
    await log.create_topics([TopicSpec(t, partitions=PARTITIONS) for t in TOPICS])
    per_topic = count // len(TOPICS)
    for topic in TOPICS:
        for start in range(0, per_topic, 1000):
            await log.append(
                topic,
                [
                    OutgoingRecord(value=b"e", key=f"stream-{i % 1000}".encode())
                    for i in range(start, min(per_topic, start + 1000))
                ],
            )


async def timed_catch_up(projection: Projection, log: EventLog, engine: AsyncEngine) -> float:
    runner = ProjectionRunner(projection, log, session_factory(engine), batch_size=BATCH)
    started = time.perf_counter()
    applied = await runner.catch_up()
    return applied / (time.perf_counter() - started)


async def baseline(engine: AsyncEngine, count: int) -> float:
    batch = [{"topic": "t", "partition": 0, "offset": i} for i in range(BATCH)]
    started = time.perf_counter()
    for _ in range(count // BATCH):
        async with engine.begin() as connection:
            await connection.execute(insert(rows), batch)
    return (count // BATCH) * BATCH / (time.perf_counter() - started)


async def same_rows(engine: AsyncEngine, count: int, who: str) -> None:
    """The ledger and its baseline must write the same number of rows: equal work."""
    async with engine.connect() as connection:
        written = (await connection.execute(select(func.count()).select_from(rows))).scalar_one()
    if written != count:
        raise AssertionError(f"{who} wrote {written} rows, not {count}")


async def measure(label: str, url: str, log: EventLog, count: int) -> None:
    engine = create_engine(url)
    try:
        await upgrade_head(engine)
        async with engine.begin() as connection:
            await connection.run_sync(lambda c: rows.create(c, checkfirst=True))
        one_by_one = await timed_catch_up(OneByOne(TOPICS), log, engine)
        async with engine.begin() as connection:
            await connection.execute(stream_activity.delete())
        activity = await timed_catch_up(StreamActivity(TOPICS), log, engine)
        ledger = await timed_catch_up(Ledger(), log, engine)
        await same_rows(engine, count, "the ledger")
        async with engine.begin() as connection:
            await connection.execute(rows.delete())
        base = await baseline(engine, count)
        await same_rows(engine, count, "the baseline")
    finally:
        await engine.dispose()
    print(f"{label}: {count:,} records, batches of {BATCH}", flush=True)
    line("baseline: executemany insert", base, base)
    line("ledger (an INSERT per record)", ledger, base)
    line("stream_activity record by record", one_by_one, base)
    line("stream_activity apply_batch", activity, base)


def line(label: str, rate: float, base: float) -> None:
    print(f"  {label:<36} {rate:>10,.0f} records/s   ratio {rate / base:5.2f}", flush=True)


async def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with open_event_log(Settings(data_dir=Path(tmp))) as log:
            await fill(log, count)
            await measure("SQLite", f"sqlite+aiosqlite:///{tmp}/bench.sqlite3", log, count)
            if not postgres.reachable():
                print("PostgreSQL: skipped (nothing on 127.0.0.1:5432)")
                return
            async with postgres.scratch_database() as url:
                await measure("PostgreSQL", url, log, count)


def run(quick: bool = False) -> None:
    asyncio.run(main(2_000 if quick else 10_000))
