"""Each SQL test runs on SQLite and on the real PostgreSQL, starting from an empty schema."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from arena_runtime.config import Settings
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.sql import create_engine, session_factory, upgrade_head
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from tests.harness.postgres import empty_postgres


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'projections.sqlite3'}"
    url: str = request.getfixturevalue("postgres_url")
    await empty_postgres(url)
    return url


@pytest.fixture
async def engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(db_url)
    await upgrade_head(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return session_factory(engine)


@pytest.fixture
async def log(tmp_path: Path) -> AsyncIterator[EventLog]:
    """A real embedded event log of this test's own."""
    async with open_event_log(Settings(data_dir=tmp_path / "log")) as event_log:
        yield event_log
