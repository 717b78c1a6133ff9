"""What the three server fixtures share: finding a server, saying clearly when there is none, and
running async set-up and clean-up from their synchronous session fixtures (on a private loop in a
thread, apart from pytest's)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import threading
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn, TypeVar

import pytest

T = TypeVar("T")

#: Set to 1 to let tests that need a missing server skip instead of fail (never under CI).
ALLOW_SKIP = "ARENA_TEST_ALLOW_SKIP"


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def docker_reachable() -> bool:
    """Testcontainers is installed and its Docker engine answers."""
    if importlib.util.find_spec("testcontainers") is None:
        return False
    try:
        import docker

        docker.from_env().ping()
        return True
    except Exception:
        return False


def require_listening(what: str, variable: str, host: str, port: int) -> None:
    """The server a test variable names must answer there: the harness never swaps in another."""
    if not listening(host, port):
        unavailable(
            f"{what}: nothing answers at {host}:{port}, the server {variable} names; "
            f"start it there, or unset {variable} to let the harness find or start one"
        )


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skipping_allowed() -> bool:
    """A developer asked to skip tests whose server is missing; CI never may."""
    return os.environ.get(ALLOW_SKIP) == "1" and not under_ci()


def unavailable(message: str) -> NoReturn:
    """No server for the tests that need one: they fail, saying what to start, unless a developer
    set ARENA_TEST_ALLOW_SKIP=1 (outside CI), and then they skip. A suite must not pass by
    skipping what it could not reach."""
    if skipping_allowed():
        pytest.skip(message)
    hint = "" if under_ci() else f" (or set {ALLOW_SKIP}=1 to skip the tests that need it)"
    pytest.fail(f"{message}{hint}", pytrace=False)
