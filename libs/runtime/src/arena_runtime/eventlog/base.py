"""The event-log interface every service talks to.

Two implementations satisfy it with the same semantics: Kafka (aiokafka) for the distributed
stack and an embedded SQLite log for single-process runs. Both are checked by one conformance
suite (tests/runtime/eventlog), so a service cannot tell which one it runs on.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

Headers = tuple[tuple[str, bytes], ...]

#: retention_ms value that means "keep forever" (Kafka's -1).
UNLIMITED_RETENTION = -1


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic to create. Event topics keep everything; snapshot topics are compacted."""

    name: str
    partitions: int = 1
    retention_ms: int = UNLIMITED_RETENTION
    compacted: bool = False


@dataclass(frozen=True, slots=True)
class TopicPartition:
    topic: str
    partition: int


class Position(NamedTuple):
    """Where an acknowledged append landed (a named tuple: appends return one per record)."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class OutgoingRecord:
    """One record to append; the partition is chosen from the key (Kafka's default partitioner)."""

    value: bytes
    key: bytes | None = None
    headers: Headers = ()
    partition: int | None = None


class Record(NamedTuple):
    """One record as read back from the log.

    A named tuple rather than a dataclass: replaying a log builds millions of these, and a tuple
    is built several times faster than a frozen dataclass.
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    headers: Headers = ()
    timestamp_ms: int = 0

    def header(self, name: str) -> bytes | None:
        for k, v in self.headers:
            if k == name:
                return v
        return None


class EventLogError(Exception):
    """Base class of event-log failures."""


class UnknownTopicError(EventLogError):
    """The topic does not exist."""


class InvalidRequestError(EventLogError, ValueError):
    """A malformed request (bad topic name, partition out of range, negative offset, non-bytes
    value); nothing was changed."""


class CommitFailedError(EventLogError):
    """The commit names a partition this member no longer owns (the group rebalanced); nothing
    was committed and the records since the last commit will be delivered again."""


class Consumer(abc.ABC):
    """A member of a consumer group. Offsets are committed explicitly, never automatically."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Join the group; UnknownTopicError if a subscribed topic does not exist."""

    @abc.abstractmethod
    async def stop(self) -> None:
        """Leave the group. Uncommitted progress is not committed."""

    async def __aenter__(self) -> Consumer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @abc.abstractmethod
    async def poll(self, timeout_ms: int = 1000, max_records: int = 500) -> list[Record]:
        """Records from the assigned partitions, in offset order per partition."""

    @abc.abstractmethod
    async def commit(self, offsets: Mapping[TopicPartition, int] | None = None) -> None:
        """Commit the next offset to read per partition (default: everything returned by poll).

        CommitFailedError if a partition is not (or no longer) assigned to this member.
        """

    @abc.abstractmethod
    async def committed(self, tp: TopicPartition) -> int | None:
        """The group's committed offset for a partition, or None."""

    @abc.abstractmethod
    def assignment(self) -> frozenset[TopicPartition]:
        """Partitions currently assigned to this member."""

    @abc.abstractmethod
    async def seek(self, tp: TopicPartition, offset: int) -> None:
        """Read an assigned partition from the given offset on the next poll.

        InvalidRequestError if the partition is not assigned to this member.
        """


class EventLog(abc.ABC):
    """Topics, partitions, appends with headers, group consumption, random-access reads."""

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> EventLog:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @abc.abstractmethod
    async def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        """Create topics that do not exist yet; existing topics are left as they are."""

    @abc.abstractmethod
    async def partitions(self, topic: str) -> int:
        """Number of partitions of a topic; UnknownTopicError if it does not exist."""

    @abc.abstractmethod
    async def append(self, topic: str, records: Sequence[OutgoingRecord]) -> list[Position]:
        """Append records; when this returns, every one of them is durable (acknowledged)."""

    @abc.abstractmethod
    async def read(
        self, topic: str, partition: int, offset: int, max_records: int = 1000
    ) -> list[Record]:
        """Records of one partition from an offset on (at most max_records)."""

    @abc.abstractmethod
    async def end_offsets(self, topic: str) -> dict[int, int]:
        """Per partition, the offset the next appended record will get."""

    async def end_offset(self, topic: str, partition: int) -> int:
        """One partition's end: the offset its next appended record will get.

        The logs answer it without looking at the topic's other partitions.
        """
        ends = await self.end_offsets(topic)
        if partition not in ends:
            raise InvalidRequestError(f"{topic}: partition {partition} out of range")
        return ends[partition]

    @abc.abstractmethod
    def consumer(self, group: str, topics: Sequence[str]) -> Consumer:
        """A new member of a consumer group over the given topics (not yet started)."""
