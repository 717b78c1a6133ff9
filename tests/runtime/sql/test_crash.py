"""A projection killed with SIGKILL in the middle of a batch resumes with no duplicate and no gap.

The child announces every record as ``apply`` returns, before the batch commits; the parent
kills it at random points and checks that some kills did land with applied-but-uncommitted
records (else the test would prove nothing), then lets a last child finish and compares the
ledger with the log, record for record.
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

from tests.runtime.sql.ledger import TOPICS, Ledger, create_ledger_table, ledger_rows

REPO_ROOT = Path(__file__).resolve().parents[3]
RECORDS_PER_TOPIC = 150
KILLS = 3

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
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


async def test_sigkill_mid_batch_loses_and_repeats_nothing(
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
    mid_batch_kills = 0
    for _ in range(KILLS):
        committed_before = len(await ledger_rows(sessions))
        proc = await child(db_url, tmp_path)
        assert proc.stdout is not None
        announced = 0
        wanted = rng.randint(5, 45)
        while announced < wanted:
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line.startswith(b"applied"), line
            announced += 1
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        committed = len(await ledger_rows(sessions)) - committed_before
        # Announced records that did not commit died with the batch they were in.
        mid_batch_kills += committed < announced
    assert mid_batch_kills > 0

    proc = await child(db_url, tmp_path, delay=0)
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
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
        runner = ProjectionRunner(Ledger(), log, sessions)
        assert await runner.lag() == 0
