"""``postgres_url``: a fresh PostgreSQL database for this test session, dropped at the end.

The server is, in order: ``ARENA_TEST_POSTGRES`` (any PostgreSQL URL whose user may create
databases); a server on 127.0.0.1:5432 (user postgres, trust auth, as on our machines and CI);
Testcontainers when a Docker engine is reachable; otherwise the tests that need it are skipped,
saying so. The URL handed out is in SQLAlchemy's async form,
``postgresql+asyncpg://postgres@127.0.0.1:5432/arena_test_<random>``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL, make_url

from tests.harness.support import docker_reachable, listening, run_sync

LOCAL_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"


def _asyncpg_dsn(url: URL) -> str:
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


async def _admin(server: URL, sql: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(_asyncpg_dsn(server))
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    container: Any = None
    if raw := os.environ.get("ARENA_TEST_POSTGRES"):
        server = make_url(raw)
    elif listening("127.0.0.1", 5432):
        server = make_url(LOCAL_SERVER)
    elif docker_reachable():
        from testcontainers.postgres import PostgresContainer  # type: ignore[import-not-found]

        container = PostgresContainer("postgres:16-alpine", driver=None).start()
        server = make_url(container.get_connection_url())
    else:
        pytest.skip(
            "PostgreSQL: set ARENA_TEST_POSTGRES, run a server on 127.0.0.1:5432 "
            "(user postgres, trust auth) or make a Docker engine reachable for Testcontainers"
        )
    name = f"arena_test_{secrets.token_hex(6)}"
    run_sync(lambda: _admin(server, f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(drivername="postgresql+asyncpg", database=name).render_as_string(
            hide_password=False
        )
    finally:
        run_sync(lambda: _admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        if container is not None:
            container.stop()


async def empty_postgres(url: str) -> None:
    """Drop everything earlier tests left in the session's database."""
    # Imported here: this plugin loads in every test session, most of which never touch SQL.
    from arena_runtime.sql import create_engine

    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("DROP SCHEMA public CASCADE"))
            await connection.execute(text("CREATE SCHEMA public"))
    finally:
        await engine.dispose()
