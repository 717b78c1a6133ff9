"""``redis_url`` and ``redis_prefix``: a Redis server and a key prefix of this test session.

The server is, in order: ``ARENA_TEST_REDIS`` (a redis:// URL; an address given there that does
not answer fails the tests that need it, and ``start`` skips the search and starts a private
server); a server on 127.0.0.1:6379; Testcontainers when a Docker engine is reachable;
``redis-server`` from PATH started on a free port (and stopped at the end). With none of these,
the tests that need Redis fail saying what to start (they skip only if a developer sets
``ARENA_TEST_ALLOW_SKIP=1``, outside CI). Every key and channel a test uses goes under
``redis_prefix``, so sessions running side by side on one server never meet; its keys are
deleted at the end.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import redis

from tests.harness.support import (
    docker_reachable,
    free_port,
    listening,
    require_listening,
    unavailable,
)

VARIABLE = "ARENA_TEST_REDIS"
LOCAL_SERVER = "redis://127.0.0.1:6379/0"


def _wait_ready(url: str, process: subprocess.Popen[bytes], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}")
        try:
            if redis.Redis.from_url(url, socket_timeout=1).ping():
                return
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError(f"redis-server did not answer on {url} within {seconds} s")


@contextlib.contextmanager
def _redis_from_path(binary: str) -> Iterator[str]:
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="arena-redis-")
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    args += ["--appendonly", "no", "--dir", workdir]
    process = subprocess.Popen(
        [binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        url = f"redis://127.0.0.1:{port}/0"
        _wait_ready(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """The URL of a Redis server, found or started (see the module)."""
    given = os.environ.get(VARIABLE, "")
    if given and given != "start":
        address = urlsplit(given)
        require_listening("Redis", VARIABLE, address.hostname or "127.0.0.1", address.port or 6379)
        yield given
        return
    if not given and listening("127.0.0.1", 6379):
        yield LOCAL_SERVER
        return
    if docker_reachable():
        from testcontainers.community.redis import RedisContainer

        with RedisContainer("redis:7-alpine") as container:
            host = container.get_container_host_ip()
            yield f"redis://{host}:{container.get_exposed_port(6379)}/0"
        return
    binary = shutil.which("redis-server")
    if binary is None:
        unavailable(
            "Redis: no server found or startable here; start Redis on 127.0.0.1:6379, set "
            f"{VARIABLE} to a redis:// URL, put redis-server on PATH or make a Docker engine "
            "reachable for Testcontainers"
        )
    with _redis_from_path(binary) as url:
        yield url


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(scope="session")
def redis_prefix(redis_url: str) -> Iterator[str]:
    prefix = f"arena_test_{secrets.token_hex(6)}:"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        batch = list(client.scan_iter(match=f"{prefix}*", count=500))
        for start in range(0, len(batch), 500):
            client.delete(*batch[start : start + 500])
    finally:
        client.close()
