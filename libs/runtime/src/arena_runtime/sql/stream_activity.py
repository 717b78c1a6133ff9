"""``stream_activity``: per stream, how many records it has and when it was first and last seen.

The smallest real projection, and the one to copy: a table on the shared metadata, an Alembic
revision that creates it, and an ``apply`` that reads only the record and the rows it owns. A
stream is identified by the record key (one stream per key, docs/architecture.md); records without a
key belong to no stream and are not counted. Times are the log's record timestamps, never the
clock, so a rebuild reproduces the table exactly.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    PrimaryKeyConstraint,
    String,
    Table,
    insert,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.eventlog.base import Record
from arena_runtime.sql.metadata import TOPIC_LENGTH, metadata
from arena_runtime.sql.projection import Projection, Skipped, dialect_insert, dialect_name

STREAM_LENGTH = 255

stream_activity = Table(
    "stream_activity",
    metadata,
    Column("topic", String(TOPIC_LENGTH), nullable=False),
    Column("stream", String(STREAM_LENGTH), nullable=False),
    Column("records", BigInteger, nullable=False),
    Column("first_seen_ms", BigInteger, nullable=False),
    Column("last_seen_ms", BigInteger, nullable=False),
    Column("last_partition", BigInteger, nullable=False),
    Column("last_offset", BigInteger, nullable=False),
    PrimaryKeyConstraint("topic", "stream"),
)


def stream_id(key: bytes) -> str:
    """The stream a key names; keys that are not UTF-8 keep their bytes visible as escapes."""
    return key.decode("utf-8", errors="backslashreplace")[:STREAM_LENGTH]


@dataclass(slots=True)
class _Seen:
    """What one batch says about one stream."""

    records: int
    first: Record
    last: Record


class StreamActivity(Projection):
    """Counts records per stream (record key) over the given topics.

    ``apply`` is the plain version, one record at a time; ``apply_batch`` writes the same rows
    with one upsert per batch (a test holds the two equal).
    """

    name = "stream_activity"
    tables = (stream_activity,)

    def __init__(self, topics: Sequence[str]) -> None:
        self.topics = tuple(topics)

    async def apply(self, session: AsyncSession, record: Record) -> None:
        if record.key is None:
            return
        stream = stream_id(record.key)
        table = stream_activity
        where = (table.c.topic == record.topic) & (table.c.stream == stream)
        changed = await session.execute(
            update(table)
            .where(where)
            .values(
                records=table.c.records + 1,
                last_seen_ms=record.timestamp_ms,
                last_partition=record.partition,
                last_offset=record.offset,
            )
        )
        if changed.rowcount == 0:  # type: ignore[attr-defined]
            await session.execute(
                insert(table).values(
                    topic=record.topic,
                    stream=stream,
                    records=1,
                    first_seen_ms=record.timestamp_ms,
                    last_seen_ms=record.timestamp_ms,
                    last_partition=record.partition,
                    last_offset=record.offset,
                )
            )

    async def apply_batch(self, session: AsyncSession, records: Sequence[Record]) -> list[Skipped]:
        seen: dict[tuple[str, str], _Seen] = {}
        for record in records:
            if record.key is None:
                continue
            key = (record.topic, stream_id(record.key))
            if (entry := seen.get(key)) is None:
                seen[key] = _Seen(1, record, record)
            else:
                entry.records += 1
                entry.last = record
        if not seen:
            return []
        # One upsert for the batch rather than a lookup, an UPDATE and an INSERT: under load a
        # batch holds a few records of many streams, and each statement costs more than its rows.
        await session.execute(
            _upsert(dialect_name(session)),
            [
                {
                    "topic": topic,
                    "stream": stream,
                    "records": entry.records,
                    "first_seen_ms": entry.first.timestamp_ms,
                    "last_seen_ms": entry.last.timestamp_ms,
                    "last_partition": entry.last.partition,
                    "last_offset": entry.last.offset,
                }
                for (topic, stream), entry in seen.items()
            ],
        )
        return []


@functools.cache
def _upsert(dialect: str) -> Any:
    """A batch's rows, new ones inserted and known ones added to (built once per dialect)."""
    table = stream_activity
    upsert = dialect_insert(dialect)(table)
    new = upsert.excluded
    return upsert.on_conflict_do_update(
        index_elements=[table.c.topic, table.c.stream],
        set_={
            "records": table.c.records + new.records,
            "last_seen_ms": new.last_seen_ms,
            "last_partition": new.last_partition,
            "last_offset": new.last_offset,
        },
    )


#: Every event topic (commands are not counted).
EVENT_TOPICS = topics.EVENTS


def stream_activity_projection(settings: Settings) -> StreamActivity:
    """The factory the registry holds: stream activity over every event topic."""
    return StreamActivity(EVENT_TOPICS)
