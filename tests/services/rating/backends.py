"""The two sets of real parts every rating test suite runs over: the embedded log with SQLite
(``Settings(data_dir=...)``), and these, the Tansu broker with an emptied PostgreSQL; and the
check every projection suite ends with, that `arena rebuild` makes the live tables again."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest
from arena_runtime.config import Settings
from arena_runtime.sql import engine_from_settings, session_factory

from tests.harness.command import arena
from tests.harness.postgres import empty_postgres
from tests.harness.tables import snapshot


async def distributed_settings(
    request: pytest.FixtureRequest, tmp_path: Path, partitions: int = 2
) -> Settings:
    """Kafka (Tansu) under a topic prefix of this test's own, and PostgreSQL emptied."""
    url: str = request.getfixturevalue("postgres_url")
    await empty_postgres(url)
    return Settings(
        data_dir=tmp_path,
        database_url=url,
        kafka_bootstrap=request.getfixturevalue("kafka_bootstrap"),
        topic_prefix=f"{request.getfixturevalue('topic_prefix')}{secrets.token_hex(3)}.",
        partitions=partitions,
    )


async def rebuilt_equals_live(
    monkeypatch: pytest.MonkeyPatch, settings: Settings, projections: Any, live_tables: Any
) -> None:
    """`arena rebuild` of these projections: every table the same from the log alone."""
    argv = [arg for p in projections for arg in ("--projection", p.name)]
    assert await arena(monkeypatch, settings, "rebuild", *argv) == 0
    engine = engine_from_settings(settings)
    try:
        assert await snapshot(session_factory(engine), projections) == live_tables
    finally:
        await engine.dispose()
