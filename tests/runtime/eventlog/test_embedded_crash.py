"""kill -9 of a process appending to the embedded log loses no acknowledged record or commit."""

from __future__ import annotations

import asyncio
import random
import signal
import sqlite3
import sys
from pathlib import Path

import pytest
from arena_runtime.eventlog import TopicPartition
from arena_runtime.eventlog.embedded import EmbeddedEventLog

from tests.conftest import REPO_ROOT

ROUNDS = 6


Acked = list[tuple[int, int, str]]
Commits = dict[int, int]


async def run_and_kill(path: Path, round_: int, rng: random.Random) -> tuple[Acked, Commits]:
    """Start the writer, SIGKILL it after a random time, return what it acknowledged."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.runtime.eventlog.crash_writer",
        str(path),
        str(round_),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert await asyncio.wait_for(proc.stdout.readline(), 30) == b"ready\n"
    await asyncio.sleep(rng.uniform(0.05, 0.6))
    proc.send_signal(signal.SIGKILL)
    out = await proc.stdout.read()
    await proc.wait()
    assert proc.returncode == -signal.SIGKILL
    acked = []
    commits: Commits = {}
    for line in out.decode().split("\n")[:-1]:  # a cut-off last line is not counted
        first, partition, offset = line.split(" ")
        if first == "C":
            commits[int(partition)] = max(commits.get(int(partition), 0), int(offset))
        else:
            acked.append((int(first), int(partition), offset))
    return acked, commits


@pytest.mark.slow
async def test_kill_9_loses_no_acknowledged_append(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    rng = random.Random()
    acked: Acked = []
    commits: Commits = {}
    for round_ in range(ROUNDS):
        round_acked, round_commits = await run_and_kill(path, round_, rng)
        acked.extend(round_acked)
        for partition, offset in round_commits.items():
            commits[partition] = max(commits.get(partition, 0), offset)
    assert len(acked) > 1000, "the writer should have acknowledged plenty before the kills"

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    async with EmbeddedEventLog(path) as log:
        async with log.consumer("crash-readers", ["crash"]) as consumer:
            assert commits, "the group should have committed before the kills"
            for partition, offset in commits.items():
                committed = await consumer.committed(TopicPartition("crash", partition))
                assert committed is not None and committed >= offset
        ends = await log.end_offsets("crash")
        stored: dict[tuple[int, int], bytes] = {}
        for partition, end in ends.items():
            offset = 0
            while offset < end:
                for record in await log.read("crash", partition, offset, 5000):
                    stored[(partition, record.offset)] = record.value
                    offset = record.offset + 1
            # offsets stay dense across crashes: no gap, no reuse
            assert sorted(o for p, o in stored if p == partition) == list(range(end))
    for partition, offset, value in acked:
        assert stored.get((partition, offset)) == value.encode(), (partition, offset)
    assert len(set(stored.values())) == len(stored), "a record was written twice"
