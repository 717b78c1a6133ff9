"""Processes sharing one embedded log file wake each other: a commit is announced to every log
on the file that listens (arena_runtime.eventlog.peers), so a consumer there reads it at once
rather than at its periodic read. Two logs on one file stand for two processes here: each has
its own socket, threads and connections, as a process would."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest
from arena_runtime.eventlog import OutgoingRecord, TopicSpec, embedded_consumer, peers
from arena_runtime.eventlog.embedded import EmbeddedEventLog

#: Far longer than a wake-up takes, far shorter than the poll's own end.
POLL_MS = 60_000


@pytest.fixture(autouse=True)
def no_periodic_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The consumers' periodic read (which also finds other processes' appends) out of the way:
    what arrives before a poll's end arrived by a wake-up."""
    monkeypatch.setattr(embedded_consumer, "_IDLE_READ_S", 3600.0)


def listeners(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM log_peers").fetchone()[0])


async def test_a_listening_log_reads_another_logs_append_as_it_commits(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    async with EmbeddedEventLog(path) as writer, EmbeddedEventLog(path) as reader:
        await writer.create_topics([TopicSpec("moves", 4)])
        consumer = reader.consumer("match", ["moves"])
        await consumer.start()
        assert await consumer.poll(timeout_ms=50) == []  # joined; its first read found nothing
        started = time.monotonic()
        polling = asyncio.create_task(consumer.poll(timeout_ms=POLL_MS))
        await asyncio.sleep(0.1)
        await writer.append("moves", [OutgoingRecord(b"one", key=b"m-1")])
        records = await polling
        assert [r.value for r in records] == [b"one"]
        assert time.monotonic() - started < POLL_MS / 2000  # woken, not found at the poll's end
        # And what follows, without a gap or a repeat.
        await writer.append("moves", [OutgoingRecord(b"two", key=b"m-1")])
        assert [r.value for r in await consumer.poll(timeout_ms=POLL_MS)] == [b"two"]
        await consumer.stop()


async def test_a_log_that_does_not_listen_announces_but_is_not_told(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    async with EmbeddedEventLog(path, peer_wakeups=False) as quiet:
        assert listeners(path) == 0
        async with EmbeddedEventLog(path) as listening:
            assert listeners(path) == 1
            await quiet.create_topics([TopicSpec("moves", 1)])
            consumer = listening.consumer("match", ["moves"])
            await consumer.start()
            assert await consumer.poll(timeout_ms=50) == []
            polling = asyncio.create_task(consumer.poll(timeout_ms=POLL_MS))
            await asyncio.sleep(0.1)
            await quiet.append("moves", [OutgoingRecord(b"from the quiet one")])
            assert [r.value for r in await polling] == [b"from the quiet one"]
            await consumer.stop()
        assert listeners(path) == 0  # a log that closes takes its row with it


async def test_a_peer_that_is_gone_is_forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(peers, "REFRESH_S", 0.0)  # re-read at every commit
    path = tmp_path / "events.db"
    async with EmbeddedEventLog(path) as log:
        await log.create_topics([TopicSpec("moves", 1)])
        # A process killed with -9 leaves its row; nobody listens at its address any more.
        with sqlite3.connect(path) as conn:
            conn.execute(
                "INSERT INTO log_peers (address, pid) VALUES (?, ?)", (b"\0arena-log-gone", 1)
            )
        await log.append("moves", [OutgoingRecord(b"a")])  # refused by the address: noted
        await log.append("moves", [OutgoingRecord(b"b")])  # the row goes at the next re-read
        assert listeners(path) == 1  # only this log's own
