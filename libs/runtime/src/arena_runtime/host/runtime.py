"""What the host opens once and hands to every service it runs: the event log, the projection
database and the cache. In `arena serve` the services share one of each.

Anything that cannot be opened is reported as a ConfigError naming the variable that points at it,
so a wrong address fails start-up with that name instead of a stack trace.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from arena_runtime.cache import Cache
from arena_runtime.cache.factory import open_cache
from arena_runtime.config import ConfigError, Settings
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.sql.migrate import open_database


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    #: Applies ARENA_TOPIC_PREFIX itself: services name topics without it.
    log: EventLog
    #: The projection database, migrated to the newest schema.
    db: AsyncEngine
    #: Rate limits, presence, fan-out: Redis or in-process.
    cache: Cache


def _unmarked(phase: str) -> None:
    pass


@asynccontextmanager
async def open_runtime(
    settings: Settings, mark: Callable[[str], None] = _unmarked
) -> AsyncIterator[Runtime]:
    """The log, the database and the cache are opened together (each waits on its own server);
    ``mark`` is told the name of each as it is open (the host's start clock). If one fails, the
    others are closed again and the first failure, in that order, is raised."""
    async with AsyncExitStack() as stack:
        if settings.embedded or settings.database_url is None:
            _make_data_dir(settings)
        event_log = open_event_log(settings)
        cache = open_cache(settings)

        async def start_log() -> None:
            try:
                await event_log.start()
            except ConfigError:
                raise
            except Exception as exc:
                variable = "ARENA_DATA_DIR" if settings.embedded else "ARENA_KAFKA_BOOTSTRAP"
                raise ConfigError(variable, f"cannot open the event log: {exc}") from exc
            mark("log opened")

        async def start_database() -> AsyncEngine:
            try:
                db = await open_database(settings)
            except Exception as exc:
                variable = (
                    "ARENA_DATA_DIR" if settings.database_url is None else "ARENA_DATABASE_URL"
                )
                raise ConfigError(variable, f"cannot open the database: {exc}") from exc
            mark("database migrated")
            return db

        async def start_cache() -> None:
            try:
                await cache.start()
            except Exception as exc:
                raise ConfigError("ARENA_REDIS_URL", f"cannot open the cache: {exc}") from exc
            mark("cache opened")

        opened_log, db, opened_cache = await asyncio.gather(
            start_log(), start_database(), start_cache(), return_exceptions=True
        )
        if not isinstance(opened_log, BaseException):
            stack.push_async_callback(event_log.close)
        if not isinstance(db, BaseException):
            stack.push_async_callback(db.dispose)
        if not isinstance(opened_cache, BaseException):
            stack.push_async_callback(cache.close)
        for result in (opened_log, db, opened_cache):
            if isinstance(result, BaseException):
                raise result
        assert isinstance(db, AsyncEngine)
        yield Runtime(settings=settings, log=event_log, db=db, cache=cache)


def _make_data_dir(settings: Settings) -> None:
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError("ARENA_DATA_DIR", f"cannot create {settings.data_dir}: {exc}") from exc
