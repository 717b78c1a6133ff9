"""Small helpers of the rating tests: the real ``arena`` command, an empty PostgreSQL schema,
the rows of projections."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from arena_cli.main import main
from arena_runtime.config import Settings
from arena_runtime.sql import Projection, create_engine
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


async def arena(monkeypatch: pytest.MonkeyPatch, settings: Settings, *argv: str) -> int:
    """Run the real ``arena`` entry point with ``settings`` as its environment (in a thread:
    it runs its own event loop)."""
    for name in list(os.environ):
        if name.startswith("ARENA_") and not name.startswith("ARENA_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ARENA_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("ARENA_DATABASE_URL", settings.database_url)
    if settings.kafka_bootstrap:
        monkeypatch.setenv("ARENA_KAFKA_BOOTSTRAP", settings.kafka_bootstrap)
        monkeypatch.setenv("ARENA_TOPIC_PREFIX", settings.topic_prefix)
    return await asyncio.to_thread(main, list(argv))


async def empty_postgres(url: str) -> None:
    """Drop everything earlier tests left in the session's database."""
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("DROP SCHEMA public CASCADE"))
            await connection.execute(text("CREATE SCHEMA public"))
    finally:
        await engine.dispose()


async def snapshot(
    sessions: async_sessionmaker[AsyncSession], projections: list[Projection]
) -> dict[str, list[Any]]:
    tables: dict[str, list[Any]] = {}
    async with sessions() as session:
        for projection in projections:
            for table in projection.tables:
                tables[table.name] = sorted((await session.execute(select(table))).all())
    return tables
