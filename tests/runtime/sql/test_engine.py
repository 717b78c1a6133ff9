"""Database URLs from the settings, and the projection registry."""

from __future__ import annotations

import sqlite3
import threading
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
from arena_runtime.sql.engine import create_engine, parse_url
from arena_runtime.sql.migrate import current_revisions, head_revisions
from sqlalchemy import Table, text


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


async def test_a_new_connection_waits_for_a_writer_before_switching_the_file_to_wal(
    tmp_path: Path,
) -> None:
    """The switch to WAL mode needs the file to itself; SQLite refuses it at once, without the
    busy handler, while another connection writes. Services starting together hit exactly this
    (a CI run failed "database is locked"): the connection must wait its turn instead."""
    path = tmp_path / "fresh.sqlite3"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE other_process (x INTEGER)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO other_process VALUES (1)")
    finish = threading.Timer(0.3, writer.execute, ("COMMIT",))
    finish.start()
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    try:
        async with engine.connect() as connection:
            mode = (await connection.execute(text("PRAGMA journal_mode"))).scalar_one()
            rows = (await connection.execute(text("SELECT count(*) FROM other_process"))).scalar()
    finally:
        finish.join()
        writer.close()
        await engine.dispose()
    assert (mode, rows) == ("wal", 1)
