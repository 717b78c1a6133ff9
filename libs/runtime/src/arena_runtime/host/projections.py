"""The projections as a service: one worker per registered projection keeps its tables current.

A projection runner stores its offsets in SQL beside its rows, not in a consumer group, so its
readiness is read from there: ready once the stored offsets reach the log's end as it was when
the worker started.
"""

from __future__ import annotations

import asyncio
import contextlib

from arena_runtime import topics
from arena_runtime.eventlog import TopicPartition
from arena_runtime.host.runtime import Runtime
from arena_runtime.host.service import Service
from arena_runtime.sql.engine import session_factory
from arena_runtime.sql.rebuild import runners
from arena_runtime.sql.registry import registry
from arena_runtime.sql.runner import ProjectionRunner

NAME = "projections"


class ProjectionWorker:
    def __init__(self, runner: ProjectionRunner, idle_sleep: float, linger: float = 0.0) -> None:
        self.name = f"projection:{runner.name}"
        self._runner = runner
        self._idle_sleep = idle_sleep
        self._linger = min(linger, idle_sleep)
        self._targets: dict[TopicPartition, int] = {}
        self._ready = False
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        self._targets = await self._runner.end_offsets()

    async def run(self) -> None:
        # Each batch commits its rows and offsets in one transaction: stopping between batches
        # leaves nothing half-applied.
        while not self._stopping.is_set():
            consumed = await self._runner.step()
            if not self._ready:
                stored = await self._runner.stored_offsets()
                self._ready = all(stored.get(tp, 0) >= end for tp, end in self._targets.items())
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

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return self._ready


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
