"""Async engines and sessions for the projection database: PostgreSQL (asyncpg) or SQLite.

SQLite runs in WAL mode with SQLAlchemy emitting ``BEGIN IMMEDIATE`` itself: the sqlite3
driver's legacy transaction handling would otherwise let a projection read outside its
transaction, and a deferred transaction that later writes can fail with "database is locked"
without waiting, where an immediate one waits its turn behind ``busy_timeout``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.ext.asyncio import create_async_engine as _create_async_engine

from arena_runtime.config import Settings
from arena_runtime.sqlite_files import BUSY_TIMEOUT_MS, switch_to_wal

SQLITE_FILE = "projections.sqlite3"
SUPPORTED_DRIVERS = ("postgresql+asyncpg", "sqlite+aiosqlite")


class DatabaseUrlError(ValueError):
    """ARENA_DATABASE_URL is not an async PostgreSQL or SQLite URL."""


def database_url(settings: Settings) -> URL:
    """The configured database, or the SQLite file under ``data_dir`` when none is given."""
    if settings.database_url is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        path = settings.sqlite_path(SQLITE_FILE).resolve()
        return URL.create("sqlite+aiosqlite", database=str(path))
    return parse_url(settings.database_url.get_secret_value())


def parse_url(raw: str) -> URL:
    """Parse and check a database URL; plain ``postgresql://`` gets the asyncpg driver."""
    try:
        url = make_url(raw)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        # Not the value itself: a URL that does not parse may still hold a password.
        raise DatabaseUrlError("ARENA_DATABASE_URL: not a database URL") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+asyncpg")
    elif url.drivername == "sqlite":
        url = url.set(drivername="sqlite+aiosqlite")
    if url.drivername not in SUPPORTED_DRIVERS:
        raise DatabaseUrlError(
            f"ARENA_DATABASE_URL: driver {url.drivername!r} is not supported; "
            f"use one of {', '.join(SUPPORTED_DRIVERS)}"
        )
    return url


def create_engine(url: URL | str, **kwargs: Any) -> AsyncEngine:
    """An async engine for a PostgreSQL or SQLite URL, set up for projections."""
    url = parse_url(url) if isinstance(url, str) else url
    if url.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        return _create_async_engine(url, **kwargs)
    engine = _create_async_engine(url, **kwargs)
    _configure_sqlite(engine, in_memory=url.database in (None, "", ":memory:"))
    return engine


def _configure_sqlite(engine: AsyncEngine, *, in_memory: bool) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Hand transaction control to SQLAlchemy (see the module docstring).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # Before anything that may wait for another connection (see sqlite_files).
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if not in_memory:
            switch_to_wal(cursor)
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep loaded objects usable after commit (no implicit refresh I/O)."""
    return async_sessionmaker(engine, expire_on_commit=False)


def engine_from_settings(settings: Settings, **kwargs: Any) -> AsyncEngine:
    return create_engine(database_url(settings), **kwargs)
