"""What only the embedded log has to show: sharing one file, group commit, expiry of members."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest
from arena_runtime.config import Settings
from arena_runtime.eventlog import EventLogError, OutgoingRecord, TopicPartition, TopicSpec
from arena_runtime.eventlog.embedded import EmbeddedEventLog, decode_headers, encode_headers
from arena_runtime.eventlog.embedded_consumer import range_assignment
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.kafka import KafkaEventLog


async def test_concurrent_single_appends_get_dense_offsets(tmp_path: Path) -> None:
    async with EmbeddedEventLog(tmp_path / "e.db") as log:
        await log.create_topics([TopicSpec("t", partitions=2)])
        one = [OutgoingRecord(value=str(i).encode(), partition=i % 2) for i in range(400)]
        positions = await asyncio.gather(*(log.append("t", [r]) for r in one))
        for p in (0, 1):
            offsets = sorted(pos[0].offset for pos in positions if pos[0].partition == p)
            assert offsets == list(range(200))
        for record, pos in zip(one, positions, strict=True):
            (read,) = await log.read("t", pos[0].partition, pos[0].offset, 1)
            assert read.value == record.value


async def test_two_logs_on_one_file_continue_each_others_offsets(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    async with EmbeddedEventLog(path) as a, EmbeddedEventLog(path) as b:
        await a.create_topics([TopicSpec("t", partitions=1)])
        record = [OutgoingRecord(value=b"x")]
        offsets = []
        for writer in (a, b, a, a, b, b, a):
            offsets.append((await writer.append("t", record))[0].offset)
        assert offsets == list(range(7))
        assert await b.end_offsets("t") == {0: 7}


async def test_a_group_spans_logs_sharing_the_file(tmp_path: Path) -> None:
    """Two processes' worth of members: no shared memory, only the file."""
    path = tmp_path / "e.db"
    async with (
        EmbeddedEventLog(path, heartbeat_interval_ms=100) as a,
        EmbeddedEventLog(path, heartbeat_interval_ms=100) as b,
    ):
        await a.create_topics([TopicSpec("t", partitions=4)])
        first, second = a.consumer("g", ["t"]), b.consumer("g", ["t"])
        await first.start()
        assert len(first.assignment()) == 4
        await second.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            await asyncio.gather(first.poll(timeout_ms=50), second.poll(timeout_ms=50))
            if len(first.assignment()) == len(second.assignment()) == 2:
                break
        assert len(first.assignment()) == len(second.assignment()) == 2
        assert first.assignment().isdisjoint(second.assignment())
        await second.stop()
        deadline = time.monotonic() + 10
        while len(first.assignment()) < 4 and time.monotonic() < deadline:
            await first.poll(timeout_ms=50)
        assert len(first.assignment()) == 4
        await first.stop()


