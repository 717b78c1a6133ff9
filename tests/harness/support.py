"""What the three server fixtures share: finding a server, and running async set-up and clean-up
from their synchronous session fixtures (on a private loop in a thread, apart from pytest's)."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion on a private loop in a thread, away from pytest's loop."""
    result: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(make()))
        except BaseException as exc:
            error.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


def listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def docker_reachable() -> bool:
    """Testcontainers is installed and its Docker engine answers."""
    if importlib.util.find_spec("testcontainers") is None:
        return False
    try:
        import docker  # type: ignore[import-not-found]  # comes with testcontainers

        docker.from_env().ping()
        return True
    except Exception:
        return False
