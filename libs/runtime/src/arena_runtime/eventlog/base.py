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

#: A consumer-group member's session, the default of ``ARENA_CONSUMER_SESSION_TIMEOUT_MS``: the
#: smallest Kafka accepts by default (``group.min.session.timeout.ms``). Tansu answers every
#: JoinGroup after half the group's session, so this is also a start's join there (3 s), and
#: how long a crashed member keeps its partitions on either broker (docs/operations.md, Kafka).
GROUP_SESSION_TIMEOUT_MS = 6_000
#: How often a member heartbeats (``ARENA_CONSUMER_HEARTBEAT_MS``): the others learn of a
#: member's graceful leave at their next heartbeat, the first step of a handover.
GROUP_HEARTBEAT_MS = 500


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic to create. Event topics keep everything; snapshot topics are compacted."""

    name: str
    partitions: int = 1
    retention_ms: int = UNLIMITED_RETENTION
    compacted: bool = False


class TopicPartition(NamedTuple):
    """A partition of a topic (a named tuple: consumers hash one per record and per partition
    at every poll, and a tuple's hash is C code, a frozen dataclass's a Python call)."""

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


class TopicMismatchError(EventLogError):
    """A topic exists with another partition count or replication factor than configured."""

    def __init__(self, topic: str, layout: str, configured: int, found: int) -> None:
        super().__init__(f"topic {topic} has {layout} {found}, configured {configured}")
        self.topic = topic
        #: "partitions" or "replication factor"
        self.layout = layout
        self.configured = configured
        self.found = found


class AppendConflictError(EventLogError):
    """A chained append found its partition not ending where it expected (another writer got in
    first): nothing it chained was written, and its own records only where ``positions`` says
    (a log without transactions writes them before it can tell; the embedded log writes
    nothing, and ``positions`` is empty)."""

    def __init__(self, message: str, positions: Sequence[Position] = ()) -> None:
        super().__init__(message)
        self.positions = list(positions)


class CommitFailedError(EventLogError):
    """The commit names a partition this member no longer owns (the group rebalanced); nothing
    was committed and the records since the last commit will be delivered again."""


class Consumer(abc.ABC):
    """A member of a consumer group. Offsets are committed explicitly, never automatically."""

    #: The group's name as the services call it (without ARENA_TOPIC_PREFIX).
    group: str = ""

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

    async def lag(self) -> dict[TopicPartition, int]:
        """Per assigned partition, the records not fetched yet, as far as the member knows
        without asking the log (empty where it does not know)."""
        return {}


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

    async def check_topics(self, specs: Sequence[TopicSpec]) -> None:
        """TopicMismatchError for the first topic laid out otherwise than its spec says.

        Streams are placed by hashing their key over the partition count, so a topic that has
        another count than the services expect would scatter them: refuse it at start.
        """
        for spec in specs:
            found = await self.partitions(spec.name)
            if found != spec.partitions:
                raise TopicMismatchError(spec.name, "partitions", spec.partitions, found)

    @abc.abstractmethod
    async def append(self, topic: str, records: Sequence[OutgoingRecord]) -> list[Position]:
        """Append records; when this returns, every one of them is durable (acknowledged)."""

    @abc.abstractmethod
    async def read(
        self, topic: str, partition: int, offset: int, max_records: int = 1000
    ) -> list[Record]:
        """Records of one partition from an offset on (at most max_records)."""

    async def append_chained(
        self,
        topic: str,
        records: Sequence[OutgoingRecord],
        expect: int,
        then: Sequence[tuple[str, Sequence[OutgoingRecord]]],
    ) -> list[Position]:
        """Append ``records`` (to one partition) at offsets ``expect`` on, and then each of
        ``then``; if the partition does not end at ``expect``, raise AppendConflictError and
        append none of ``then``. What a stream runner's events and the views of them are
        written with: no view of events that lost a race to another writer.

        Here the appends are made in turn (``records`` may then be written where they were not
        expected: the error's ``positions``); the embedded log makes them one transaction.
        """
        positions = await self.append(topic, records)
        if [p.offset for p in positions] != list(range(expect, expect + len(positions))):
            raise AppendConflictError(f"{topic}: appended elsewhere than at {expect}", positions)
        for other, chained in then:
            await self.append(other, chained)
        return positions

    async def read_partitions(
        self, reads: Sequence[tuple[TopicPartition, int]], max_records: int = 1000
    ) -> list[list[Record]]:
        """Records of several partitions, each from its offset: what ``read`` returns for each,
        in the order asked. A log may answer them in one round trip (the embedded log: one
        trip to its reader thread, not one per partition)."""
        return [
            await self.read(tp.topic, tp.partition, offset, max_records) for tp, offset in reads
        ]

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
    def consumer(
        self, group: str, topics: Sequence[str], *, every_partition: bool = False
    ) -> Consumer:
        """A new member of a consumer group over the given topics (not yet started).

        ``every_partition``: the member is its group's only one and takes every partition of
        its topics (each gateway instance's fan-out reader). A log may then assign them
        directly, without joining a group: on Kafka the join alone takes seconds (half the
        session timeout on Tansu). Such a member never commits; it seeks where it starts.
        """
