from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from arena_runtime.sql import create_engine, upgrade_head
from arena_runtime.sql.metadata import metadata
from arena_runtime.sql.migrate import current_revisions, head_revisions
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
