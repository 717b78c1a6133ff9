"""One suite, two implementations: the embedded log and the real broker must behave alike."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from arena_runtime.eventlog import (
    AppendConflictError,
    CommitFailedError,
    Consumer,
    InvalidRequestError,
    OutgoingRecord,
    Record,
    TopicPartition,
    TopicSpec,
    UnknownTopicError,
)
from arena_runtime.eventlog.partitioner import partition_for

from tests.runtime.eventlog.conftest import LogMaker

PARTITIONS = 4


async def poll_until(
    consumer: Consumer, count: int, seconds: float = 20.0, max_records: int = 500
) -> list[Record]:
    out: list[Record] = []
    deadline = time.monotonic() + seconds
    while len(out) < count and time.monotonic() < deadline:
        out.extend(await consumer.poll(timeout_ms=200, max_records=max_records))
    return out


def keyed(n: int, prefix: str = "k") -> list[OutgoingRecord]:
    return [OutgoingRecord(value=f"v{i}".encode(), key=f"{prefix}{i}".encode()) for i in range(n)]


async def test_create_topics_is_idempotent(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=PARTITIONS)])
        await log.create_topics([TopicSpec(topic, partitions=7)])  # left as it is
        assert await log.partitions(topic) == PARTITIONS
        assert await log.end_offsets(topic) == dict.fromkeys(range(PARTITIONS), 0)


async def test_append_with_headers_reads_back_exactly(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=PARTITIONS)])
        headers = (("traceparent", b"00-abc-def-01"), ("type", b"MatchStarted"), ("dup", b""))
        sent = [
            OutgoingRecord(value=b"first", key=b"match-1", headers=headers),
            OutgoingRecord(value=b"second", key=b"match-1"),
        ]
        positions = await log.append(topic, sent)
        assert [p.offset for p in positions] == [0, 1]
        assert positions[0].partition == positions[1].partition == partition_for(b"match-1", 4)
        records = await log.read(topic, positions[0].partition, 0)
        assert [(r.key, r.value, r.headers) for r in records] == [
            (b"match-1", b"first", headers),
            (b"match-1", b"second", ()),
        ]
        assert records[0].header("type") == b"MatchStarted"
        assert records[0].topic == topic
        assert abs(records[0].timestamp_ms - time.time() * 1000) < 60_000


async def test_key_picks_kafkas_partition(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=PARTITIONS)])
        records = keyed(40, prefix="stream-")
        positions = await log.append(topic, records)
        for record, position in zip(records, positions, strict=True):
            assert record.key is not None
            assert position.partition == partition_for(record.key, PARTITIONS)
        # offsets count per partition, from 0, without gaps
        per_partition: dict[int, list[int]] = {}
        for p in positions:
            per_partition.setdefault(p.partition, []).append(p.offset)
        for offsets in per_partition.values():
            assert offsets == list(range(len(offsets)))
        assert await log.end_offsets(topic) == {
            p: len(per_partition.get(p, [])) for p in range(PARTITIONS)
        }


async def test_explicit_partition_and_keyless_records(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=PARTITIONS)])
        pos = await log.append(topic, [OutgoingRecord(value=b"x", key=b"k", partition=3)])
        assert pos[0].partition == 3
        keyless = await log.append(topic, [OutgoingRecord(value=b"y")] * 8)
        assert all(0 <= p.partition < PARTITIONS for p in keyless)


async def test_read_from_any_offset(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=2)])
        await log.append(
            topic, [OutgoingRecord(value=str(i).encode(), partition=1) for i in range(30)]
        )
        middle = await log.read(topic, 1, 7, max_records=5)
        assert [r.offset for r in middle] == [7, 8, 9, 10, 11]
        assert [r.value for r in middle] == [b"7", b"8", b"9", b"10", b"11"]
        onwards = await log.read(topic, 1, 12, max_records=3)
        assert [r.offset for r in onwards] == [12, 13, 14]
        back = await log.read(topic, 1, 2, max_records=2)
        assert [r.offset for r in back] == [2, 3]
        tail = await log.read(topic, 1, 25)
        assert [r.offset for r in tail] == [25, 26, 27, 28, 29]
        assert await log.read(topic, 1, 30) == []
        assert await log.read(topic, 0, 0) == []
        assert (await log.end_offsets(topic))[1] == 30


async def test_end_offset_of_one_partition(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=3)])
        assert await log.end_offset(topic, 2) == 0
        await log.append(topic, [OutgoingRecord(value=b"x", partition=1)] * 5)
        await log.append(topic, [OutgoingRecord(value=b"y", partition=2)])
        ends = await log.end_offsets(topic)
        assert ends == {0: 0, 1: 5, 2: 1}
        assert [await log.end_offset(topic, p) for p in range(3)] == [0, 5, 1]
        for partition in (-1, 3):
            with pytest.raises(InvalidRequestError):
                await log.end_offset(topic, partition)
        with pytest.raises(UnknownTopicError):
            await log.end_offset(topic + "-missing", 0)


async def test_arbitrary_bytes_round_trip(make_log: LogMaker, topic: str) -> None:
    values = [b"", b"\x00\xff\xfe not protobuf", os.urandom(100_000), bytes(range(256))]
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=1)])
        await log.append(topic, [OutgoingRecord(value=v, key=os.urandom(9)) for v in values])
        assert [r.value for r in await log.read(topic, 0, 0)] == values


async def test_unknown_topic(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        with pytest.raises(UnknownTopicError):
            await log.partitions(topic)
        with pytest.raises(UnknownTopicError):
            await log.append(topic, [OutgoingRecord(value=b"x")])
        with pytest.raises(UnknownTopicError):
            await log.read(topic, 0, 0)
        with pytest.raises(UnknownTopicError):
            await log.end_offsets(topic)
        with pytest.raises(UnknownTopicError):
            await log.consumer("g", [topic]).start()
        # asking about it did not create it
        with pytest.raises(UnknownTopicError):
            await log.partitions(topic)


async def test_bad_requests_change_nothing(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        with pytest.raises(InvalidRequestError):
            await log.create_topics([TopicSpec("no spaces allowed", partitions=1)])
        with pytest.raises(InvalidRequestError):
            await log.create_topics([TopicSpec(topic, partitions=0)])
        await log.create_topics([TopicSpec(topic, partitions=2)])
        good = OutgoingRecord(value=b"ok", partition=0)
        for bad in (
            OutgoingRecord(value=b"x", partition=2),
            OutgoingRecord(value="text", partition=0),  # type: ignore[arg-type]
            OutgoingRecord(value=b"x", headers=(("h", "not bytes"),)),  # type: ignore[arg-type]
            OutgoingRecord(value=b"x", headers=((b"h", b"name not str"),)),  # type: ignore[arg-type]
            OutgoingRecord(value=b"x", key="text", partition=0),  # type: ignore[arg-type]
            OutgoingRecord(value=bytearray(b"x"), partition=0),  # type: ignore[arg-type]
        ):
            with pytest.raises(InvalidRequestError):
                await log.append(topic, [good, bad])
        assert await log.end_offsets(topic) == {0: 0, 1: 0}
        with pytest.raises(InvalidRequestError):
            await log.read(topic, 2, 0)
        with pytest.raises(InvalidRequestError):
            await log.read(topic, 0, -1)


async def test_group_commits_and_resumes(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=PARTITIONS)])
        await log.append(topic, keyed(20))
        async with log.consumer("resume", [topic]) as consumer:
            first = await poll_until(consumer, 20)
            assert sorted(r.value for r in first) == sorted(f"v{i}".encode() for i in range(20))
            await consumer.commit()
            for p in range(PARTITIONS):
                tp = TopicPartition(topic, p)
                expected = sum(1 for r in first if r.partition == p) or None
                assert await consumer.committed(tp) == expected
        await log.append(topic, keyed(5, prefix="late"))
        async with log.consumer("resume", [topic]) as consumer:
            again = await poll_until(consumer, 5)
            assert sorted(r.key for r in again) == [f"late{i}".encode() for i in range(5)]
            assert await consumer.poll(timeout_ms=300) == []


async def test_committed_offsets_survive_a_restart_of_the_log(
    make_log: LogMaker, topic: str
) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=1)])
        await log.append(topic, [OutgoingRecord(value=str(i).encode()) for i in range(10)])
        async with log.consumer("restart", [topic]) as consumer:
            got = await poll_until(consumer, 10)
            await consumer.commit({TopicPartition(topic, 0): got[5].offset + 1})
    async with make_log() as log, log.consumer("restart", [topic]) as consumer:
        rest = await poll_until(consumer, 4)
        assert [r.value for r in rest] == [b"6", b"7", b"8", b"9"]
        assert await consumer.committed(TopicPartition(topic, 0)) == 6


async def test_seek_rereads_a_partition(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=1)])
        await log.append(topic, [OutgoingRecord(value=str(i).encode()) for i in range(6)])
        async with log.consumer("seek", [topic]) as consumer:
            assert len(await poll_until(consumer, 6)) == 6
            await consumer.seek(TopicPartition(topic, 0), 4)
            assert [r.value for r in await poll_until(consumer, 2)] == [b"4", b"5"]
            with pytest.raises(InvalidRequestError):
                await consumer.seek(TopicPartition(topic, 9), 0)


async def test_lag_counts_what_another_writer_appended(make_log: LogMaker, topic: str) -> None:
    """The live lag (`arena_consumer_partition_lag`): the records past what the member handed
    out, other writers' appends included, and nothing once it has read them all."""
    tp = TopicPartition(topic, 0)
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=1)])
        async with log.consumer("lag", [topic]) as consumer:
            assert await consumer.poll(timeout_ms=300) == []
            async with make_log() as writer:  # another process's log over the same storage
                await writer.append(topic, [OutgoingRecord(value=b"x") for _ in range(30)])
            got: list[Record] = []
            while not got:
                got = await consumer.poll(timeout_ms=1000, max_records=10)
            assert len(got) <= 10
            assert (await consumer.lag())[tp] == 30 - len(got)
            got += await poll_until(consumer, 30 - len(got))
            assert (await consumer.lag())[tp] == 0


