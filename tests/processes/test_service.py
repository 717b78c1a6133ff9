"""The Service shape in-process, over the embedded log: readiness is "caught up with the log as it
stood at start", stopping commits what was processed, and a dying worker is reported."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from arena_runtime.config import load_settings
from arena_runtime.eventlog import OutgoingRecord, Record, TopicPartition, TopicSpec
from arena_runtime.eventlog.embedded import EmbeddedEventLog
from arena_runtime.host import EXIT_FAILED, ConsumeWorker, Runtime, Service, serve
from arena_runtime.host.catchup import CatchUp
from arena_runtime.host.http import HealthApp

TOPIC = "arena.test.commands"
PARTITIONS = 4


@pytest.fixture
async def log(tmp_path: Path) -> AsyncIterator[EmbeddedEventLog]:
    event_log = EmbeddedEventLog(tmp_path / "events.sqlite3")
    await event_log.start()
    await event_log.create_topics([TopicSpec(TOPIC, partitions=PARTITIONS)])
    yield event_log
    await event_log.close()


def raw(data: bytes) -> bytes:
    return data


async def append(log: EmbeddedEventLog, count: int) -> None:
    records = [OutgoingRecord(value=b"v%d" % i, key=b"stream-%d" % i) for i in range(count)]
    await log.append(TOPIC, records)


async def eventually(condition: Callable[[], bool]) -> None:
    # Readiness is a condition to poll, as a probe does, not an event to wait on.
    async with asyncio.timeout(10):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


async def committed(log: EmbeddedEventLog, group: str) -> dict[int, int]:
    consumer = log.consumer(group, [TOPIC])
    result = {p: await consumer.committed(TopicPartition(TOPIC, p)) or 0 for p in range(PARTITIONS)}
    return result


async def test_not_ready_until_the_backlog_is_processed_then_committed(
    log: EmbeddedEventLog,
) -> None:
    await append(log, 40)
    gate = asyncio.Event()
    handled: list[Record] = []

    async def handler(item: bytes, record: Record) -> None:
        await gate.wait()
        handled.append(record)

    service = Service("match", [ConsumeWorker(log, "match", [TOPIC], raw, handler)])
    assert not service.ready()
    await service.start()
    try:
        await asyncio.sleep(0.3)
        assert not service.ready()  # the handler holds the first batch
        gate.set()
        await eventually(service.ready)
        assert len(handled) == 40
    finally:
        await service.stop()
    assert not service.ready()
    assert await committed(log, "match") == await log.end_offsets(TOPIC)


async def test_records_appended_after_start_do_not_hold_readiness_back(
    log: EmbeddedEventLog,
) -> None:
    service = Service("rating", [ConsumeWorker(log, "rating", [TOPIC], raw)])
    await service.start()
    try:
        await eventually(service.ready)
        await append(log, 10)
        assert service.ready()
        await eventually(lambda: sum(service.workers[0].catch_up.positions.values()) == 10)
    finally:
        await service.stop()
    assert sum((await committed(log, "rating")).values()) == 10


async def test_a_restarted_service_resumes_from_its_commits(log: EmbeddedEventLog) -> None:
    await append(log, 25)
    first = Service("matchmaking", [ConsumeWorker(log, "mm", [TOPIC], raw)])
    await first.start()
    await eventually(first.ready)
    await first.stop()
    await append(log, 5)
    seen: list[Record] = []

    async def handler(item: bytes, record: Record) -> None:
        seen.append(record)

    second = Service("matchmaking", [ConsumeWorker(log, "mm", [TOPIC], raw, handler)])
    await second.start()
    try:
        await eventually(second.ready)
    finally:
        await second.stop()
    assert len(seen) == 5  # only what the first run had not committed


async def test_a_failing_worker_is_reported_and_stop_still_returns(
    log: EmbeddedEventLog,
) -> None:
    await append(log, 3)

    async def handler(item: bytes, record: Record) -> None:
        raise RuntimeError("handler broke")

    service = Service("match", [ConsumeWorker(log, "broken", [TOPIC], raw, handler)])
    await service.start()
    error = await asyncio.wait_for(service.wait_failed(), timeout=10)
    assert isinstance(error, RuntimeError)
    assert not service.ready()
    await service.stop()
    assert sum((await committed(log, "broken")).values()) == 0  # nothing handled, nothing committed


async def test_two_members_of_a_group_are_each_ready_on_their_share(
    log: EmbeddedEventLog,
) -> None:
    await append(log, 40)
    one = Service("match-1", [ConsumeWorker(log, "shared", [TOPIC], raw)])
    two = Service("match-2", [ConsumeWorker(log, "shared", [TOPIC], raw)])
    await one.start()
    await two.start()
    try:
        await eventually(lambda: one.ready() and two.ready())
    finally:
        await asyncio.gather(one.stop(), two.stop())
    assert await committed(log, "shared") == await log.end_offsets(TOPIC)


async def test_health_app_reports_each_service() -> None:
    readiness = {"gateway": True, "match": False}
    app = HealthApp(readiness=lambda: dict(readiness), metrics=lambda: b"arena_up 1\n")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://arena") as client:
        assert (await client.get("/healthz")).status_code == 200
        response = await client.get("/readyz")
        assert response.status_code == 503
        assert response.json()["services"] == readiness
        readiness["match"] = True
        assert (await client.get("/readyz")).status_code == 200
        metrics = await client.get("/metrics")
        assert metrics.text == "arena_up 1\n"
        assert metrics.headers["content-type"].startswith("text/plain")
        assert (await client.get("/elsewhere")).status_code == 404


class DyingWorker:
    name = "dying"

    async def start(self) -> None:
        pass

    async def run(self) -> None:
        raise RuntimeError("lost the database")

    def request_stop(self) -> None:
        pass

    def ready(self) -> bool:
        return False


async def test_host_exits_with_failure_when_a_worker_dies(tmp_path: Path) -> None:
    settings = load_settings({"ARENA_DATA_DIR": str(tmp_path / "var"), "ARENA_HTTP_PORT": "0"})

    async def build(runtime: Runtime) -> Service:
        return Service("doomed", [DyingWorker()])

    async with asyncio.timeout(60):
        assert await serve(settings, [build]) == EXIT_FAILED


async def test_a_member_without_partitions_waits_out_the_grace_unless_the_log_was_empty(
    log: EmbeddedEventLog,
) -> None:
    not_joined = log.consumer("idle", [TOPIC])  # never started: it has no partitions
    empty_at_start = CatchUp(empty_grace=60)
    await empty_at_start.snapshot(log, [TOPIC])
    await empty_at_start.observe_assignment(not_joined)
    assert empty_at_start.ready()

    await append(log, 5)
    behind = CatchUp(empty_grace=0.2)
    await behind.snapshot(log, [TOPIC])
    assert not behind.ready()  # has not polled yet
    await behind.observe_assignment(not_joined)
    assert not behind.ready()  # on Kafka the partitions may still be on their way
    await asyncio.sleep(0.25)
    await behind.observe_assignment(not_joined)
    assert behind.ready()  # more members than partitions: nothing will come


class _Starting:
    """A worker whose start yields to the loop in the middle, noting when it begins and ends."""

    def __init__(self, name: str, order: list[str]) -> None:
        self.name = name
        self._order = order

    async def start(self) -> None:
        self._order.append(f"{self.name} begins")
        await asyncio.sleep(0)  # a network round trip, as joining a group is
        self._order.append(f"{self.name} ends")

    async def run(self) -> None:
        await asyncio.Event().wait()

    def request_stop(self) -> None:
        pass

    def ready(self) -> bool:
        return True


async def test_workers_start_together_not_one_after_another() -> None:
    """Each worker's start waits on the network (a group join, end offsets): they overlap."""
    order: list[str] = []
    service = Service("svc", [_Starting("a", order), _Starting("b", order)])
    await service.start()
    try:
        assert order == ["a begins", "b begins", "a ends", "b ends"]
    finally:
        await service.stop(grace=0)


