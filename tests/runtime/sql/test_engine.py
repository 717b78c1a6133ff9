"""Database URLs from the settings, and the projection registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_runtime.config import Settings
from arena_runtime.sql import (
    DatabaseUrlError,
    ProjectionError,
    ProjectionRegistry,
    StreamActivity,
    database_url,
    open_database,
    registry,
)
from arena_runtime.sql.engine import parse_url
from arena_runtime.sql.migrate import current_revisions, head_revisions
from sqlalchemy import Table


def test_without_a_database_url_projections_live_in_sqlite_under_the_data_dir(
    tmp_path: Path,
) -> None:
    url = database_url(Settings(data_dir=tmp_path / "var"))
    assert url.drivername == "sqlite+aiosqlite"
    assert url.database == str((tmp_path / "var" / "projections.sqlite3").resolve())
    assert (tmp_path / "var").is_dir()


def test_database_urls_get_their_async_driver() -> None:
    assert parse_url("postgresql://u@h:5432/d").drivername == "postgresql+asyncpg"
    assert parse_url("sqlite:///x.db").drivername == "sqlite+aiosqlite"
    with pytest.raises(DatabaseUrlError, match="ARENA_DATABASE_URL"):
        parse_url("mysql+aiomysql://u@h/d")
    with pytest.raises(DatabaseUrlError, match="not a database URL"):
        parse_url("::nonsense::")


async def test_open_database_migrates_before_handing_out_the_engine(db_url: str) -> None:
    engine = await open_database(Settings(database_url=db_url))
    try:
        assert await current_revisions(engine) == head_revisions()
    finally:
        await engine.dispose()


def test_the_registry_holds_stream_activity_over_the_event_topics(tmp_path: Path) -> None:
    # Services add their own projections through entry points; the runtime's own is this one.
    by_name = {p.name: p for p in registry.projections(Settings(data_dir=tmp_path))}
    assert list(by_name["stream_activity"].topics) == [
        "arena.match.events",
        "arena.matchmaking.events",
        "arena.rating.events",
        "arena.accounts.events",
    ]


def test_the_registry_refuses_clashing_projections(tmp_path: Path) -> None:
    mine = ProjectionRegistry(entry_point_group=None)
    mine.register(lambda settings: StreamActivity(["a"]))
    assert [p.name for p in mine.projections(Settings(data_dir=tmp_path))] == ["stream_activity"]
    mine.register(lambda settings: [StreamActivity(["b"])])
    with pytest.raises(ProjectionError, match="two projections are named 'stream_activity'"):
        mine.projections(Settings(data_dir=tmp_path))


def test_the_registry_refuses_two_owners_of_one_table(tmp_path: Path) -> None:
    class Thief(StreamActivity):
        name = "thief"

    mine = ProjectionRegistry(entry_point_group=None)
    mine.register(lambda settings: [StreamActivity(["a"]), Thief(["a"])])
    with pytest.raises(ProjectionError, match="owned by both"):
        mine.projections(Settings(data_dir=tmp_path))
    assert isinstance(StreamActivity.tables[0], Table)
