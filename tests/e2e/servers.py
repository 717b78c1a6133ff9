"""Arena in this test process, on a real port: the host's own serve loop with every service,
embedded or over the broker, PostgreSQL and Redis the settings name."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from arena_cli.commands.serve import SERVICES
from arena_runtime.config import Settings

START_TIMEOUT = 60.0
# The module, not the function arena_runtime.host re-exports under the same name.
host_run = importlib.import_module("arena_runtime.host.run")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def settings_for(data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "http_host": "127.0.0.1",
        "http_port": free_port(),
        "log_format": "console",
        "log_level": "WARNING",
        "partitions": 4,
    }
    values.update(overrides)
    return Settings.model_validate(values)


@contextlib.asynccontextmanager
async def arena(
    settings: Settings, services: tuple[str, ...] = ("gateway", "match", "matchmaking")
) -> AsyncIterator[str]:
    """Serve the named services until the block ends; yields the base URL once /readyz is 200."""
    stop = asyncio.Event()
    builders = [SERVICES[name] for name in services]
    task = asyncio.create_task(host_run._serve(settings, builders, "test", stop))
    url = f"http://127.0.0.1:{settings.http_port}"
    try:
        await _ready(url, task)
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