async def assignments_settle(consumers: list[Consumer], seconds: float = 30.0) -> None:
    """Poll every member until the assignments are disjoint, cover everything and each has some."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await asyncio.gather(*(c.poll(timeout_ms=100, max_records=1) for c in consumers))
        sets = [c.assignment() for c in consumers]
        union = frozenset().union(*sets)
        if all(sets) and sum(len(s) for s in sets) == len(union) == PARTITIONS:
            return
    raise AssertionError(f"assignments did not settle: {[c.assignment() for c in consumers]}")


async def test_two_members_split_the_partitions(make_log: LogMaker, topic: str) -> None:
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=PARTITIONS)])
        first = log.consumer("split", [topic])
        second = log.consumer("split", [topic])
        await first.start()
        await second.start()
        try:
            await assignments_settle([first, second])
            assert first.assignment().isdisjoint(second.assignment())
            # each member reads only its own partitions
            await log.append(topic, keyed(40))
            seen: dict[int, set[int]] = {0: set(), 1: set()}
            deadline = time.monotonic() + 20
            while sum(len(s) for s in seen.values()) < 40 and time.monotonic() < deadline:
                for i, c in enumerate((first, second)):
                    for r in await c.poll(timeout_ms=100):
                        assert TopicPartition(topic, r.partition) in c.assignment()
                        seen[i].add(int(r.value[1:]))
            assert seen[0] | seen[1] == set(range(40))
            assert seen[0].isdisjoint(seen[1])
            # a partition the member does not own cannot be committed
            foreign = next(iter(second.assignment()))
            with pytest.raises(CommitFailedError):
                await first.commit({foreign: 1})
        finally:
            await second.stop()
        try:
            deadline = time.monotonic() + 30
            while len(first.assignment()) < PARTITIONS and time.monotonic() < deadline:
                await first.poll(timeout_ms=100)
            assert len(first.assignment()) == PARTITIONS
        finally:
            await first.stop()


async def test_a_reader_of_every_partition_has_them_once_started(
    make_log: LogMaker, topic: str
) -> None:
    """``every_partition`` (each gateway's fan-out reader): every partition is this member's as
    soon as it has started, before any poll (no group join to wait for: half the session
    timeout on Tansu), and it reads from where it seeks."""
    async with make_log() as log:
        await log.create_topics([TopicSpec(topic, partitions=PARTITIONS)])
        await log.append(topic, keyed(12))
        async with log.consumer("reader", [topic], every_partition=True) as reader:
            every = {TopicPartition(topic, p) for p in range(PARTITIONS)}
            assert reader.assignment() == every
            for tp in every:
                await reader.seek(tp, 0)
            got = await poll_until(reader, 12)
            assert sorted(r.value for r in got) == sorted(f"v{i}".encode() for i in range(12))


async def test_a_chained_append_writes_what_follows_only_where_it_was_expected(
    make_log: LogMaker, topic: str
) -> None:
    """``append_chained``: a stream's events and the views of them. At the offset expected, both
    are written; elsewhere (another writer got in first), AppendConflictError and nothing that
    follows; the records themselves are then written only by a log that cannot take them back
    (the error's positions), never by the embedded one."""
    views = f"{topic}.views"
    async with make_log() as log:
        await log.create_topics(
            [TopicSpec(topic, partitions=PARTITIONS), TopicSpec(views, partitions=PARTITIONS)]
        )
        event = [OutgoingRecord(value=b"e1", key=b"s", partition=1)]
        shown = [OutgoingRecord(value=b"v1", key=b"s", partition=1)]
        positions = await log.append_chained(topic, event, 0, [(views, shown)])
        assert [(p.partition, p.offset) for p in positions] == [(1, 0)]
        assert [r.value for r in await log.read(views, 1, 0)] == [b"v1"]
        # Another writer's record: the partition ends at 2, not 1.
        await log.append(topic, [OutgoingRecord(value=b"theirs", partition=1)])
        late = [OutgoingRecord(value=b"e2", key=b"s", partition=1)]
        with pytest.raises(AppendConflictError) as raised:
            await log.append_chained(topic, late, 1, [(views, [OutgoingRecord(value=b"v2")])])
        assert [r.value for r in await log.read(views, 1, 0)] == [b"v1"]
        assert (await log.end_offsets(views)) == {0: 0, 1: 1, 2: 0, 3: 0}
        written = [r.value for r in await log.read(topic, 1, 0)]
        assert written == [b"e1", b"theirs", *[b"e2" for _ in raised.value.positions]]
        # At the offset it now ends at, it goes through.
        end = (await log.end_offsets(topic))[1]
        positions = await log.append_chained(topic, late, end, [(views, shown)])
        assert [p.offset for p in positions] == [end]
        assert [r.value for r in await log.read(views, 1, 0)] == [b"v1", b"v1"]
