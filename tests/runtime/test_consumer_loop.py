"""The consume loop on the embedded log and the real broker: malformed records are logged with
their position, counted and skipped without stopping; offsets are committed after handling."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest
from arena_runtime import consumer_loop, metrics, telemetry
from arena_runtime.config import load_settings
from arena_runtime.consumer_loop import ConsumerLoop
from arena_runtime.envelope import Codec, Command, Schemas, TypeFilter
from arena_runtime.eventlog import (
    Consumer,
    EventLog,
    OutgoingRecord,
    Record,
    TopicPartition,
    TopicSpec,
)
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.host.catchup import CatchUp
from arena_runtime.host.consume import CommitWatcher, ConsumeWorker
from structlog.testing import capture_logs

from tests.runtime.conftest import OpenLog

WHEN = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def registry(*, version: int = 1, extra: str | None = None) -> Schemas:
    schemas = Schemas()
    schemas.add_json("tally.Add")
    if version >= 2:
        schemas.add_json("tally.Add", version=2, upcast=dict)
    if extra:
        schemas.add_json(extra)
    return schemas


READER = Codec(registry())


def command_record(command_id: str, codec: Codec = READER, type: str = "tally.Add") -> bytes:
    return codec.encode_command(Command(command_id, "t-1", type, {"amount": 1}, WHEN))


@pytest.fixture
async def log(open_log: OpenLog, unique_topic: str) -> AsyncIterator[EventLog]:
    event_log = open_log()
    await event_log.start()
    await event_log.create_topics([TopicSpec(unique_topic, partitions=1)])
    yield event_log
    await event_log.close()


@pytest.fixture
def group() -> str:
    return f"group-{uuid.uuid4().hex[:8]}"


async def append_values(log: EventLog, topic: str, values: list[bytes]) -> None:
    await log.append(topic, [OutgoingRecord(v, b"t-1") for v in values])


async def run_until(
    loop: ConsumerLoop[Command], done: Callable[[], bool], polls: int = 240
) -> None:
    """Poll until ``done()``; bounded, because joining a broker's group takes a few polls."""
    for _ in range(polls):
        if done():
            return
        await loop.run_once()
    assert done(), f"not done after {polls} polls"


