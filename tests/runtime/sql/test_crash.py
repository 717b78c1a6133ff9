"""A projection killed with SIGKILL at any moment resumes with no duplicate and no gap.

The child announces every record as ``apply`` returns, before the batch commits, and every SQL
commit just after it returned, then waits for the parent's word. The parent kills it in the
middle of a batch (and checks that some kills did land with applied-but-uncommitted records)
and right after a commit (where rows and offsets committed in two transactions would show as
rows without their offsets, or offsets without their rows). After every kill the ledger must hold
exactly the records below the stored offsets; a last child then finishes, and the ledger is
compared with the log, record for record.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from pathlib import Path

import pytest
from arena_runtime.config import Settings
from arena_runtime.eventlog import OutgoingRecord, TopicSpec
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.sql import ProjectionRunner
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from tests.runtime.sql.ledger import TOPICS, Ledger, Position, create_ledger_table, ledger_rows

REPO_ROOT = Path(__file__).resolve().parents[3]
RECORDS_PER_TOPIC = 150  # 50 a partition: three batches of at most 20 each

pytestmark = pytest.mark.slow


async def child(db_url: str, data_dir: Path, delay: float = 0.002) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.runtime.sql.crash_child",
        "--db",
        db_url,
        "--data-dir",
        str(data_dir),
        "--delay",
        str(delay),
        "--pause-at-commits",
        cwd=REPO_ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


async def below_stored_offsets(
    sessions: async_sessionmaker[AsyncSession], settings: Settings
) -> list[Position]:
    """The records the stored offsets say the ledger holds: every one below each offset."""
    # The runner only reads SQL here; its log is never started.
    stored = await ProjectionRunner(Ledger(), open_event_log(settings), sessions).stored_offsets()
    return sorted((tp.topic, tp.partition, o) for tp, end in stored.items() for o in range(end))


async def run_and_kill(
    proc: asyncio.subprocess.Process, kill_after: str, count: int
) -> tuple[int, int]:
    """Let the child run until its ``count``-th ``kill_after`` line ("applied" or "committed"),
    answering every commit it pauses at before that; kill it there. Returns the records it
    announced as applied and the commits it announced."""
    assert proc.stdin is not None and proc.stdout is not None
    seen = {"applied": 0, "committed": 0}
    while True:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        kind = line.split(b" ", 1)[0].strip().decode()
        assert kind in seen, line
        seen[kind] += 1
        if kind == kill_after and seen[kind] == count:
            break
        if kind == "committed":
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    return seen["applied"], seen["committed"]


async def test_sigkill_mid_batch_or_after_a_commit_loses_and_repeats_nothing(
    db_url: str,
    engine: AsyncEngine,
    sessions: async_sessionmaker[AsyncSession],
    tmp_path: Path,
) -> None:
    await create_ledger_table(engine)
    settings = Settings(data_dir=tmp_path)
    async with open_event_log(settings) as log:
        await log.create_topics([TopicSpec(t, partitions=3) for t in TOPICS])
        for topic in TOPICS:
            await log.append(
                topic,
                [
                    OutgoingRecord(value=f"v{i}".encode(), key=f"s{i % 11}".encode())
                    for i in range(RECORDS_PER_TOPIC)
                ],
            )

    rng = random.Random(7)
    # A kill in the middle of the first batch, one just after the first commit of a batch, one
    # mid-batch again, one after the second commit of a child; each child resumes the last.
    kills = [
        ("applied", rng.randint(5, 45)),
        ("committed", 1),
        ("applied", rng.randint(5, 45)),
        ("committed", 2),
    ]
    mid_batch_kills = after_commit_kills = 0
    for kill_after, count in kills:
        committed_before = len(await ledger_rows(sessions))
        proc = await child(db_url, tmp_path)
        announced, commits = await run_and_kill(proc, kill_after, count)
        rows = await ledger_rows(sessions)
        assert rows == await below_stored_offsets(sessions, settings), (
            f"killed after {announced} applied and {commits} commits: the rows are not "
            "the records below the stored offsets"
        )
        # Announced records that did not commit died with the batch they were in.
        mid_batch_kills += len(rows) - committed_before < announced
        after_commit_kills += kill_after == "committed" and len(rows) > committed_before
    assert mid_batch_kills > 0 and after_commit_kills > 0

    proc = await child(db_url, tmp_path, delay=0)
    # A word for each commit it has left to make, and more.
    out, _ = await asyncio.wait_for(proc.communicate(b"go\n" * 100), 120)
    assert proc.returncode == 0
    assert out.rstrip().endswith(b"done")

    async with open_event_log(settings) as log:
        expected = []
        for topic in TOPICS:
            for p, end in (await log.end_offsets(topic)).items():
                expected.extend((topic, p, o) for o in range(end))
        rows = await ledger_rows(sessions)
        assert len(rows) == len(set(rows)), "a record was applied twice"
        assert rows == sorted(expected), "a record was skipped"
        assert rows == await below_stored_offsets(sessions, settings)
        runner = ProjectionRunner(Ledger(), log, sessions)
        assert await runner.lag() == 0
