"""Alembic environment: runs on the connection arena_runtime.sql.migrate hands over, or on its
own engine (ARENA_DATABASE_URL / the embedded SQLite file) when run from the alembic command."""

from __future__ import annotations

import asyncio

import arena_runtime.sql.stream_activity  # noqa: F401  (puts its table on the metadata)
from alembic import context
from arena_runtime.config import load_settings
from arena_runtime.sql.engine import create_engine, database_url
from arena_runtime.sql.metadata import metadata
from arena_runtime.sql.migrate import for_migrations, wait_for_turn
from sqlalchemy.engine import Connection

config = context.config


def run_on(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        compare_type=True,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_own_engine() -> None:
    engine = create_engine(database_url(load_settings()))
    try:
        async with for_migrations(engine).begin() as connection:
            # `alembic upgrade` by hand takes its turn like the processes starting up.
            await connection.run_sync(wait_for_turn)
            await connection.run_sync(run_on)
    finally:
        await engine.dispose()


if context.is_offline_mode():
    context.configure(
        url=database_url(load_settings()), target_metadata=metadata, literal_binds=True
    )
    with context.begin_transaction():
        context.run_migrations()
elif (shared := config.attributes.get("connection")) is not None:
    run_on(shared)
else:
    asyncio.run(run_own_engine())
