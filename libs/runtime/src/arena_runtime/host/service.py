"""The common shape of a service process: a named set of background workers.

A service is ready when every one of its workers is: for a consume loop that means it has caught
up with the log as it stood when the service started, so a replica behind a load balancer only
takes traffic once its view of the world is current.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

from arena_runtime import telemetry
from arena_runtime.host.http import ASGIApp

log = telemetry.get_logger(__name__)

#: How long stop() waits for a worker to finish its batch and commit before cancelling it.
STOP_GRACE_SECONDS = 10.0


@runtime_checkable
class Worker(Protocol):
    """A background task of a service: a consume loop, a timer wheel, a fan-out pump."""

    name: str

    async def start(self) -> None:
        """Prepare (join the consumer group, note the end offsets); called before run()."""

    async def run(self) -> None:
        """Work until request_stop(); commit what was processed before returning."""

    def request_stop(self) -> None:
        """Ask run() to return after the record or batch in hand."""

    def ready(self) -> bool:
        """Whether the worker has caught up with the log as it stood at start()."""


class ServiceError(Exception):
    """A service failed to start or one of its workers died."""


async def start_together(starts: Iterable[Awaitable[None]]) -> None:
    """Await every start concurrently; once all have ended, raise the first failure if any (so
    none is left running on its own behind the error)."""
    results = await asyncio.gather(*starts, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result


class Service:
    """A name, an optional HTTP app, and the workers that make up one Arena service."""

    def __init__(
        self,
        name: str,
        workers: Sequence[Worker] = (),
        http_app: ASGIApp | None = None,
        *,
        background: Sequence[Worker] = (),
    ) -> None:
        self.name = name
        self.workers = [*workers, *background]
        #: The workers whose readiness is the service's: not the ``background`` ones, which run
        #: beside what the service serves (the gateway's share of the accounts group: commands
        #: sent before its join are answered once the group has formed).
        self._gating = list(workers)
        #: The ASGI app this service contributes to the host's HTTP server (the gateway's).
        self.http_app = http_app
        #: Awaited first on stop, while every worker still runs: the gateway tells its sockets
        #: and lets the commands in flight be answered before the fan-out stops.
        self.drain: Callable[[], Awaitable[None]] | None = None
        #: What this service cannot do now that does not make it unready (a dependency every
        #: replica shares is down): problem -> description, shown by /readyz.
        self.degraded: Callable[[], dict[str, str]] = dict
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False

    async def start(self) -> None:
        """Start every worker at once: each joins its consumer group and notes its end offsets
        over the network, and one after another they added up (a member's start is a
        bootstrap, metadata and ListOffsets round trips, the group join then runs behind it)."""
        await start_together(worker.start() for worker in self.workers)
        self._tasks = [
            asyncio.create_task(worker.run(), name=f"{self.name}/{worker.name}")
            for worker in self.workers
        ]
        self._started = True
        log.info("service started", service=self.name, workers=[w.name for w in self.workers])

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Let every worker finish its batch and commit; cancel those that overstay the grace."""
        self._started = False  # not ready from the first moment of shutdown
        if self.drain is not None and self._tasks:
            try:
                await self.drain()
            except Exception:
                log.exception("draining failed: stopping anyway", service=self.name)
        for worker in self.workers:
            worker.request_stop()
        if self._tasks:
            done, pending = await asyncio.wait(self._tasks, timeout=grace)
            for task in pending:
                log.warning(
                    "worker did not stop in time: cancelled", worker=task.get_name(), grace=grace
                )
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.error(
                        "worker had failed", worker=task.get_name(), exc_info=task.exception()
                    )
        log.info("service stopped", service=self.name)

    def ready(self) -> bool:
        return self._started and all(worker.ready() for worker in self._gating)

    async def wait_failed(self) -> BaseException:
        """Return the error of the first worker to die; waits forever while all run."""
        if not self._tasks:
            await asyncio.Event().wait()
        done, _ = await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
        task = next(iter(done))
        if task.cancelled():
            return ServiceError(f"worker {task.get_name()} was cancelled")
        # A worker returning before it was asked to stop is as fatal as one raising.
        return task.exception() or ServiceError(f"worker {task.get_name()} ended on its own")
