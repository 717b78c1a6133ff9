"""`arena rebuild` empties every registered projection and replays the log: the rebuilt tables
equal the ones a live runner built while records were still arriving. On SQLite and PostgreSQL,
over the embedded log and the real Kafka-compatible broker."""

from __future__ import annotations

import random
import secrets
from pathlib import Path
from typing import Any

import pytest
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.eventlog import OutgoingRecord
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.sql import Projection, projection_offsets, registry, stream_activity
from arena_runtime.sql.rebuild import runners
from arena_runtime.sql.stream_activity import EVENT_TOPICS
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.harness.command import arena
from tests.harness.tables import snapshot as projection_rows


def kafka_settings(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> Settings:
    bootstrap: str = request.getfixturevalue("kafka_bootstrap")
    prefix = f"{request.getfixturevalue('topic_prefix')}{secrets.token_hex(3)}."
    return Settings(
        data_dir=tmp_path, database_url=db_url, kafka_bootstrap=bootstrap, topic_prefix=prefix
    )


async def snapshot(
    sessions: async_sessionmaker[AsyncSession], projections: list[Projection]
) -> dict[str, list[Any]]:
    """The projections' rows, and the offsets each was built to."""
    tables = await projection_rows(sessions, projections)
    async with sessions() as session:
        tables["projection_offsets"] = sorted(
            (await session.execute(select(projection_offsets))).all()
        )
    return tables


async def test_arena_rebuild_reproduces_the_live_tables(
    db_url: str,
    tmp_path: Path,
    sessions: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = Settings(data_dir=tmp_path, database_url=db_url)
    await check_rebuild(settings, 3, sessions, monkeypatch, capsys)


@pytest.mark.kafka
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_arena_rebuild_over_kafka_reproduces_the_live_tables(
    request: pytest.FixtureRequest,
    db_url: str,
    tmp_path: Path,
    sessions: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One partition per topic: every partition read costs the broker a fetch round trip.
    settings = kafka_settings(request, db_url, tmp_path)
    await check_rebuild(settings, 1, sessions, monkeypatch, capsys)


async def check_rebuild(
    settings: Settings,
    partitions: int,
    sessions: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    projections = registry.projections(settings)
    assert "stream_activity" in [p.name for p in projections]
    rng = random.Random(11)
    async with open_event_log(settings) as log:
        await topics.ensure_topics(log, partitions=partitions)
        live = runners(settings, log, sessions, projections)
        for _ in range(4):  # records keep arriving while the projections follow
            for topic in EVENT_TOPICS:
                batch = [
                    OutgoingRecord(value=b"e", key=f"stream-{rng.randrange(9)}".encode())
                    for _ in range(rng.randint(5, 25))
                ]
                await log.append(topic, batch)
            for runner in live:
                await runner.step()
        for runner in live:
            await runner.catch_up()
            assert await runner.lag() == 0
        total = 0
        for topic in EVENT_TOPICS:
            total += sum((await log.end_offsets(topic)).values())

    before = await snapshot(sessions, projections)
    assert len(before["stream_activity"]) > 9  # streams on several topics
    # A row no record explains: a rebuild must not keep it.
    async with sessions() as session, session.begin():
        await session.execute(
            insert(stream_activity).values(
                topic="stale",
                stream="ghost",
                records=1,
                first_seen_ms=0,
                last_seen_ms=0,
                last_partition=0,
                last_offset=0,
            )
        )

    capsys.readouterr()
    assert await arena(monkeypatch, settings, "rebuild") == 0
    assert f"rebuilt stream_activity: {total} records" in capsys.readouterr().out
    assert await snapshot(sessions, projections) == before


async def test_rebuild_refuses_unknown_projections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(data_dir=tmp_path)
    assert await arena(monkeypatch, settings, "rebuild", "--projection", "typo") == 2
    err = capsys.readouterr().err
    # Services register projections of their own beside the runtime's (entry points).
    assert "no projection named 'typo'; registered: " in err
    assert "stream_activity" in err.split("registered: ")[1]
    assert not (tmp_path / "projections.sqlite3").exists()  # nothing was touched
