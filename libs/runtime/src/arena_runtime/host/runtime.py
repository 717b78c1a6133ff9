"""What the host opens once and hands to every service it runs: the event log and, as they are
wired in, the database and the cache. In `arena serve` the four services share one of each."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from arena_runtime.config import ConfigError, Settings
from arena_runtime.eventlog import EventLog

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    #: Applies ARENA_TOPIC_PREFIX itself: services name topics without it.
    log: EventLog


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    from arena_runtime.eventlog.factory import open_event_log

    if settings.embedded:
        try:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                "ARENA_DATA_DIR", f"cannot create {settings.data_dir}: {exc}"
            ) from exc
    try:
        event_log = await open_event_log(settings)
    except ConfigError:
        raise
    except Exception as exc:
        variable = "ARENA_DATA_DIR" if settings.embedded else "ARENA_KAFKA_BOOTSTRAP"
        raise ConfigError(variable, f"cannot open the event log: {exc}") from exc
    try:
        yield Runtime(settings=settings, log=event_log)
    finally:
        await event_log.close()
