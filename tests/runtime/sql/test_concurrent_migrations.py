"""Processes starting together (Kubernetes starts every Deployment at once) all migrate the same
database: every one must come up, and the schema must be the metadata's, exactly once."""

from __future__ import annotations

import asyncio
import secrets
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from arena_runtime.config import Settings
from arena_runtime.sql import create_engine
from arena_runtime.sql.metadata import metadata
from arena_runtime.sql.migrate import current_revisions, head_revisions
from arena_runtime.sql.registry import registry
from sqlalchemy.engine import Connection, make_url

PROCESSES = 6
ROOT = Path(__file__).resolve().parents[3]


async def start_child(db_url: str, data_dir: Path, go: Path) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.runtime.sql.migrate_child",
        "--db",
        db_url,
        "--data-dir",
        str(data_dir),
        "--go",
        str(go),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), 60)
    assert line == b"ready\n", (line, await process.stderr.read())  # type: ignore[union-attr]
    return process


async def admin(server_url: str, sql: str) -> None:
    import asyncpg

    url = make_url(server_url).set(drivername="postgresql", database="postgres")
    connection = await asyncpg.connect(url.render_as_string(hide_password=False))
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("read committed", marks=pytest.mark.postgres),
        # A server (or database) whose default isolation is stricter than PostgreSQL's own: a
        # transaction's snapshot is then taken by its first statement, before the lock is held.
        pytest.param("repeatable read", marks=pytest.mark.postgres),
    ]
)
async def fresh_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A database nobody has migrated yet: one SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'projections.sqlite3'}"
        return
    server: str = request.getfixturevalue("postgres_url")
    name = f"arena_migrate_{secrets.token_hex(6)}"
    await admin(server, f'CREATE DATABASE "{name}"')
    await admin(
        server, f"ALTER DATABASE \"{name}\" SET default_transaction_isolation = '{request.param}'"
    )
    try:
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        await admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def schema_diff(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, metadata))


async def test_processes_starting_together_all_migrate(fresh_db: str, tmp_path: Path) -> None:
    db_url = fresh_db
    go = tmp_path / "go"
    children = await asyncio.gather(
        *(start_child(db_url, tmp_path / f"var{n}", go) for n in range(PROCESSES))
    )
    go.touch()  # every child is past its imports: release them at once
    outcomes = [await asyncio.wait_for(child.communicate(), 120) for child in children]
    failures = [
        (child.returncode, err.decode()[-2000:])
        for child, (_, err) in zip(children, outcomes, strict=True)
        if child.returncode != 0
    ]
    assert failures == []
    assert all(out == b"migrated\n" for out, _ in outcomes)

    registry.projections(Settings())  # puts the services' tables (entry points) on the metadata
    engine = create_engine(db_url)
    try:
        assert await current_revisions(engine) == head_revisions()
        async with engine.connect() as connection:
            assert await connection.run_sync(schema_diff) == []
    finally:
        await engine.dispose()
