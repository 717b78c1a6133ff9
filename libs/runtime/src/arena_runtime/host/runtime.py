"""What the host opens once and hands to every service it runs: the event log, the projection
database and the cache. In `arena serve` the services share one of each.

Anything that cannot be opened is reported as a ConfigError naming the variable that points at it,
so a wrong address fails start-up with that name instead of a stack trace.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
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


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    async with AsyncExitStack() as stack:
        if settings.embedded or settings.database_url is None:
            _make_data_dir(settings)
        event_log = open_event_log(settings)
        try:
            await event_log.start()
        except Exception as exc:
            variable = "ARENA_DATA_DIR" if settings.embedded else "ARENA_KAFKA_BOOTSTRAP"
            raise ConfigError(variable, f"cannot open the event log: {exc}") from exc
        stack.push_async_callback(event_log.close)

        try:
            db = await open_database(settings)
        except Exception as exc:
            variable = "ARENA_DATA_DIR" if settings.database_url is None else "ARENA_DATABASE_URL"
            raise ConfigError(variable, f"cannot open the database: {exc}") from exc
        stack.push_async_callback(db.dispose)

        cache = open_cache(settings)
        try:
            await cache.start()
        except Exception as exc:
            raise ConfigError("ARENA_REDIS_URL", f"cannot open the cache: {exc}") from exc
        stack.push_async_callback(cache.close)

        yield Runtime(settings=settings, log=event_log, db=db, cache=cache)


def _make_data_dir(settings: Settings) -> None:
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError("ARENA_DATA_DIR", f"cannot create {settings.data_dir}: {exc}") from exc