async def consume_until(log: EventLog, topic: str, group: str, seen: list[str], count: int) -> None:
    """A new member of ``group`` collects command ids into ``seen`` until it holds ``count``."""
    consumer = log.consumer(group, [topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(
            consumer, group=group, decode=READER.decode_command, handler=collecting(seen)
        )
        await run_until(loop, lambda: len(seen) == count)
    finally:
        await consumer.stop()


def collecting(seen: list[str]) -> Callable[[Command, Record], Awaitable[None]]:
    async def handle(command: Command, record: Record) -> None:
        seen.append(command.command_id)

    return handle


def malformed_count(topic: str, group: str, reason: str) -> float:
    labels = {"topic": topic, "group": group, "reason": reason}
    return metrics.sample("arena_malformed_records_total", labels)


async def test_malformed_records_are_logged_counted_and_skipped(
    log: EventLog, unique_topic: str, group: str
) -> None:
    await append_values(
        log,
        unique_topic,
        [
            command_record("a"),
            b"\x08\x96\x01 not an envelope \xff",
            command_record("x", Codec(registry(extra="tally.Unknown")), type="tally.Unknown"),
            command_record("v2", Codec(registry(version=2))),
            command_record("b"),
        ],
    )
    seen: list[str] = []
    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(
            consumer, group=group, decode=READER.decode_command, handler=collecting(seen)
        )
        with capture_logs() as logs:
            await run_until(loop, lambda: len(seen) == 2)
        assert seen == ["a", "b"]
        assert await consumer.committed(TopicPartition(unique_topic, 0)) == 5
    finally:
        await consumer.stop()

    skipped = [entry for entry in logs if entry["event"] == "malformed record skipped"]
    assert [(e["topic"], e["partition"], e["offset"], e["reason"]) for e in skipped] == [
        (unique_topic, 0, 1, "undecodable"),
        (unique_topic, 0, 2, "unknown_type"),
        (unique_topic, 0, 3, "unsupported_schema_version"),
    ]
    assert all(e["log_level"] == "warning" and e["group"] == group for e in skipped)
    for reason in ("undecodable", "unknown_type", "unsupported_schema_version"):
        assert malformed_count(unique_topic, group, reason) == 1
    consumed = {"topic": unique_topic, "group": group}
    assert metrics.sample("arena_records_consumed_total", consumed) == 2
    assert metrics.sample("arena_handler_seconds_count", consumed) == 2


@pytest.mark.parametrize("batched", [False, True], ids=["handler", "batch_handler"])
async def test_records_a_type_filter_skips_are_committed_past_unread(
    log: EventLog, unique_topic: str, group: str, batched: bool
) -> None:
    """Told from their ce_type header, records of a type the handler does nothing with are
    neither decoded nor handled nor counted; those written without the header, and those of a
    type the reader does not know (malformed), are read as before."""
    writer = Codec(registry(extra="tally.Reset"))
    unknown = Codec(registry(extra="tally.Unknown"))

    def written(codec: Codec, command_id: str, type_: str) -> OutgoingRecord:
        return codec.command_record(Command(command_id, "t-1", type_, {"amount": 1}, WHEN))

    headerless = written(writer, "old-reset", "tally.Reset").value
    await log.append(
        unique_topic,
        [
            written(writer, "a", "tally.Add"),
            written(writer, "reset", "tally.Reset"),
            OutgoingRecord(headerless, b"t-1"),
            written(unknown, "x", "tally.Unknown"),
            written(writer, "b", "tally.Add"),
        ],
    )
    reader = Codec(registry(extra="tally.Reset"))
    decoded: list[str] = []

    def decode(data: bytes) -> Command:
        command = reader.decode_command(data)  # raises for the unknown type, as before
        decoded.append(command.command_id)
        return command

    seen: list[str] = []

    async def handle_batch(batch: list[tuple[Command, Record]]) -> None:
        seen.extend(command.command_id for command, _ in batch)

    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(
            consumer,
            group=group,
            decode=decode,
            handler=None if batched else collecting(seen),
            batch_handler=handle_batch if batched else None,
            skip=TypeFilter(reader.schemas, ["tally.Add"]),
        )
        await run_until(loop, lambda: "b" in seen)
        await loop.flush()
        assert decoded == seen == ["a", "old-reset", "b"]
        assert await consumer.committed(TopicPartition(unique_topic, 0)) == 5
    finally:
        await consumer.stop()
    assert malformed_count(unique_topic, group, "unknown_type") == 1
    consumed = {"topic": unique_topic, "group": group}
    assert metrics.sample("arena_records_consumed_total", consumed) == 3


async def test_unexported_a_handler_runs_in_the_trace_that_wrote_its_record(
    log: EventLog, unique_topic: str, group: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No span of its own while spans are not exported: the writer's context is current in the
    handler, from the record's traceparent header, else (no header, or not a valid one) from its
    envelope; and nothing of it stays current after."""
    monkeypatch.setattr(telemetry, "_exporting", False)
    header_trace, envelope_trace = "0af7651916cd43dd8448eb211c80319c", "1" * 32

    def traced(command_id: str, header: bytes | None) -> OutgoingRecord:
        command = Command(
            command_id,
            "t-1",
            "tally.Add",
            {"amount": 1},
            WHEN,
            traceparent=f"00-{envelope_trace}-b7ad6b7169203331-01",
        )
        value = READER.encode_command(command)
        return OutgoingRecord(value, b"t-1", () if header is None else (("traceparent", header),))

    await log.append(
        unique_topic,
        [
            traced("header", f"00-{header_trace}-b7ad6b7169203331-01".encode()),
            traced("envelope", None),
            traced("bad-header", b"00-not-a-trace"),
        ],
    )
    traces: dict[str, str] = {}

    async def handle(command: Command, record: Record) -> None:
        traces[command.command_id] = telemetry.trace_id_hex()

    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(consumer, group=group, decode=READER.decode_command, handler=handle)
        await run_until(loop, lambda: len(traces) == 3)
    finally:
        await consumer.stop()
    assert traces == {
        "header": header_trace,
        "envelope": envelope_trace,
        "bad-header": envelope_trace,
    }
    assert telemetry.trace_id_hex() == ""


async def test_unexported_a_handler_writes_its_records_trace_without_parsing_it(
    log: EventLog, unique_topic: str, group: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the handler writes carries the record's traceparent as it came, and no
    OpenTelemetry context is made of it on the way (see telemetry.carrying)."""
    monkeypatch.setattr(telemetry, "_exporting", False)
    traceparent = f"00-{uuid.uuid4().hex}-b7ad6b7169203331-01"
    command = Command("c-1", "t-1", "tally.Add", {"amount": 1}, WHEN, traceparent=traceparent)
    await log.append(unique_topic, [READER.command_record(command)])

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a context was made")

    monkeypatch.setattr(telemetry._PROPAGATOR, "extract", refuse)
    monkeypatch.setattr(telemetry._PROPAGATOR, "inject", refuse)
    written: list[tuple[str, str]] = []

    async def handle(command: Command, record: Record) -> None:
        written.append(telemetry.current_trace())

    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(consumer, group=group, decode=READER.decode_command, handler=handle)
        await run_until(loop, lambda: len(written) == 1)
    finally:
        await consumer.stop()
    assert written == [(traceparent, "")]


async def test_each_record_handled_counts_its_age_since_the_append(
    log: EventLog, unique_topic: str, group: str
) -> None:
    """arena_record_age_seconds: how long a record waited in the log before its handling."""
    await append_values(log, unique_topic, [command_record(c) for c in ("a", "b")])
    await asyncio.sleep(0.3)  # the records wait in the log before anyone reads them
    seen: list[str] = []
    await consume_until(log, unique_topic, group, seen, 2)
    labels = {"topic": unique_topic, "group": group}
    assert metrics.sample("arena_record_age_seconds_count", labels) == 2
    waited = metrics.sample("arena_record_age_seconds_sum", labels)
    assert 0.6 <= waited < 120  # each at least the 0.3 s it sat there
    assert metrics.sample("arena_record_age_seconds_bucket", {**labels, "le": "0.2"}) == 0


async def test_a_failing_handler_commits_what_came_before_and_is_retried(
    log: EventLog, unique_topic: str, group: str
) -> None:
    await append_values(log, unique_topic, [command_record(c) for c in ("a", "b", "c")])
    seen: list[str] = []

    async def fail_on_b(command: Command, record: Record) -> None:
        if command.command_id == "b":
            raise RuntimeError("database down")
        seen.append(command.command_id)

    first = log.consumer(group, [unique_topic])
    await first.start()
    try:
        loop = ConsumerLoop(first, group=group, decode=READER.decode_command, handler=fail_on_b)
        with pytest.raises(RuntimeError, match="database down"):
            await run_until(loop, lambda: False)
        assert seen == ["a"]
        assert await first.committed(TopicPartition(unique_topic, 0)) == 1
    finally:
        await first.stop()

    # After a restart the failed record comes again, and nothing handled is repeated.
    await consume_until(log, unique_topic, group, seen, 3)
    assert seen == ["a", "b", "c"]


async def test_run_stops_when_asked(log: EventLog, unique_topic: str, group: str) -> None:
    seen: list[str] = []
    consumer: Consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(
            consumer,
            group=group,
            decode=READER.decode_command,
            handler=collecting(seen),
            poll_timeout_ms=100,
        )
        stop = asyncio.Event()
        running = asyncio.create_task(loop.run(stop))
        await append_values(log, unique_topic, [command_record("a"), b"junk", command_record("b")])
        for _ in range(1200):  # a bound, not a timing: joining a broker group takes seconds
            if len(seen) == 2:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(running, timeout=30)
        assert seen == ["a", "b"]
        assert await consumer.committed(TopicPartition(unique_topic, 0)) == 3
    finally:
        await consumer.stop()


async def test_a_commit_refused_after_losing_the_partitions_does_not_stop_the_loop(
    tmp_path: Path, unique_topic: str, group: str
) -> None:
    # Embedded only: it takes the partition away by stopping the member, which on Kafka is a
    # different error than the rebalance this stands for.
    log = open_event_log(load_settings({"ARENA_DATA_DIR": str(tmp_path)}))
    await log.start()
    await log.create_topics([TopicSpec(unique_topic, partitions=1)])
    await append_values(log, unique_topic, [command_record("a"), command_record("b")])
    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    seen: list[str] = []

    async def lose_partitions_midway(command: Command, record: Record) -> None:
        seen.append(command.command_id)
        if command.command_id == "b":
            await consumer.stop()  # as a rebalance does: the partition is no longer ours

    loop = ConsumerLoop(
        consumer, group=group, decode=READER.decode_command, handler=lose_partitions_midway
    )
    try:
        with capture_logs() as logs:
            handled = await loop.run_once()
    finally:
        await consumer.stop()
        committed = await log.consumer(group, [unique_topic]).committed(
            TopicPartition(unique_topic, 0)
        )
        await log.close()
    assert (handled, seen) == (2, ["a", "b"])
    refused = [e for e in logs if e["event"].startswith("commit refused")]
    assert [e["offsets"] for e in refused] == [{f"{unique_topic}/0": 2}]
    assert committed is None  # the next owner starts from the last commit


@pytest.fixture
async def two_partitions(open_log: OpenLog, unique_topic: str) -> AsyncIterator[EventLog]:
    event_log = open_log()
    await event_log.start()
    await event_log.create_topics([TopicSpec(unique_topic, partitions=2)])
    yield event_log
    await event_log.close()


async def test_partitions_side_by_side_keep_their_own_order_and_commit_apart(
    two_partitions: EventLog, unique_topic: str, group: str
) -> None:
    log = two_partitions
    records = [
        OutgoingRecord(command_record(f"{partition}{n}"), b"t-1", partition=partition)
        for n in range(3)
        for partition in (0, 1)
    ]
    await log.append(unique_topic, records)
    seen: list[str] = []
    one_ran = asyncio.Event()

    async def handle(command: Command, record: Record) -> None:
        if command.command_id == "00":
            # Handled one record at a time, partition 0's first record would wait here for ever:
            # partition 1 comes only after it.
            await asyncio.wait_for(one_ran.wait(), 30)
        if command.command_id == "02":
            raise RuntimeError("database down")
        if record.partition == 1:
            one_ran.set()
        seen.append(command.command_id)

    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(
            consumer,
            group=group,
            decode=READER.decode_command,
            handler=handle,
            concurrent_partitions=True,
        )
        with pytest.raises(RuntimeError, match="database down"):
            await run_until(loop, lambda: False)
        assert [c for c in seen if c[0] == "0"] == ["00", "01"]
        assert [c for c in seen if c[0] == "1"] == ["10", "11", "12"]
        assert await consumer.committed(TopicPartition(unique_topic, 0)) == 2
        assert await consumer.committed(TopicPartition(unique_topic, 1)) == 3
    finally:
        await consumer.stop()


def committing_behind(consumer: Consumer, group: str, seen: list[str]) -> ConsumerLoop[Command]:
    """A commit-behind loop that collects the command ids it handles into ``seen``."""
    return ConsumerLoop(
        consumer,
        group=group,
        decode=READER.decode_command,
        handler=collecting(seen),
        commit_behind=True,
    )


class HeldCommits(CommitWatcher):
    """A real consumer whose commits wait for a gate: shows what does not wait for them."""

    def __init__(self, inner: Consumer) -> None:
        super().__init__(inner, CatchUp())
        self.gate = asyncio.Event()
        self.commits: list[dict[TopicPartition, int]] = []

    async def commit(self, offsets: Mapping[TopicPartition, int] | None = None) -> None:
        await self.gate.wait()
        await super().commit(offsets)
        self.commits.append(dict(offsets or {}))


async def test_commit_behind_handles_the_next_poll_while_the_last_commit_is_in_flight(
    log: EventLog, unique_topic: str, group: str
) -> None:
    await append_values(log, unique_topic, [command_record("a")])
    seen: list[str] = []
    consumer = HeldCommits(log.consumer(group, [unique_topic]))
    await consumer.start()
    tp = TopicPartition(unique_topic, 0)
    try:
        loop = committing_behind(consumer, group, seen)
        await run_until(loop, lambda: seen == ["a"])
        await append_values(log, unique_topic, [command_record("b"), command_record("c")])
        await run_until(loop, lambda: len(seen) == 3)  # the first commit still waits
        assert consumer.commits == []
        consumer.gate.set()
        await loop.flush()
        assert await consumer.committed(tp) == 3
        # One commit at a time, offsets only forward: the second carries what came meanwhile.
        assert [c[tp] for c in consumer.commits] == [1, 3]
    finally:
        await consumer.stop()


async def test_a_busy_member_commits_in_the_background_once_an_interval(
    log: EventLog, unique_topic: str, group: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polls a move apart each found a record: their commits are COMMIT_INTERVAL_S apart, not
    one a poll (each was a write to the log); a flush commits what waits at once."""
    monkeypatch.setattr(consumer_loop, "COMMIT_INTERVAL_S", 0.4)
    seen: list[str] = []
    consumer = HeldCommits(log.consumer(group, [unique_topic]))
    consumer.gate.set()
    await consumer.start()
    tp = TopicPartition(unique_topic, 0)
    try:
        loop = committing_behind(consumer, group, seen)
        started = asyncio.get_running_loop().time()
        for number in range(12):
            await append_values(log, unique_topic, [command_record(f"c{number}")])
            await run_until(loop, lambda n=number: len(seen) == n + 1)
            await asyncio.sleep(0.05)
        elapsed = asyncio.get_running_loop().time() - started
        assert len(consumer.commits) <= elapsed / 0.4 + 1, consumer.commits
        await loop.flush()
        assert await consumer.committed(tp) == 12
    finally:
        await consumer.stop()


async def test_a_flush_does_not_wait_for_the_next_commit_s_turn(
    log: EventLog, unique_topic: str, group: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop commits what was handled at once, even while a background commit waits for its
    turn (a graceful handover is a second's budget)."""
    monkeypatch.setattr(consumer_loop, "COMMIT_INTERVAL_S", 60.0)
    seen: list[str] = []
    consumer = HeldCommits(log.consumer(group, [unique_topic]))
    consumer.gate.set()
    await consumer.start()
    try:
        loop = committing_behind(consumer, group, seen)
        for number in range(2):  # the first commit goes at once, the second waits its turn
            await append_values(log, unique_topic, [command_record(f"c{number}")])
            await run_until(loop, lambda n=number: len(seen) == n + 1)
        await asyncio.wait_for(loop.flush(), 20)
        assert await consumer.committed(TopicPartition(unique_topic, 0)) == 2
    finally:
        await consumer.stop()


async def test_a_stopping_member_gives_up_a_commit_the_log_does_not_answer(
    log: EventLog, unique_topic: str, group: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop never hangs on its last commit (a broker just back from an outage may not answer
    one): the member stops, and what it handled is redelivered to the next owner."""
    monkeypatch.setattr(consumer_loop, "STOP_COMMIT_SECONDS", 0.5)
    seen: list[str] = []
    all_seen = asyncio.Event()

    async def handle(command: Command, record: Record) -> None:
        seen.append(command.command_id)
        all_seen.set()

    worker = ConsumeWorker(log, group, [unique_topic], READER.decode_command, handle)
    await worker.start()
    unanswered = asyncio.Event()  # never set: commits wait for it forever

    async def no_answer(offsets: Mapping[TopicPartition, int] | None = None) -> None:
        await unanswered.wait()

    worker._consumer._inner.commit = no_answer  # type: ignore[attr-defined, method-assign]
    running = asyncio.create_task(worker.run())
    await append_values(log, unique_topic, [command_record("c0")])
    await asyncio.wait_for(all_seen.wait(), 30)
    worker.request_stop()
    with capture_logs() as logs:
        await asyncio.wait_for(running, 20)
    assert seen == ["c0"]
    assert any("not answered in time" in entry["event"] for entry in logs)


async def test_a_lingering_member_takes_a_steady_stream_in_few_polls(
    log: EventLog, unique_topic: str, group: str
) -> None:
    """``linger``: a member no player waits on (a room waiting for its match's end) lets records
    gather between polls, instead of a poll, a commit and a wake-up per record."""
    seen: list[str] = []
    all_seen = asyncio.Event()

    async def handle(command: Command, record: Record) -> None:
        seen.append(command.command_id)
        if len(seen) == 20:
            all_seen.set()

    worker = ConsumeWorker(log, group, [unique_topic], READER.decode_command, handle, linger=0.3)
    polls: list[int] = []
    run_once = worker._loop.run_once

    async def counted() -> int:
        found = await run_once()
        if found:
            polls.append(found)
        return found

    worker._loop.run_once = counted  # type: ignore[method-assign]
    await worker.start()
    running = asyncio.create_task(worker.run())
    try:
        for number in range(20):
            await append_values(log, unique_topic, [command_record(f"c{number}")])
            await asyncio.sleep(0.03)
        await asyncio.wait_for(all_seen.wait(), 30)
    finally:
        worker.request_stop()
        await running
    assert sorted(seen) == sorted(f"c{n}" for n in range(20))
    assert len(polls) <= 6, polls  # about 0.6 s of records over 0.3 s lingers, not 20 polls


async def test_a_busy_member_s_lag_series_refresh_on_a_schedule_and_settle_when_it_is_idle(
    log: EventLog, unique_topic: str, group: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asking every partition's lag after each of a busy member's polls cost a few percent of
    a move: the series follow it every LAG_REFRESH_SECONDS, and at once when a poll comes back
    empty (caught up)."""
    monkeypatch.setattr(metrics, "LAG_REFRESH_SECONDS", 0.3)
    labels = {"group": group, "topic": unique_topic, "partition": "0"}
    watch = metrics.ConsumerWatch(group)
    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        await append_values(log, unique_topic, [command_record(f"c{n}") for n in range(10)])
        taken = 0
        while not taken:
            taken = len(await consumer.poll(timeout_ms=500, max_records=2))
        await watch.observe(consumer, taken)
        first = metrics.sample("arena_consumer_partition_lag", labels)
        assert first == 10 - taken
        taken += len(await consumer.poll(timeout_ms=500, max_records=2))
        await watch.observe(consumer, 2)
        assert metrics.sample("arena_consumer_partition_lag", labels) == first  # not yet
        await asyncio.sleep(0.3)
        taken += len(await consumer.poll(timeout_ms=500, max_records=2))
        await watch.observe(consumer, 2)
        assert metrics.sample("arena_consumer_partition_lag", labels) == 10 - taken
        while taken < 10:
            taken += len(await consumer.poll(timeout_ms=500, max_records=10))
        assert await consumer.poll(timeout_ms=100) == []
        await watch.observe(consumer, 0)
        assert metrics.sample("arena_consumer_partition_lag", labels) == 0
    finally:
        watch.close()
        await consumer.stop()


async def test_a_batch_handler_gets_each_partition_of_a_poll_at_once(
    two_partitions: EventLog, unique_topic: str, group: str
) -> None:
    log = two_partitions
    values = [command_record(f"{p}{n}") for n in range(3) for p in (0, 1)]
    values[2] = b"\x08\x96\x01 not an envelope \xff"  # partition 0's second record
    await log.append(
        unique_topic,
        [OutgoingRecord(v, b"t-1", partition=n % 2) for n, v in enumerate(values)],
    )
    batches: list[list[str]] = []
    fail = True

    async def handle(batch: list[tuple[Command, Record]]) -> None:
        ids = [command.command_id for command, _ in batch]
        if fail and ids[0].startswith("1"):
            raise RuntimeError("database down")
        batches.append(ids)

    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(
            consumer,
            group=group,
            decode=READER.decode_command,
            batch_handler=handle,
            concurrent_partitions=True,
        )
        with pytest.raises(RuntimeError, match="database down"):
            await run_until(loop, lambda: False)
        # Partition 0 went whole (the malformed record skipped); partition 1 not at all.
        assert batches == [["00", "02"]]
        assert await consumer.committed(TopicPartition(unique_topic, 0)) == 3
        assert await consumer.committed(TopicPartition(unique_topic, 1)) is None
    finally:
        await consumer.stop()
    fail = False  # restarted, the consumer gets partition 1's records again, and only those
    again = log.consumer(group, [unique_topic])
    await again.start()
    try:
        retry = ConsumerLoop(again, group=group, decode=READER.decode_command, batch_handler=handle)
        await run_until(retry, lambda: len(batches) == 2)
        assert batches[1] == ["10", "11", "12"]
    finally:
        await again.stop()


def test_a_consumer_loop_takes_one_kind_of_handler() -> None:
    with pytest.raises(TypeError, match="either a handler or a batch_handler"):
        ConsumerLoop(None, group="g", decode=READER.decode_command)  # type: ignore[arg-type]


async def test_pipelined_a_waiting_partition_holds_up_only_itself(
    two_partitions: EventLog, unique_topic: str, group: str
) -> None:
    log = two_partitions
    await log.append(unique_topic, [OutgoingRecord(command_record("00"), b"t", partition=0)])
    seen: list[str] = []
    release = asyncio.Event()

    async def handle(batch: list[tuple[Command, Record]]) -> None:
        for command, _ in batch:
            if command.command_id == "00":
                await release.wait()  # partition 0 waits (for a lock, say)
            if command.command_id == "01":
                raise RuntimeError("database down")
            seen.append(command.command_id)

    consumer = log.consumer(group, [unique_topic])
    await consumer.start()
    try:
        loop = ConsumerLoop(
            consumer,
            group=group,
            decode=READER.decode_command,
            batch_handler=handle,
            pipelined=True,
        )
        await run_until(loop, lambda: loop._in_flight == 1)  # partition 0's record is in its lane
        # Polled while partition 0 waits: partition 1 goes on, and is committed.
        await log.append(unique_topic, [OutgoingRecord(command_record("10"), b"t", partition=1)])
        await run_until(loop, lambda: seen == ["10"])
        await run_until(loop, lambda: loop._to_commit == {} and loop._committer is None)
        assert await consumer.committed(TopicPartition(unique_topic, 1)) == 1
        assert await consumer.committed(TopicPartition(unique_topic, 0)) is None
        # Partition 0 goes on when let; its next record fails, which the loop raises.
        await log.append(unique_topic, [OutgoingRecord(command_record("01"), b"t", partition=0)])
        release.set()
        with pytest.raises(RuntimeError, match="database down"):
            await run_until(loop, lambda: False)
        await loop.flush()
        assert seen == ["10", "00"]
        assert await consumer.committed(TopicPartition(unique_topic, 0)) == 1
    finally:
        await consumer.stop()


class HeldLookups(CommitWatcher):
    """A real consumer whose look-ups of committed offsets are answered late: read at once,
    delivered when a gate opens, as an answer still on its way back is."""

    def __init__(self, inner: Consumer, catch_up: CatchUp) -> None:
        super().__init__(inner, catch_up)
        self.gate = asyncio.Event()
        self.asked = asyncio.Event()

    async def committed(self, tp: TopicPartition) -> int | None:
        answer = await super().committed(tp)  # read now, delivered once the gate opens
        self.asked.set()
        await self.gate.wait()
        return answer


async def test_readiness_keeps_a_commit_made_while_it_looked_up_the_start(
    log: EventLog, unique_topic: str, group: str
) -> None:
    """A pipelined worker's lanes commit in the background: one that lands while the worker
    learns a new partition's committed start must not be overwritten by that older answer
    (a CI run once waited for ever for a service to be ready)."""
    await append_values(log, unique_topic, [command_record(c) for c in ("a", "b", "c")])
    catch_up = CatchUp()
    await catch_up.snapshot(log, [unique_topic])
    consumer = HeldLookups(log.consumer(group, [unique_topic]), catch_up)
    await consumer.start()
    tp = TopicPartition(unique_topic, 0)
    try:
        for _ in range(240):  # joining a broker's group takes a few polls
            if await consumer.poll(timeout_ms=100) or consumer.assignment():
                break
        assert tp in consumer.assignment()
        learning = asyncio.create_task(catch_up.observe_assignment(consumer))
        await asyncio.wait_for(consumer.asked.wait(), 10)
        await consumer.commit({tp: 3})  # the lane's commit, while the look-up is out
        consumer.gate.set()
        await learning
        assert catch_up.positions[tp] == 3
        assert catch_up.ready()
    finally:
        await consumer.stop()
