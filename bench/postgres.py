"""A throw-away PostgreSQL database for benchmarks that measure the distributed stack too."""

from __future__ import annotations

import secrets
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432"


def reachable() -> bool:
    """Whether a PostgreSQL server listens on its usual local port."""
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


@asynccontextmanager
async def scratch_database() -> AsyncIterator[str]:
    """Create a fresh database, yield its SQLAlchemy URL, and drop it afterwards."""
    name = f"arena_bench_{secrets.token_hex(4)}"
    admin = create_async_engine(f"{SERVER}/postgres", isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield f"{SERVER}/{name}"
        finally:
            async with admin.connect() as connection:
                await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()
