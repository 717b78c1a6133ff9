"""Throw projections away and replay them from the start of the log (``arena rebuild``).

Each projection is emptied — its rows deleted and its offsets forgotten, in one transaction —
and then replayed up to the end of the log as it was when its replay began. Services may keep
running meanwhile: a live runner of the same projection loses the race on the stored offsets,
rolls its batch back and carries on from wherever the rebuild has got to, so nothing is applied
twice. Table definitions are left to the migrations, which run first.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from arena_runtime.config import Settings
from arena_runtime.eventlog.base import EventLog
from arena_runtime.sql.engine import engine_from_settings, session_factory
from arena_runtime.sql.migrate import upgrade_head
from arena_runtime.sql.projection import Projection, ProjectionError
from arena_runtime.sql.registry import ProjectionRegistry, registry
from arena_runtime.sql.runner import ProjectionRunner


@dataclass(frozen=True, slots=True)
class Rebuilt:
    projection: str
    records: int
    seconds: float


def runners(
    settings: Settings,
    log: EventLog,
    sessions: async_sessionmaker[AsyncSession],
    projections: Sequence[Projection],
) -> list[ProjectionRunner]:
    """A runner per projection, configured from the settings (what ``arena serve`` runs)."""
    return [
        ProjectionRunner(
            projection,
            log,
            sessions,
            batch_size=settings.projection_batch_size,
            idle_sleep=settings.projection_poll_ms / 1000,
        )
        for projection in projections
    ]


def select(projections: Sequence[Projection], names: Sequence[str] | None) -> list[Projection]:
    """The projections named (all when ``names`` is empty); ProjectionError for unknown names."""
    if not names:
        return list(projections)
    known = {p.name: p for p in projections}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ProjectionError(
            f"no projection named {', '.join(map(repr, unknown))}; "
            f"registered: {', '.join(sorted(known)) or 'none'}"
        )
    return [known[n] for n in dict.fromkeys(names)]


async def rebuild_all(
    settings: Settings,
    log: EventLog,
    engine: AsyncEngine,
    projections: Sequence[Projection],
) -> list[Rebuilt]:
    """Migrate, then empty and replay each projection in turn."""
    await upgrade_head(engine)
    done = []
    for runner in runners(settings, log, session_factory(engine), projections):
        started = time.perf_counter()
        records = await runner.rebuild()
        done.append(Rebuilt(runner.name, records, time.perf_counter() - started))
    return done


async def rebuild_from_settings(
    settings: Settings,
    names: Sequence[str] | None = None,
    source: ProjectionRegistry = registry,
) -> list[Rebuilt]:
    """``arena rebuild``: the configured log and database, the registered projections."""
    from arena_runtime.eventlog.factory import open_event_log

    chosen = select(source.projections(settings), names)
    engine = engine_from_settings(settings)
    try:
        async with open_event_log(settings) as log:
            return await rebuild_all(settings, log, engine, chosen)
    finally:
        await engine.dispose()