async def test_a_background_worker_runs_but_does_not_hold_readiness_back(
    log: EmbeddedEventLog,
) -> None:
    """The gateway's share of the accounts group: the service is ready on its other workers
    while that one still works through its backlog (on Kafka: still waits for its join)."""
    await append(log, 10)
    gate = asyncio.Event()
    handled: list[Record] = []

    async def handler(item: bytes, record: Record) -> None:
        await gate.wait()
        handled.append(record)

    behind = ConsumeWorker(log, "accounts", [TOPIC], raw, handler)
    service = Service("gateway", [ConsumeWorker(log, "fanout", [TOPIC], raw)], background=[behind])
    await service.start()
    try:
        await eventually(service.ready)
        assert not behind.ready() and not handled
        gate.set()
        await eventually(lambda: len(handled) == 10)
    finally:
        await service.stop()
    assert await committed(log, "accounts") == await log.end_offsets(TOPIC)


async def test_a_gained_partition_is_loaded_before_the_member_is_ready(
    log: EmbeddedEventLog,
) -> None:
    """``on_gain`` (a stream runner reading a partition's history when it is assigned, not at
    the first command that needs it, while players play) runs for every partition the member
    gets, and the member is ready only once it has."""
    gate = asyncio.Event()
    gained: list[int] = []

    async def on_gain(partition: int) -> None:
        await gate.wait()
        gained.append(partition)

    service = Service("rating", [ConsumeWorker(log, "rating", [TOPIC], raw, on_gain=on_gain)])
    await service.start()
    try:
        await asyncio.sleep(0.3)
        assert not service.ready()  # caught up with an empty log, but not loaded
        gate.set()
        await eventually(service.ready)
        assert sorted(gained) == list(range(PARTITIONS))
    finally:
        await service.stop()
