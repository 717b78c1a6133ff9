"""Arena in this test process, on a real port: the host's own serve loop with every service,
embedded or over the broker, PostgreSQL and Redis the settings name; embedded, its cache may run
on a clock the test holds (:class:`CacheClock`)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
from arena_cli.commands.serve import builder
from arena_runtime.config import Settings

from tests.harness.support import free_port

START_TIMEOUT = 60.0
# The module, not the function arena_runtime.host re-exports under the same name.
host_run = importlib.import_module("arena_runtime.host.run")


def settings_for(data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "http_host": "127.0.0.1",
        "http_port": free_port(),
        "log_format": "console",
        "log_level": "WARNING",
        "partitions": 4,
        # Every test client speaks from 127.0.0.1: the per-address caps are raised out of the
        # way here, and the tests of the caps set their own.
        "guest_rate": 1_000_000,
        "guest_burst": 1_000_000,
        "ws_max_sockets_per_address": 1_000_000,
    }
    values.update(overrides)
    return Settings.model_validate(values)


class CacheClock:
    """The embedded cache's clock (monotonic seconds): real time, until a test stops it and moves
    it on by hand, so that what the cache measures in time (a rate limit's bucket) is exact."""

    def __init__(self) -> None:
        self._offset = 0.0
        self._stopped_at: float | None = None

    def __call__(self) -> float:
        if self._stopped_at is not None:
            return self._stopped_at
        return time.monotonic() + self._offset

    def advance(self, seconds: float) -> None:
        if self._stopped_at is not None:
            self._stopped_at += seconds
        else:
            self._offset += seconds

    @contextlib.contextmanager
    def stopped(self) -> Iterator[None]:
        """Time stands still in the block (but for ``advance``), then goes on from there."""
        self._stopped_at = self()
        try:
            yield
        finally:
            self._offset = self._stopped_at - time.monotonic()
            self._stopped_at = None


@contextlib.asynccontextmanager
async def arena(
    settings: Settings,
    services: tuple[str, ...] = ("gateway", "match", "matchmaking"),
    cache_clock: CacheClock | None = None,
) -> AsyncIterator[str]:
    """Serve the named services until the block ends; yields the base URL once /readyz is 200.

    With ``cache_clock`` (embedded only), the in-process cache the services open reads it."""
    stop = asyncio.Event()
    builders = [builder(name) for name in services]
    memory = importlib.import_module("arena_runtime.cache.memory")
    original = memory.MemoryCache
    if cache_clock is not None:
        # The cache factory looks the class up when it opens the cache, at start-up.
        memory.MemoryCache = functools.partial(original, clock=cache_clock)
    task = asyncio.create_task(host_run._serve(settings, builders, "test", stop))
    url = f"http://127.0.0.1:{settings.http_port}"
    try:
        try:
            await _ready(url, task)
        finally:
            memory.MemoryCache = original
        yield url
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def _ready(url: str, task: asyncio.Task[int]) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=2) as http:
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT
        while asyncio.get_running_loop().time() < deadline:
            if task.done():
                raise AssertionError(f"arena stopped with {task.result()}")
            with contextlib.suppress(httpx.TransportError):
                if (await http.get("/readyz")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise AssertionError(f"{url}/readyz never answered 200")
