"""The embedded log's tail of its own appends: reads from it equal reads from the file, with no
gap or duplicate when another log (another process) appends to the same partitions in between."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from arena_runtime.config import Settings
from arena_runtime.eventlog import (
    Consumer,
    EventLogError,
    OutgoingRecord,
    Record,
    TopicPartition,
    TopicSpec,
    embedded_consumer,
)
from arena_runtime.eventlog.embedded import EmbeddedEventLog, read_partition
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.reading import read_forward

HEADER_SETS: list[tuple[tuple[str, bytes], ...]] = [
    (),
    (("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),),
    (("a", b""), ("é", b"\x00\xff"), ("b", b"x" * 300)),
]


def outgoing(i: int, partition: int | None = None) -> OutgoingRecord:
    return OutgoingRecord(
        value=f"v{i}".encode() if i % 7 else b"",
        key=None if i % 5 == 0 else f"k{i % 13}".encode(),
        headers=HEADER_SETS[i % len(HEADER_SETS)],
        partition=partition,
    )


async def from_file(log: EmbeddedEventLog, topic: str, partition: int, offset: int, n: int) -> Any:
    """The same read, always from SQLite on the reader thread."""
    info = await log.topic(topic)
    return await log.read_with(lambda conn: read_partition(conn, info, partition, offset, n))


async def file_contents(path: Path, topic: str) -> dict[int, list[Record]]:
    """Every record of the topic, read by a log that appended nothing (so has no tail)."""
    async with EmbeddedEventLog(path, tail_records=0) as log:
        out = {}
        for partition, end in (await log.end_offsets(topic)).items():
            out[partition] = [
                r
                for chunk in [c async for c in read_forward(log, topic, partition, 0, end)]
                for r in chunk
            ]
        return out


def forbid_reader_thread(log: EmbeddedEventLog, monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(run: Callable[[sqlite3.Connection], Any]) -> Any:
        raise AssertionError("went to the reader thread")

    monkeypatch.setattr(log, "read_with", refuse)


async def test_reads_from_the_tail_equal_reads_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "e.db"
    async with EmbeddedEventLog(path) as log:
        await log.create_topics([TopicSpec("t", partitions=3)])
        await log.append("t", [outgoing(i) for i in range(60)])  # one batch, keyed
        singles = [outgoing(i, partition=i % 3) for i in range(60, 150)]
        await asyncio.gather(*(log.append("t", [r]) for r in singles))  # group-committed
        # Headers in other shapes than the tuple of tuples a read returns still read back as one.
        odd: list[Any] = [[("a", b"1")], (["b", b"2"],), [], [["c", b"3"], ("d", b"4")]]
        await log.append("t", [OutgoingRecord(value=b"odd", headers=h, partition=0) for h in odd])
        ends = await log.end_offsets("t")
        info = await log.topic("t")
        expected = {}
        for partition, end in ends.items():
            assert end > 0
            expected[partition] = await from_file(log, "t", partition, 0, end)
            assert len(expected[partition]) == end
        forbid_reader_thread(log, monkeypatch)
        for partition, end in ends.items():
            for offset in range(end):
                for n in (1, 3, 1000):
                    read = await log.read("t", partition, offset, n)
                    assert read == expected[partition][offset : offset + n]
                    assert log.tail_read(info.id, partition, offset, n) == read
            assert log.tail_read(info.id, partition, end, 10) is None
    assert await file_contents(path, "t") == expected


async def test_a_read_past_the_tail_goes_to_the_file(tmp_path: Path) -> None:
    async with EmbeddedEventLog(tmp_path / "e.db") as log:
        await log.create_topics([TopicSpec("t")])
        await log.append("t", [OutgoingRecord(value=b"x")])
        info = await log.topic("t")
        assert log.tail_read(info.id, 0, 1, 10) is None
        assert await log.read("t", 0, 1) == []
        assert log.tail_read(info.id, 0, 0, 0) is None  # as SQLite answers it
        assert await log.read("t", 0, 0, 0) == []


async def test_another_log_appending_in_between_starts_a_new_run(tmp_path: Path) -> None:
    """a appends 0, 1; b appends 2; a appends 3, 4: a's tail must not run 0, 1, 3, 4."""
    path = tmp_path / "e.db"
    async with EmbeddedEventLog(path) as a, EmbeddedEventLog(path) as b:
        await a.create_topics([TopicSpec("t")])
        info = await a.topic("t")
        consumer = a.consumer("g", ["t"])
        await consumer.start()
        await a.append("t", [OutgoingRecord(value=b"a0"), OutgoingRecord(value=b"a1")])
        got = await poll_until(consumer, 2)
        assert [r.value for r in got] == [b"a0", b"a1"]
        await b.append("t", [OutgoingRecord(value=b"b2")])
        await a.append("t", [OutgoingRecord(value=b"a3"), OutgoingRecord(value=b"a4")])
        assert a.tail_read(info.id, 0, 2, 10) is None
        assert a.tail_read(info.id, 0, 1, 10) is None  # the old run is gone
        assert [r.offset for r in a.tail_read(info.id, 0, 3, 10) or []] == [3, 4]
        got = await poll_until(consumer, 3)
        assert [(r.offset, r.value) for r in got] == [(2, b"b2"), (3, b"a3"), (4, b"a4")]
        for log in (a, b):
            read = [r.value for r in await log.read("t", 0, 0)]
            assert read == [b"a0", b"a1", b"b2", b"a3", b"a4"]
        await consumer.stop()


