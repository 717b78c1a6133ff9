"""``Ledger``: a test projection that writes one row per record it applies, so a record applied
twice or skipped shows up as itself. Its table lives on its own metadata: the runtime's
migrations know nothing of it."""

from __future__ import annotations

import asyncio

from arena_runtime.envelope import UndecodableRecord
from arena_runtime.eventlog import Record
from arena_runtime.sql import MalformedRecordError, Projection
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

TOPICS = ("t.match.events", "t.rating.events")

applied = Table(
    "test_ledger",
    MetaData(),
    Column("topic", String(100), nullable=False),
    Column("partition", Integer, nullable=False),
    Column("offset", Integer, nullable=False),
    Column("value", String(100), nullable=False),
)

Position = tuple[str, int, int]


class Ledger(Projection):
    """Fails on demand (to test rollback) and can dawdle (so a crash lands mid-batch)."""

    name = "ledger"
    tables = (applied,)

    def __init__(
        self,
        topics: tuple[str, ...] = TOPICS,
        fail_on: bytes | None = None,
        delay: float = 0.0,
        announce: bool = False,
    ) -> None:
        self.topics = topics
        self.fail_on = fail_on
        self.delay = delay
        self.announce = announce

    async def apply(self, session: AsyncSession, record: Record) -> None:
        if record.value == b"malformed":
            raise MalformedRecordError("not an event")
        if record.value == b"undecodable":
            raise UndecodableRecord("not an envelope")
        if record.value == self.fail_on:
            raise RuntimeError("bug in the projection")
        await session.execute(
            insert(applied).values(
                topic=record.topic,
                partition=record.partition,
                offset=record.offset,
                value=record.value.decode(),
            )
        )
        if self.announce:
            print("applied", record.topic, record.partition, record.offset, flush=True)
        if self.delay:
            await asyncio.sleep(self.delay)


async def create_ledger_table(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.run_sync(lambda c: applied.create(c, checkfirst=True))


async def ledger_rows(sessions: async_sessionmaker[AsyncSession]) -> list[Position]:
    async with sessions() as session:
        rows = await session.execute(select(applied.c.topic, applied.c.partition, applied.c.offset))
        return sorted((t, p, o) for t, p, o in rows)
