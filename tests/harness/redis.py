"""``redis_url`` and ``redis_prefix``: a Redis server and a key prefix of this test session.

The server is, in order: ``ARENA_TEST_REDIS`` (a redis:// URL); a server on 127.0.0.1:6379;
Testcontainers when a Docker engine is reachable; ``redis-server`` from PATH started on a free
port (and stopped at the end). Every key and channel a test uses goes under ``redis_prefix``, so
sessions running side by side on one server never meet; its keys are deleted at the end.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.harness.support import docker_reachable, listening

LOCAL_SERVER = "redis://127.0.0.1:6379/0"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    container: Any = None
    process: subprocess.Popen[bytes] | None = None
    workdir: str | None = None
    if url := os.environ.get("ARENA_TEST_REDIS"):
        pass
    elif listening("127.0.0.1", 6379):
        url = LOCAL_SERVER
    elif docker_reachable():
        from testcontainers.redis import RedisContainer  # type: ignore[import-not-found]

        container = RedisContainer("redis:7-alpine").start()
        host = container.get_container_host_ip()
        url = f"redis://{host}:{container.get_exposed_port(6379)}/0"
    elif binary := shutil.which("redis-server"):
        port = free_port()
        workdir = tempfile.mkdtemp(prefix="arena-redis-")
        args = ["--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "no", "--dir", workdir]
        process = subprocess.Popen(
            [binary, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        _wait_ready(url, process)
    else:
        pytest.skip(
            "Redis: set ARENA_TEST_REDIS, run a server on 127.0.0.1:6379, make a Docker engine "
            "reachable for Testcontainers or put redis-server on PATH"
        )
    try:
        yield url
    finally:
        if container is not None:
            container.stop()
        if process is not None:
            process.terminate()
            process.wait(timeout=10)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


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