async def poll_until(consumer: Consumer, count: int, seconds: float = 10) -> list[Record]:
    got: list[Record] = []
    deadline = time.monotonic() + seconds
    while len(got) < count and time.monotonic() < deadline:
        got.extend(await consumer.poll(timeout_ms=100))
    return got


async def test_interleaved_appends_of_two_logs_reach_every_reader_complete_and_in_order(
    tmp_path: Path,
) -> None:
    """Two logs on one file (two processes) append to the same partitions at random, concurrently
    with a consumer group of each and a plain reader of each following along."""
    path = tmp_path / "e.db"
    rng = random.Random(4)
    partitions = 3
    # Small tails, so runs are also trimmed while readers are inside them.
    async with (
        EmbeddedEventLog(path, tail_records=16) as a,
        EmbeddedEventLog(path, tail_records=16) as b,
    ):
        await a.create_topics([TopicSpec("t", partitions=partitions)])
        consumers = [a.consumer("ga", ["t"]), b.consumer("gb", ["t"])]
        for consumer in consumers:
            await consumer.start()
        total = 0
        done = asyncio.Event()

        async def writer(log: EmbeddedEventLog, name: str) -> None:
            nonlocal total
            for i in range(150):
                size = rng.choice((1, 1, 1, 3, 20))
                partition = rng.randrange(partitions)
                batch = [
                    OutgoingRecord(value=f"{name}{i}.{j}".encode(), partition=partition)
                    for j in range(size)
                ]
                total += size
                if rng.random() < 0.5:
                    await log.append("t", batch)
                else:
                    await asyncio.gather(*(log.append("t", [r]) for r in batch))
                if rng.random() < 0.3:
                    await asyncio.sleep(0)

        async def consume(consumer: Consumer) -> dict[int, list[Record]]:
            out: dict[int, list[Record]] = {p: [] for p in range(partitions)}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                for record in await consumer.poll(timeout_ms=50, max_records=7):
                    out[record.partition].append(record)
                if done.is_set() and sum(map(len, out.values())) >= total:
                    break
            return out

        async def follow(log: EmbeddedEventLog) -> dict[int, list[Record]]:
            out: dict[int, list[Record]] = {p: [] for p in range(partitions)}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                finished = done.is_set()
                for partition in range(partitions):
                    offset = len(out[partition])
                    out[partition].extend(await log.read("t", partition, offset, 5))
                if finished and sum(map(len, out.values())) >= total:
                    break
                await asyncio.sleep(0.001)
            return out

        async def write_all() -> None:
            await asyncio.gather(writer(a, "a"), writer(b, "b"))
            done.set()

        _, *seen = await asyncio.gather(
            write_all(), *(consume(c) for c in consumers), follow(a), follow(b)
        )
        for consumer in consumers:
            await consumer.stop()
    stored = await file_contents(path, "t")
    assert sum(map(len, stored.values())) == total
    for reader in seen:
        assert reader == stored  # every record once, in the file's order, equal to it


