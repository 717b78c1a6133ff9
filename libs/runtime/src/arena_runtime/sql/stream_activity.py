"""``stream_activity``: per stream, how many records it has and when it was first and last seen.

The smallest real projection, and the one to copy: a table on the shared metadata, an Alembic
revision that creates it, and an ``apply`` that reads only the record and the rows it owns. A
stream is identified by the record key (one stream per key, see DESIGN.md); records without a
key belong to no stream and are not counted. Times are the log's record timestamps, never the
clock, so a rebuild reproduces the table exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import BigInteger, Column, PrimaryKeyConstraint, String, Table, insert, update
from sqlalchemy.ext.asyncio import AsyncSession

from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.eventlog.base import Record
from arena_runtime.sql.metadata import TOPIC_LENGTH, metadata
from arena_runtime.sql.projection import Projection

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


class StreamActivity(Projection):
    """Counts records per stream (record key) over the given topics."""

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


#: The event topics of the four services (commands are not counted).
EVENT_TOPICS = (topics.MATCH_EVENTS, topics.MATCHMAKING_EVENTS, topics.RATING_EVENTS)


def stream_activity_projection(settings: Settings) -> StreamActivity:
    """The factory the registry holds: stream activity over every event topic."""
    return StreamActivity(EVENT_TOPICS)
