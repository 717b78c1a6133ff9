"""The projections as a service: one worker per registered projection keeps its tables current.

A projection runner stores its offsets in SQL beside its rows, not in a consumer group, so its
readiness is read from there: ready once the stored offsets reach the log's end as it was when
the worker started.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from arena_runtime import telemetry, topics
from arena_runtime.eventlog import TopicPartition
from arena_runtime.host.runtime import Runtime
from arena_runtime.host.service import Service
from arena_runtime.sql.engine import session_factory
from arena_runtime.sql.rebuild import runners
from arena_runtime.sql.registry import registry
from arena_runtime.sql.runner import ProjectionRunner

NAME = "projections"
#: How often a projection tries the database again while it cannot be reached.
DATABASE_RETRY_SECONDS = 1.0

log = telemetry.get_logger(__name__)


class ProjectionWorker:
    def __init__(self, runner: ProjectionRunner, idle_sleep: float, linger: float = 0.0) -> None:
        self.name = f"projection:{runner.name}"
        self._runner = runner
        self._idle_sleep = idle_sleep
        self._linger = min(linger, idle_sleep)
        self._targets: dict[TopicPartition, int] = {}
        self._ready = False
        self._stopping = asyncio.Event()
        #: Monotonic time the database was found unreachable, until a step works again.
        self._down_since: float | None = None

    async def start(self) -> None:
        self._targets = await self._runner.end_offsets()

    async def run(self) -> None:
        # Each batch commits its rows and offsets in one transaction: stopping between batches
        # leaves nothing half-applied.
        while not self._stopping.is_set():
            try:
                consumed = await self._runner.step()
                if not self._ready:
                    stored = await self._runner.stored_offsets()
                    self._ready = all(stored.get(tp, 0) >= end for tp, end in self._targets.items())
            except (DBAPIError, OSError) as exc:
                if not _lost_database(exc):
                    raise  # a failing projection, not a lost database: the process stops
                # The database is gone (or restarting): the batch rolled back with it, and the
                # stored offsets say where to resume. Wait for it rather than exit.
                await self._database_down(exc)
                continue
            self._down_since = None
            # Idle: wait for more. Busy but keeping up (no partition filled a batch): linger, so
            # that the next transaction carries many records rather than one move's few; a
            # transaction and its offsets cost about as much as the rows in it. Behind: go on.
            if consumed == 0:
                pause = self._idle_sleep
            elif not self._runner.filled_a_batch:
                pause = self._linger
            else:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), pause)

    async def _database_down(self, exc: BaseException) -> None:
        self._runner.forget_offsets()
        if self._down_since is None:
            self._down_since = time.monotonic()
            log.warning(
                "the database cannot be reached: this projection waits and retries every "
                f"{DATABASE_RETRY_SECONDS:g} s; read models lag meanwhile. Check PostgreSQL "
                "(ARENA_DATABASE_URL; docs/operations.md#postgresql-is-down)",
                projection=self.name,
                error=f"{type(exc).__name__}: {exc}"[:300],
            )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), DATABASE_RETRY_SECONDS)

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return self._ready


def _lost_database(exc: BaseException) -> bool:
    """A connection that could not be made or was lost, not an error in what was sent: an
    OSError, SQLAlchemy's disconnect or connection errors, or PostgreSQL's own "connection
    exception" (SQLSTATE class 08) and "operator intervention" (57: shutting down, starting up)
    anywhere in the exception's chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError | OperationalError | InterfaceError):
            return True
        if getattr(current, "connection_invalidated", False):
            return True
        if str(getattr(current, "sqlstate", "") or "")[:2] in ("08", "57"):
            return True
        orig = getattr(current, "orig", None)
        current = (
            orig if isinstance(orig, BaseException) else (current.__cause__ or current.__context__)
        )
    return False


async def build_service(runtime: Runtime) -> Service:
    settings = runtime.settings
    await topics.ensure_topics(runtime.log, settings.partitions)
    workers = [
        ProjectionWorker(
            runner, settings.projection_poll_ms / 1000, settings.projection_linger_ms / 1000
        )
        for runner in runners(
            settings, runtime.log, session_factory(runtime.db), registry.projections(settings)
        )
    ]
    return Service(NAME, workers)