async def test_a_member_following_its_own_appends_needs_no_reader_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded_consumer, "_IDLE_READ_S", 3600.0)  # no periodic read meanwhile
    async with EmbeddedEventLog(tmp_path / "e.db") as log:
        await log.create_topics([TopicSpec("t", partitions=2)])
        consumer = log.consumer("g", ["t"])
        await consumer.start()
        assert await consumer.poll(timeout_ms=0) == []  # the first, full read, from the file
        forbid_reader_thread(log, monkeypatch)
        for i in range(5):
            await log.append("t", [OutgoingRecord(value=str(i).encode(), partition=i % 2)])
            (record,) = await consumer.poll(timeout_ms=1000)
            assert (record.partition, record.offset, record.value) == (i % 2, i // 2, b"%d" % i)
        await consumer.stop()


async def test_appends_of_another_log_are_seen_while_this_one_keeps_appending(
    tmp_path: Path,
) -> None:
    """Reads of moved partitions must not put off the periodic read of the others forever."""
    path = tmp_path / "e.db"
    async with EmbeddedEventLog(path) as a, EmbeddedEventLog(path) as b:
        await a.create_topics([TopicSpec("t", partitions=2)])
        consumer = a.consumer("g", ["t"])
        await consumer.start()
        await a.append("t", [OutgoingRecord(value=b"ours", partition=0)])
        assert [r.value for r in await poll_until(consumer, 1)] == [b"ours"]
        await b.append("t", [OutgoingRecord(value=b"theirs", partition=1)])
        seen: list[bytes] = []
        deadline = time.monotonic() + 10
        while b"theirs" not in seen and time.monotonic() < deadline:
            await a.append("t", [OutgoingRecord(value=b"ours", partition=0)])
            seen.extend(r.value for r in await consumer.poll(timeout_ms=1000))
        assert b"theirs" in seen
        await consumer.stop()


async def test_the_tail_keeps_at_most_its_bound(tmp_path: Path) -> None:
    async with EmbeddedEventLog(tmp_path / "e.db", tail_records=5) as log:
        await log.create_topics([TopicSpec("t")])
        info = await log.topic("t")
        for i in range(12):
            await log.append("t", [OutgoingRecord(value=b"%d" % i)])
        assert log.tail_read(info.id, 0, 6, 100) is None
        assert [r.offset for r in log.tail_read(info.id, 0, 7, 100) or []] == [7, 8, 9, 10, 11]
        await log.append("t", [OutgoingRecord(value=b"%d" % i) for i in range(12, 32)])
        assert log.tail_read(info.id, 0, 26, 100) is None
        assert [r.offset for r in log.tail_read(info.id, 0, 27, 100) or []] == list(range(27, 32))
        for i in range(32, 40):  # around the ring again, one at a time
            await log.append("t", [OutgoingRecord(value=b"%d" % i)])
            for offset in range(i - 4, i + 1):
                for n in range(1, 7):
                    expected = await from_file(log, "t", 0, offset, n)
                    assert log.tail_read(info.id, 0, offset, n) == expected
            assert log.tail_read(info.id, 0, i - 5, 100) is None
        # Below the tail the file answers, as before.
        assert [r.value for r in await log.read("t", 0, 0)] == [b"%d" % i for i in range(40)]
        assert [len(tail.ring) for tail in log._tails.values()] == [5]  # what memory holds


async def test_no_tail_when_its_bound_is_zero(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tail_records"):
        EmbeddedEventLog(tmp_path / "e.db", tail_records=-1)
    async with EmbeddedEventLog(tmp_path / "e.db", tail_records=0) as log:
        await log.create_topics([TopicSpec("t")])
        info = await log.topic("t")
        await log.append("t", [OutgoingRecord(value=b"x")])
        assert log.tail_read(info.id, 0, 0, 10) is None
        async with log.consumer("g", ["t"]) as consumer:
            assert [r.value for r in await poll_until(consumer, 1)] == [b"x"]


async def test_a_closed_log_answers_no_read_from_its_tail(tmp_path: Path) -> None:
    log = EmbeddedEventLog(tmp_path / "e.db")
    await log.start()
    await log.create_topics([TopicSpec("t")])
    await log.append("t", [OutgoingRecord(value=b"x")])
    await log.close()
    with pytest.raises(EventLogError, match="not started"):
        await log.read("t", 0, 0)


async def test_a_seek_back_into_the_tail_reads_it_again(tmp_path: Path) -> None:
    async with EmbeddedEventLog(tmp_path / "e.db") as log:
        await log.create_topics([TopicSpec("t")])
        await log.append("t", [OutgoingRecord(value=b"%d" % i) for i in range(4)])
        async with log.consumer("g", ["t"]) as consumer:
            assert len(await poll_until(consumer, 4)) == 4
            await consumer.seek(TopicPartition("t", 0), 2)
            assert [r.value for r in await poll_until(consumer, 2)] == [b"2", b"3"]
            await consumer.commit()
            assert await consumer.committed(TopicPartition("t", 0)) == 4


@pytest.mark.parametrize(("setting", "kept"), [(None, True), (0, False)])
async def test_the_setting_reaches_the_log(tmp_path: Path, setting: int | None, kept: bool) -> None:
    settings = Settings(data_dir=tmp_path)
    if setting is not None:
        settings = settings.model_copy(update={"eventlog_tail_records": setting})
    log = open_event_log(settings)
    assert isinstance(log, EmbeddedEventLog)
    async with log:
        await log.create_topics([TopicSpec("t")])
        info = await log.topic("t")
        await log.append("t", [OutgoingRecord(value=b"x")])
        assert (log.tail_read(info.id, 0, 0, 10) is not None) is kept


async def test_read_partitions_equals_reads_in_one_trip_to_the_reader_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A projection step reads every partition that moved: one trip, not one per partition.
    path = tmp_path / "e.db"
    async with EmbeddedEventLog(path) as writer:
        await writer.create_topics([TopicSpec("t", partitions=3), TopicSpec("u", partitions=2)])
        await writer.append("t", [outgoing(i) for i in range(60)])
        await writer.append("u", [outgoing(i) for i in range(20)])
        async with EmbeddedEventLog(path) as log:  # another process's log: no tail of its own
            await log.append("t", [outgoing(i, partition=1) for i in range(5)])  # a tail here
            reads = [
                (TopicPartition("u", 1), 2),
                (TopicPartition("t", 0), 0),
                (TopicPartition("t", 1), (await log.end_offset("t", 1)) - 3),  # from the tail
                (TopicPartition("t", 2), 10_000),  # past the end
            ]
            expected = [await log.read(tp.topic, tp.partition, o, 7) for tp, o in reads]
            assert [len(records) for records in expected] == [7, 7, 3, 0]
            trips = 0
            read_with = log.read_with

            async def counted(run: Callable[[sqlite3.Connection], Any]) -> Any:
                nonlocal trips
                trips += 1
                return await read_with(run)

            monkeypatch.setattr(log, "read_with", counted)
            assert await log.read_partitions(reads, 7) == expected
            assert trips == 1
            with pytest.raises(EventLogError):
                await log.read_partitions([(TopicPartition("t", 3), 0)])