async def test_a_silent_member_expires_and_its_partitions_move(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    async with EmbeddedEventLog(path, session_timeout_ms=300, heartbeat_interval_ms=50) as b:
        await b.create_topics([TopicSpec("t", partitions=2)])
        await b.append("t", [OutgoingRecord(value=b"p1", partition=1)])
        crashed = EmbeddedEventLog(path, session_timeout_ms=300, heartbeat_interval_ms=50)
        await crashed.start()
        ghost = crashed.consumer("g", ["t"])
        await ghost.start()
        await crashed.close()  # the member never leaves: as if its process died
        survivor = b.consumer("g", ["t"])
        await survivor.start()
        assert len(survivor.assignment()) < 2
        got = []
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            got = await survivor.poll(timeout_ms=100)
        assert [r.value for r in got] == [b"p1"]
        assert survivor.assignment() == {TopicPartition("t", 0), TopicPartition("t", 1)}
        await survivor.stop()


async def test_closed_log_refuses_work(tmp_path: Path) -> None:
    log = EmbeddedEventLog(tmp_path / "e.db")
    await log.start()
    await log.create_topics([TopicSpec("t")])
    consumer = log.consumer("g", ["t"])
    await consumer.start()
    await log.close()
    with pytest.raises(EventLogError):
        await log.append("t", [OutgoingRecord(value=b"x")])
    await consumer.stop()  # too late to leave: the member will expire instead
    assert consumer.assignment() == frozenset()


async def test_the_file_is_wal_and_checks_clean(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    async with EmbeddedEventLog(path) as log:
        await log.create_topics([TopicSpec("t", partitions=3)])
        await log.append("t", [OutgoingRecord(value=b"v", key=str(i).encode()) for i in range(50)])
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_a_waiting_consumer_is_woken_only_by_appends_to_its_topics(tmp_path: Path) -> None:
    """Another topic's append or an offset commit gives a consumer nothing to read, so neither
    wakes it (each woken consumer used to look at every partition it owns); an append to one
    of its topics does, and what was appended is read."""
    async with EmbeddedEventLog(tmp_path / "e.db") as log:
        await log.create_topics([TopicSpec("mine", partitions=4), TopicSpec("other")])
        consumer = log.consumer("g", ["mine"])
        await consumer.start()
        assert len(consumer.assignment()) == 4
        assert await consumer.poll(timeout_ms=0) == []
        mine = frozenset({(await log.topic("mine")).id})
        since = log.stamp
        waiting = asyncio.create_task(log.wait_for_change(since, mine, 60))
        await log.append("other", [OutgoingRecord(value=b"x")])
        await consumer.commit({TopicPartition("mine", 0): 0})
        for _ in range(3):
            await asyncio.sleep(0)
        assert not log.changed_since(since, mine)
        assert not waiting.done()
        await log.append("mine", [OutgoingRecord(value=b"y", partition=2)])
        await asyncio.wait_for(waiting, 10)
        assert log.changed_since(since, mine)
        records = await consumer.poll(timeout_ms=1000)
        assert [(r.partition, r.value) for r in records] == [(2, b"y")]


def test_headers_codec_round_trips() -> None:
    headers = (("a", b""), ("traceparent", b"\x00\xff" * 40), ("é", b"x"), ("long", b"y" * 5000))
    first = encode_headers(headers)
    assert decode_headers(first) == headers
    assert encode_headers(headers) == first  # the names known since: the same bytes
    assert encode_headers(()) is None
    assert decode_headers(None) == ()


def test_range_assignment_is_kafkas() -> None:
    members = [("b", [1]), ("a", [1, 2]), ("c", [2])]
    out = range_assignment(members, {1: 5, 2: 2})
    assert out == {"a": {(1, 0), (1, 1), (1, 2), (2, 0)}, "b": {(1, 3), (1, 4)}, "c": {(2, 1)}}


async def test_factory_picks_by_settings(tmp_path: Path) -> None:
    embedded = open_event_log(Settings(data_dir=tmp_path, topic_prefix="p."))
    assert isinstance(embedded, EmbeddedEventLog)
    assert embedded.path == tmp_path / "events.db"
    assert embedded.topic_prefix == "p."
    kafka = open_event_log(Settings(kafka_bootstrap="127.0.0.1:9", topic_prefix="q."))
    assert isinstance(kafka, KafkaEventLog)
    assert (kafka.bootstrap, kafka.topic_prefix) == ("127.0.0.1:9", "q.")


async def test_topic_prefix_is_invisible_to_readers(tmp_path: Path) -> None:
    async with open_event_log(Settings(data_dir=tmp_path, topic_prefix="p.")) as log:
        await log.create_topics([TopicSpec("t")])
        await log.append("t", [OutgoingRecord(value=b"x")])
        (record,) = await log.read("t", 0, 0)
        assert record.topic == "t"
    with sqlite3.connect(tmp_path / "events.db") as conn:
        assert conn.execute("SELECT name FROM topics").fetchall() == [("p.t",)]


async def test_a_group_spans_processes_and_survives_a_member_killed(tmp_path: Path) -> None:
    from tests.conftest import REPO_ROOT
    from tests.runtime.eventlog import group_member

    path = tmp_path / "e.db"
    async with EmbeddedEventLog(
        path,
        session_timeout_ms=group_member.SESSION_TIMEOUT_MS,
        heartbeat_interval_ms=group_member.HEARTBEAT_MS,
    ) as log:
        await log.create_topics([TopicSpec("t", partitions=4)])
        ours = log.consumer("g", ["t"])
        await ours.start()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.runtime.eventlog.group_member",
            str(path),
            "g",
            "t",
            cwd=REPO_ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        try:
            theirs: set[int] = set()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                await ours.poll(timeout_ms=50)
                with contextlib.suppress(TimeoutError):
                    line = await asyncio.wait_for(proc.stdout.readline(), 0.05)
                    theirs = {int(p) for p in line.split()}
                mine = {tp.partition for tp in ours.assignment()}
                if len(mine) == len(theirs) == 2:
                    break
            assert len(mine) == len(theirs) == 2
            assert mine.isdisjoint(theirs)
        finally:
            proc.kill()  # SIGKILL: the member never leaves
            await proc.wait()
        deadline = time.monotonic() + 20
        while len(ours.assignment()) < 4 and time.monotonic() < deadline:
            await ours.poll(timeout_ms=50)
        assert len(ours.assignment()) == 4
        await ours.stop()


async def test_a_member_busy_between_polls_keeps_its_partitions(tmp_path: Path) -> None:
    async with EmbeddedEventLog(
        tmp_path / "e.db", session_timeout_ms=300, heartbeat_interval_ms=50
    ) as log:
        await log.create_topics([TopicSpec("t", partitions=2)])
        busy, newcomer = log.consumer("g", ["t"]), log.consumer("g", ["t"])
        await busy.start()
        await newcomer.start()
        await asyncio.sleep(1.0)  # busy does not poll for three session timeouts
        for _ in range(5):
            await newcomer.poll(timeout_ms=20)
        assert len(busy.assignment()) == 2, "still a member: nothing was taken from it"
        assert newcomer.assignment() == frozenset()
        deadline = time.monotonic() + 10
        while len(newcomer.assignment()) < 1 and time.monotonic() < deadline:
            await asyncio.gather(busy.poll(timeout_ms=20), newcomer.poll(timeout_ms=20))
        assert len(busy.assignment()) == len(newcomer.assignment()) == 1
        await busy.stop()
        await newcomer.stop()


def _eventlog_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("eventlog-")]


async def test_a_start_that_fails_leaves_no_thread_behind(tmp_path: Path) -> None:
    before = _eventlog_threads()
    (tmp_path / "e.db").mkdir()  # a directory where the file should be: SQLite cannot open it
    log = EmbeddedEventLog(tmp_path / "e.db")
    with pytest.raises(sqlite3.OperationalError):
        await log.start()
    assert _eventlog_threads() == before
    with pytest.raises(EventLogError, match="not started"):
        await log.end_offsets("t")


async def test_retention_and_compaction_let_records_go_but_never_a_partitions_last(
    tmp_path: Path,
) -> None:
    """The views' retention and the snapshots' compaction hold on the embedded log too: old
    records go, replaced keys go, the next offset and what is kept read as before."""
    async with EmbeddedEventLog(tmp_path / "events.db") as log:
        await log.create_topics(
            [
                TopicSpec("views", partitions=1, retention_ms=60_000),
                TopicSpec("snapshots", partitions=1, compacted=True),
                TopicSpec("events", partitions=1),
            ]
        )
        for name in ("views", "events"):
            await log.append(name, [OutgoingRecord(value=f"{name}{i}".encode()) for i in range(5)])
        await log.append(
            "snapshots",
            [OutgoingRecord(value=f"s{i}".encode(), key=f"p{i % 2}".encode()) for i in range(5)],
        )
        assert await log.sweep() == 3  # the snapshots each key's latest replaces; no view is old
        written = (await log.read("views", 0, 0, 10))[0].timestamp_ms
        # An hour later: every view but the partition's last is past its retention.
        gone = await log.sweep(now=written + 3_600_000)
        assert gone == 4
        # Read from the file, as another process does (this one still holds its own appends).
        async with EmbeddedEventLog(tmp_path / "events.db") as other:
            assert [r.value for r in await other.read("views", 0, 0, 10)] == [b"views4"]
            assert [r.value for r in await other.read("events", 0, 0, 10)] == [
                f"events{i}".encode() for i in range(5)
            ]
            kept = await other.read("snapshots", 0, 0, 10)
            assert [(r.key, r.offset) for r in kept] == [(b"p1", 3), (b"p0", 4)]
        (position,) = await log.append("views", [OutgoingRecord(value=b"views5")])
        assert position.offset == 5
        assert await log.end_offset("views", 0) == 6
