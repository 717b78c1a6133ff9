from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from arena_runtime.sql import create_engine, upgrade_head
from arena_runtime.sql.metadata import metadata
from arena_runtime.sql.migrate import current_revisions, declared_heads, head_revisions
from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncEngine


async def table_names(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as connection:
        return set(await connection.run_sync(lambda c: inspect(c).get_table_names()))


async def test_upgrade_creates_runtime_tables_and_is_idempotent(db_url: str) -> None:
    engine = create_engine(db_url)
    try:
        assert await current_revisions(engine) == set()
        await upgrade_head(engine)
        await upgrade_head(engine)  # every process does this at start-up
        assert await current_revisions(engine) == head_revisions()
        assert {"projection_offsets", "stream_activity", "alembic_version"} <= await table_names(
            engine
        )
    finally:
        await engine.dispose()


async def test_migrated_schema_matches_the_metadata(engine: AsyncEngine) -> None:
    import arena_runtime.sql.stream_activity  # noqa: F401
    from alembic.autogenerate import compare_metadata
    from arena_runtime.config import Settings
    from arena_runtime.sql.registry import registry

    registry.projections(Settings())  # puts the services' tables (entry points) on the metadata
    from alembic.runtime.migration import MigrationContext

    def diff(connection: object) -> list[object]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})  # type: ignore[arg-type]
        return list(compare_metadata(context, metadata))

    async with engine.connect() as connection:
        assert await connection.run_sync(diff) == []


async def test_services_starting_together_migrate_once(db_url: str) -> None:
    # Eight first connections race to switch a new SQLite file to WAL mode, as processes
    # starting together do; a task group stops the others if one fails, so no migration is left
    # running inside Alembic's process-global environment into the next test.
    engines = [create_engine(db_url) for _ in range(8)]
    try:
        async with asyncio.TaskGroup() as group:
            for engine in engines:
                group.create_task(upgrade_head(engine))
        assert await current_revisions(engines[0]) == head_revisions()
    finally:
        for engine in engines:
            await engine.dispose()


def _arena_migrate(db_url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_DATABASE_URL"] = db_url
    return subprocess.run(
        [sys.executable, "-m", "arena_cli.main", "migrate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_arena_migrate_applies_every_branch(db_url: str) -> None:
    done = await asyncio.to_thread(_arena_migrate, db_url)
    assert done.returncode == 0, done.stderr
    heads = head_revisions()
    assert len(heads) > 1  # the runtime's branch and the services' (entry points)
    assert all(head in done.stdout for head in heads)
    engine = create_engine(db_url)
    try:
        assert await current_revisions(engine) == heads
        # A service branch's table, not only the runtime's.
        assert {"rating_ladders", "projection_offsets"} <= await table_names(engine)
    finally:
        await engine.dispose()


async def test_arena_migrate_refuses_a_bad_database_url() -> None:
    done = await asyncio.to_thread(_arena_migrate, "mysql://nowhere/arena")
    assert done.returncode == 2
    assert done.stderr.startswith("arena migrate:")


def test_the_revision_files_declare_alembics_heads() -> None:
    """What lets a start skip Alembic: the heads read from the files are Alembic's."""
    assert declared_heads() == head_revisions()


_OPEN_DATABASE = """
import asyncio, sys
from pathlib import Path
from arena_runtime.config import Settings
from arena_runtime.sql import open_database

async def main() -> None:
    engine = await open_database(Settings(database_url=sys.argv[1], data_dir=Path(sys.argv[2])))
    await engine.dispose()

asyncio.run(main())
print("alembic" in sys.modules)
"""


async def test_a_database_at_its_heads_is_opened_without_alembic(
    db_url: str, tmp_path: Path
) -> None:
    """A process's start opens the database: a new one is migrated by Alembic; one already at
    every head (every later start) is left alone, Alembic not even imported (its import and its
    scan of the revisions were about half a second of each start)."""

    def open_in_a_process() -> str:
        done = subprocess.run(
            [sys.executable, "-c", _OPEN_DATABASE, db_url, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    assert await asyncio.to_thread(open_in_a_process) == "True"
    engine = create_engine(db_url)
    try:
        assert await current_revisions(engine) == head_revisions()
    finally:
        await engine.dispose()
    assert await asyncio.to_thread(open_in_a_process) == "False"
