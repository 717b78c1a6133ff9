"""``snapshot``: the rows of projections' tables, to compare two builds of the same read models."""

from __future__ import annotations

from typing import Any

from arena_runtime.sql import Projection
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


async def snapshot(
    sessions: async_sessionmaker[AsyncSession], projections: list[Projection]
) -> dict[str, list[Any]]:
    """Every table of ``projections``, by name: its rows, sorted."""
    tables: dict[str, list[Any]] = {}
    async with sessions() as session:
        for projection in projections:
            for table in projection.tables:
                tables[table.name] = sorted((await session.execute(select(table))).all())
    return tables
