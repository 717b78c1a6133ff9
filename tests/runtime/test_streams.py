"""The stream runner on the embedded log and the real broker: sequences, idempotent commands,
duplicated / replayed / interleaved deliveries, and two writers racing on one stream."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from arena_runtime import metrics
from arena_runtime.envelope import Codec, Command, Event, Schemas
from arena_runtime.eventlog import (
    Consumer,
    EventLog,
    EventLogError,
    OutgoingRecord,
    Position,
    Record,
    TopicSpec,
)
from arena_runtime.streams import (
    REJECTED_TYPE,
    UNDECIDABLE,
    Answer,
    Decision,
    NewEvent,
    Rejection,
    SequenceGate,
    StreamConflictError,
    StreamRunner,
    fold,
)
from hypothesis import given
from hypothesis import strategies as st
from structlog.testing import capture_logs

from tests.runtime.conftest import OpenLog

WHEN = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
LIMIT = 10


@dataclass(frozen=True)
class Tally:
    total: int = 0
    adds: tuple[int, ...] = ()


def schemas() -> Schemas:
    registry = Schemas()
    for name in ("tally.Add", "tally.AddTwice", "tally.Reset", "tally.Added", "tally.WasReset"):
        registry.add_json(name)
    return registry


CODEC = Codec(schemas())


def initial(stream: str) -> Tally:
    return Tally()


def apply(state: Tally, event: Event) -> Tally:
    if event.type == "tally.Added":
        amount = event.payload["amount"]
        return Tally(state.total + amount, (*state.adds, amount))
    assert event.type == "tally.WasReset"
    return Tally(0, state.adds)


def decide(state: Tally, command: Command) -> Decision:
    if command.type == "tally.Reset":
        return [NewEvent("tally.WasReset", {})]
    amount = command.payload["amount"]
    times = 2 if command.type == "tally.AddTwice" else 1
    if state.total + amount * times > LIMIT:
        return Rejection("over_limit", f"{state.total} + {amount * times} > {LIMIT}")
    return [NewEvent("tally.Added", {"amount": amount}) for _ in range(times)]


def command(stream: str, command_id: str, amount: int = 0, type: str = "tally.Add") -> Command:
    return Command(command_id, stream, type, {"amount": amount}, WHEN, correlation_id="req")


def runner(log: EventLog, topic: str, **options: Any) -> StreamRunner[Tally]:
    """The tally's runner; ``options`` are StreamRunner's own (max_attempts, on_written)."""
    return StreamRunner(
        log, topic, initial=initial, apply=apply, decide=decide, codec=CODEC, **options
    )


async def total_records(log: EventLog, topic: str) -> int:
    return sum((await log.end_offsets(topic)).values())


async def all_records(log: EventLog, topic: str) -> list[Record]:
    out: list[Record] = []
    for partition, end in sorted((await log.end_offsets(topic)).items()):
        offset = 0
        while offset < end:
            batch = await log.read(topic, partition, offset)
            out.extend(batch)
            offset = batch[-1].offset + 1
    return out


@pytest.fixture
async def log(open_log: OpenLog, unique_topic: str) -> AsyncIterator[EventLog]:
    event_log = open_log()
    await event_log.start()
    await event_log.create_topics([TopicSpec(unique_topic, partitions=2)])
    yield event_log
    await event_log.close()


async def test_commands_append_the_next_sequence_numbers(log: EventLog, unique_topic: str) -> None:
    tally = runner(log, unique_topic)
    first = await tally.handle(command("t-1", "c1", 3))
    second = await tally.handle(command("t-1", "c2", 2, type="tally.AddTwice"))
    other = await tally.handle(command("t-2", "c3", 5))
    assert [e.sequence for e in first.events + second.events] == [1, 2, 3]
    assert [e.sequence for e in other.events] == [1]
    assert all(e.causation_id == "c2" and e.correlation_id == "req" for e in second.events)
    view = await tally.load("t-1")
    assert (view.state, view.sequence) == (Tally(7, (3, 2, 2)), 3)

    restarted = runner(log, unique_topic)  # a new process folds the same state from the log
    assert (await restarted.load("t-1")).state == Tally(7, (3, 2, 2))
    assert (await restarted.load("t-2")).state == Tally(5, (5,))


async def test_views_by_stream_and_by_partition(log: EventLog, unique_topic: str) -> None:
    writer = runner(log, unique_topic)
    streams = [f"t-{i}" for i in range(6)]
    for n, stream in enumerate(streams, start=1):
        await writer.handle(command(stream, f"c{n}", n))
    reader = runner(log, unique_topic)
    assert reader.view("t-1") is None  # nothing read yet
    by_partition: dict[int, set[str]] = {}
    for partition in range(2):
        views = await reader.catch_up_partition(partition)
        by_partition[partition] = {v.stream for v in views}
    assert by_partition[0] | by_partition[1] == set(streams)
    for stream in streams:
        assert stream in by_partition[await reader.partition_of(stream)]
    assert reader.view("t-3") is not None and reader.view("t-3").state == Tally(4, (4,))


async def test_a_repeated_command_gets_the_same_answer_and_appends_nothing(
    log: EventLog, unique_topic: str
) -> None:
    tally = runner(log, unique_topic)
    answer = await tally.handle(command("t-1", "c1", 4, type="tally.AddTwice"))
    before = await total_records(log, unique_topic)

    again = await tally.handle(command("t-1", "c1", 4, type="tally.AddTwice"))
    after_restart = await runner(log, unique_topic).handle(
        command("t-1", "c1", 4, type="tally.AddTwice")
    )
    for repeat in (again, after_restart):
        assert repeat.repeated and repeat.accepted
        assert repeat.events == answer.events
    assert not answer.repeated
    assert await total_records(log, unique_topic) == before
    assert (await tally.load("t-1")).state == Tally(8, (4, 4))


async def test_a_stream_keeps_the_answers_of_its_latest_commands_only(
    log: EventLog, unique_topic: str
) -> None:
    tally = runner(log, unique_topic, kept_answers=3)
    for n in range(3):
        await tally.handle(command("t-1", f"single-{n}", 1))
    await tally.handle_batch([command("t-1", f"batch-{n}", 1) for n in range(3)])
    latest = ["batch-0", "batch-1", "batch-2"]
    assert list((await tally.load("t-1")).answers) == latest
    before = await total_records(log, unique_topic)

    # Inside the window a repeat is answered from memory; outside it, decided again.
    repeat = await tally.handle(command("t-1", "batch-2", 1))
    assert repeat.repeated and await total_records(log, unique_topic) == before
    decided_again = await tally.handle(command("t-1", "single-0", 1))
    assert not decided_again.repeated
    assert (await tally.load("t-1")).state.total == 7

    # A runner folding the stream from the log keeps as few, read in chunks smaller than that.
    fresh = runner(log, unique_topic, kept_answers=3, read_batch=2)
    assert list((await fresh.load("t-1")).answers) == ["batch-1", "batch-2", "single-0"]
    with pytest.raises(ValueError):
        runner(log, unique_topic, kept_answers=0)


async def test_a_stream_at_rest_forgets_its_answers_unless_its_partition_is_busy(
    log: EventLog, unique_topic: str
) -> None:
    tally = runner(log, unique_topic)
    assert tally.forget_answers("t-1", lambda state: True)  # never seen: nothing to drop
    await tally.handle(command("t-1", "c1", 3))
    view = await tally.load("t-1")
    assert tally.forget_answers("t-1", lambda state: state.total > 3)  # done with it …
    assert list(view.answers) == ["c1"]  # … but not at rest by its own rule: kept
    async with tally._lock(await tally.partition_of("t-1")):  # a command being decided there
        assert not tally.forget_answers("t-1", lambda state: True)
        assert list(view.answers) == ["c1"]
    assert tally.forget_answers("t-1", lambda state: True)
    assert view.answers == {} and view.state.total == 3 and view.sequence == 1
    # Forgotten, the command is decided again.
    assert not (await tally.handle(command("t-1", "c1", 3))).repeated


async def test_a_rejection_is_recorded_and_repeated_even_when_it_would_now_pass(
    log: EventLog, unique_topic: str
) -> None:
    tally = runner(log, unique_topic)
    await tally.handle(command("t-1", "c1", 8))
    rejected = await tally.handle(command("t-1", "big", 5))
    assert rejected.rejection == Rejection("over_limit", "8 + 5 > 10")
    assert [e.type for e in rejected.events] == [REJECTED_TYPE]
    await tally.handle(command("t-1", "reset", type="tally.Reset"))
    before = await total_records(log, unique_topic)

    for handler in (tally, runner(log, unique_topic)):
        repeat = await handler.handle(command("t-1", "big", 5))
        assert repeat.repeated and repeat.rejection == rejected.rejection
    assert await total_records(log, unique_topic) == before
    view = await tally.load("t-1")
    assert (view.state, view.sequence) == (Tally(0, (8,)), 3)


def stream_history(stream: str, amounts: Sequence[int]) -> list[Event]:
    return [
        Event(f"{stream}-e{n}", stream, n, "tally.Added", {"amount": a}, WHEN, f"{stream}-c{n}")
        for n, a in enumerate(amounts, start=1)
    ]


def deliveries(histories: Sequence[list[Event]], rng: random.Random) -> list[Event]:
    """Every event at least once, each stream in order, streams interleaved, with duplicates
    delivered right away and replays of older events later (as retries and restarts do)."""
    pending = [list(h) for h in histories]
    delivered: list[Event] = []
    while any(pending):
        stream = rng.choice([p for p in pending if p])
        event = stream.pop(0)
        delivered.append(event)
        if rng.random() < 0.3:
            delivered.append(event)  # duplicate
        if rng.random() < 0.3:
            delivered.append(rng.choice(delivered))  # replay of anything seen so far
    return delivered


async def test_a_command_decide_cannot_handle_is_rejected_not_fatal(
    log: EventLog, unique_topic: str
) -> None:
    tally = runner(log, unique_topic)
    poisoned = Command("bad", "t-1", "tally.Add", {"amont": 1}, WHEN)  # decide raises KeyError
    with capture_logs() as logs:
        answer = await tally.handle(poisoned)
    assert answer.rejection == Rejection(UNDECIDABLE, "the command could not be decided")
    assert [e["event"] for e in logs] == ["decide failed; command rejected"]
    assert (await tally.handle(poisoned)).repeated
    assert (await tally.handle(command("t-1", "good", 1))).accepted
    assert (await runner(log, unique_topic).load("t-1")).state == Tally(1, (1,))


async def test_duplicated_replayed_and_interleaved_deliveries(
    log: EventLog, unique_topic: str
) -> None:
    rng = random.Random(20261130)
    amounts = {f"s-{i}": [rng.randint(1, 3) for _ in range(6)] for i in range(4)}
    histories = [stream_history(stream, a) for stream, a in amounts.items()]
    delivered = deliveries(histories, rng)
    assert len(delivered) > sum(len(h) for h in histories)
    for event in delivered:  # one append each: the interleaving is exactly this order
        await log.append(unique_topic, [CODEC.event_record(event)])

    reader = runner(log, unique_topic)
    for stream, stream_amounts in amounts.items():
        view = await reader.load(stream)
        assert view.state == Tally(sum(stream_amounts), tuple(stream_amounts))
        assert view.sequence == len(stream_amounts)
        assert set(view.answers) == {f"{stream}-c{n}" for n in range(1, 7)}


class GatedLog(EventLog):
    """A real event log whose appends wait for a gate: lets a test hold one writer between
    deciding and appending, which is the moment two writers race."""

    def __init__(self, inner: EventLog) -> None:
        self.inner = inner
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def start(self) -> None:
        await self.inner.start()

    async def close(self) -> None:
        await self.inner.close()

    async def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        await self.inner.create_topics(specs)

    async def partitions(self, topic: str) -> int:
        return await self.inner.partitions(topic)

    async def append(self, topic: str, records: Sequence[OutgoingRecord]) -> list[Position]:
        self.waiting.set()
        await self.gate.wait()
        return await self.inner.append(topic, records)

    async def read(
        self, topic: str, partition: int, offset: int, max_records: int = 1000
    ) -> list[Record]:
        return await self.inner.read(topic, partition, offset, max_records)

    async def end_offsets(self, topic: str) -> dict[int, int]:
        return await self.inner.end_offsets(topic)

    def consumer(
        self, group: str, topics: Sequence[str], *, every_partition: bool = False
    ) -> Consumer:
        return self.inner.consumer(group, topics)


async def race(
    log: EventLog,
    open_log: OpenLog,
    topic: str,
    winner: Command,
    loser: Command,
    attempts: int = 3,
) -> tuple[Answer, Answer, StreamRunner[Tally]]:
    """The loser decides on the same state as the winner but appends after it."""
    slow_log = GatedLog(open_log())
    await slow_log.start()
    try:
        fast = runner(log, topic)
        slow = runner(slow_log, topic, max_attempts=attempts)
        await fast.handle(command("t-1", "setup", 1))
        slow_task = asyncio.create_task(slow.handle(loser))
        await slow_log.waiting.wait()  # the loser has decided on sequence 1 and waits to append
        won = await fast.handle(winner)
        slow_log.gate.set()
        lost = await slow_task
    finally:
        await slow_log.close()
    return won, lost, fast


async def test_two_writers_racing_first_in_log_order_wins(
    log: EventLog, open_log: OpenLog, unique_topic: str
) -> None:
    retried = metrics.sample("arena_commands_total", {"topic": unique_topic, "outcome": "retried"})
    won, late, fast = await race(
        log, open_log, unique_topic, command("t-1", "a", 2), command("t-1", "b", 3)
    )
    assert [e.sequence for e in won.events] == [2]
    # The loser's first events took no sequence; it decided again on the winning state.
    assert [e.sequence for e in late.events] == [3] and not late.repeated
    assert metrics.sample(
        "arena_commands_total", {"topic": unique_topic, "outcome": "retried"}
    ) == (retried + 1)

    records = await all_records(log, unique_topic)
    written = [CODEC.decode_event(r.value) for r in records]
    assert [(e.sequence, e.causation_id) for e in written] == [
        (1, "setup"),
        (2, "a"),
        (2, "b"),  # the losing append, still in the log …
        (3, "b"),
    ]
    losing_id = written[2].event_id
    # … and ignored by every reader: this writer, a fresh one, and a plain fold.
    for reader in (fast, runner(log, unique_topic)):
        view = await reader.load("t-1")
        assert view.state == Tally(6, (1, 2, 3))
        assert losing_id not in {e.event_id for a in view.answers.values() for e in a.events}
    assert fold(Tally(), apply, written) == (Tally(6, (1, 2, 3)), 3)


async def test_a_losing_batch_longer_than_the_winner_is_ignored_whole(
    log: EventLog, open_log: OpenLog, unique_topic: str
) -> None:
    _, late, _ = await race(
        log,
        open_log,
        unique_topic,
        command("t-1", "a", 2),
        command("t-1", "b", 3, type="tally.AddTwice"),
    )
    written = [CODEC.decode_event(r.value) for r in await all_records(log, unique_topic)]
    assert [(e.sequence, e.causation_id, e.batch_index) for e in written] == [
        (1, "setup", 0),
        (2, "a", 0),
        (2, "b", 0),  # the losing batch: its first event lost sequence 2 …
        (3, "b", 1),  # … so its second one must not take sequence 3
        (3, "b", 0),  # the retry, decided on the winning state
        (4, "b", 1),
    ]
    assert [e.sequence for e in late.events] == [3, 4]
    for reader in (runner(log, unique_topic), None):
        state = (await reader.load("t-1")).state if reader else fold(Tally(), apply, written)[0]
        assert state == Tally(9, (1, 2, 3, 3))


async def test_one_command_racing_on_two_writers_is_answered_once(
    log: EventLog, open_log: OpenLog, unique_topic: str
) -> None:
    same = command("t-1", "dup", 4)
    won, late, _ = await race(log, open_log, unique_topic, same, same)
    assert not won.repeated and late.repeated
    assert late.events == won.events
    assert (await runner(log, unique_topic).load("t-1")).state == Tally(5, (1, 4))


async def test_a_writer_out_of_attempts_gives_up(
    log: EventLog, open_log: OpenLog, unique_topic: str
) -> None:
    with pytest.raises(StreamConflictError, match="lost 1 races"):
        await race(
            log, open_log, unique_topic, command("t-1", "a", 2), command("t-1", "b", 3), attempts=1
        )
    # It appended nothing that counts: the stream holds the winner only.
    assert (await runner(log, unique_topic).load("t-1")).state == Tally(3, (1, 2))


async def test_malformed_records_in_a_stream_are_skipped(log: EventLog, unique_topic: str) -> None:
    tally = runner(log, unique_topic)
    await tally.handle(command("t-1", "c1", 1))
    partition = (await log.append(unique_topic, [OutgoingRecord(b"\x00garbage", b"t-1")]))[0]
    skipped = metrics.sample(
        "arena_malformed_records_total",
        {"topic": unique_topic, "group": "stream-runner", "reason": "undecodable"},
    )
    fresh = runner(log, unique_topic)
    assert (await fresh.load("t-1")).state == Tally(1, (1,))
    await fresh.handle(command("t-1", "c2", 2))
    assert (await fresh.load("t-1")).state == Tally(3, (1, 2))
    assert partition.partition == await fresh.partition_of("t-1")
    assert metrics.sample(
        "arena_malformed_records_total",
        {"topic": unique_topic, "group": "stream-runner", "reason": "undecodable"},
    ) == (skipped + 1)


# -- the reading rule without a log (fast, so hypothesis can try many orders) -----------------


def batch(stream: str, first: int, amounts: Sequence[int], batch_id: str) -> list[Event]:
    return [
        Event(
            f"{batch_id}-{i}",
            stream,
            first + i,
            "tally.Added",
            {"amount": a},
            WHEN,
            batch_id,
            batch_id=batch_id,
            batch_index=i,
        )
        for i, a in enumerate(amounts)
    ]


def test_a_batch_is_applied_whole_or_not_at_all() -> None:
    winner = batch("s", 1, [5], "w")
    loser = batch("s", 1, [1, 1, 1], "l")
    after = batch("s", 2, [2, 2], "n")
    assert fold(Tally(), apply, winner + loser + after) == (Tally(9, (5, 2, 2)), 3)
    gate = SequenceGate()
    assert [e.event_id for e in winner + loser + after if gate.admit(e)] == ["w-0", "n-0", "n-1"]
    # Events from other tools, without a batch id, are batches of one.
    plain = stream_history("s", [1, 2])
    assert fold(Tally(), apply, plain) == (Tally(3, (1, 2)), 2)


@given(st.lists(st.integers(1, 5), min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_fold_ignores_every_duplicate_and_replay(amounts: list[int], rng: Any) -> None:
    history = stream_history("s", amounts)
    delivered = deliveries([history], rng)
    assert fold(Tally(), apply, delivered) == (Tally(sum(amounts), tuple(amounts)), len(amounts))
    gate = SequenceGate()
    admitted = [e for e in delivered if gate.admit(e)]
    assert admitted == history and gate.last("s") == len(amounts)


class CountingLog(GatedLog):
    """A real event log that counts how often its ends are asked for."""

    def __init__(self, inner: EventLog) -> None:
        super().__init__(inner)
        self.gate.set()
        self.end_reads = 0

    async def end_offsets(self, topic: str) -> dict[int, int]:
        self.end_reads += 1
        return await self.inner.end_offsets(topic)


async def test_at_the_end_a_runner_decides_without_asking_for_the_end_again(
    log: EventLog, open_log: OpenLog, unique_topic: str
) -> None:
    counting = CountingLog(open_log())
    await counting.start()
    try:
        owner = runner(counting, unique_topic)
        await owner.handle(command("t-1", "a", 1))
        asked = counting.end_reads
        await owner.handle(command("t-1", "b", 2))
        await owner.handle(command("t-1", "c", 3))
        assert counting.end_reads == asked

        # Somebody else writes the partition (a zombie, a rebalance): the stale owner's append
        # lands after it, is ignored, and the command is decided again on the state that won.
        await runner(log, unique_topic).handle(command("t-1", "elsewhere", 4))
        late = await owner.handle(command("t-1", "d", 5))
        assert late.rejection == Rejection("over_limit", "10 + 5 > 10")
        assert (await runner(log, unique_topic).load("t-1")).state == Tally(10, (1, 2, 3, 4))

        # An owner told it lost the partition reads the end before its next decision: no
        # losing append this time.
        await runner(log, unique_topic).handle(command("t-1", "reset", type="tally.Reset"))
        owner.forget_end(await owner.partition_of("t-1"))
        before = await total_records(log, unique_topic)
        await owner.handle(command("t-1", "e", 6))
        assert await total_records(log, unique_topic) == before + 1
        assert (await owner.load("t-1")).state == Tally(6, (1, 2, 3, 4, 6))
    finally:
        await counting.close()


class AppendCountingLog(CountingLog):
    """A real event log that counts appends, and can be told to fail the next one."""

    def __init__(self, inner: EventLog) -> None:
        super().__init__(inner)
        self.appends = 0
        self.fail_next = False

    async def append(self, topic: str, records: Sequence[OutgoingRecord]) -> list[Position]:
        if self.fail_next:
            self.fail_next = False
            raise EventLogError("the disk is full")
        self.appends += 1
        return await super().append(topic, records)


async def test_a_batch_gets_the_answers_of_one_by_one_in_one_append_per_partition(
    log: EventLog, open_log: OpenLog, unique_topic: str
) -> None:
    streams = ["t-1", "t-2", "t-3", "t-4"]
    partitions = {await runner(log, unique_topic).partition_of(s) for s in streams}
    assert len(partitions) == 2  # the fixture's topic has two: both are in the batch
    commands = [
        command("t-1", "a", 4),
        command("t-2", "b", 6),
        command("t-1", "c", 5),
        command("t-1", "d", 2),  # 4 + 5 + 2 > 10: refused on the state a and c left
        command("t-3", "e", 3, type="tally.AddTwice"),
        command("t-1", "a", 4),  # delivered twice in one poll: the first answer again
        command("t-4", "f", 1),
    ]
    single_log = open_log()
    await single_log.start()
    other_topic = unique_topic + "-single"
    await single_log.create_topics([TopicSpec(other_topic, partitions=2)])
    single = runner(single_log, other_topic)
    expected = [await single.handle(c) for c in commands]
    await single_log.close()

    counting = AppendCountingLog(open_log())
    await counting.start()
    try:
        together = runner(counting, unique_topic)
        answers = await together.handle_batch(commands)
        assert counting.appends == 2  # one per partition
    finally:
        await counting.close()

    def shape(answer: Answer) -> tuple[Any, ...]:
        payloads = [(e.type, e.sequence, e.payload) for e in answer.events]
        return (answer.command_id, answer.rejection, answer.repeated, payloads)

    assert [shape(a) for a in answers] == [shape(a) for a in expected]
    assert all(
        e.traceparent == c.traceparent
        for a, c in zip(answers, commands, strict=True)
        for e in a.events
    )
    fresh = runner(log, unique_topic)  # what the log says is what the batch folded
    for stream in streams:
        assert (await fresh.load(stream)).state == together.view(stream).state  # type: ignore[union-attr]
    assert (await fresh.load("t-1")).state == Tally(9, (4, 5))


async def test_a_batch_that_loses_the_race_is_decided_again_one_by_one(
    log: EventLog, open_log: OpenLog, unique_topic: str
) -> None:
    owner = runner(log, unique_topic)
    await owner.handle(command("t-1", "setup", 1))
    # Somebody else writes the partition behind the owner's back.
    await runner(log, unique_topic).handle(command("t-1", "elsewhere", 6))
    answers = await owner.handle_batch([command("t-1", "a", 2), command("t-1", "b", 3)])
    assert [a.rejection for a in answers] == [None, Rejection("over_limit", "9 + 3 > 10")]
    assert [e.sequence for e in answers[0].events] == [3]
    assert (await runner(log, unique_topic).load("t-1")).state == Tally(9, (1, 6, 2))
    assert owner.view("t-1").state == Tally(9, (1, 6, 2))  # type: ignore[union-attr]


async def test_a_batch_whose_append_fails_leaves_the_fold_as_it_was(
    open_log: OpenLog, unique_topic: str
) -> None:
    failing = AppendCountingLog(open_log())
    await failing.start()
    try:
        await failing.create_topics([TopicSpec(unique_topic, partitions=2)])
        owner = runner(failing, unique_topic)
        await owner.handle(command("t-1", "setup", 1))
        failing.fail_next = True
        with pytest.raises(EventLogError, match="disk is full"):
            await owner.handle_batch([command("t-1", "a", 2), command("t-1", "b", 3)])
        view = owner.view("t-1")
        assert view is not None and (view.state, view.sequence) == (Tally(1, (1,)), 1)
        assert "a" not in view.answers and "b" not in view.answers
        # Delivered again after the failure, the batch is answered as if it came first now.
        answers = await owner.handle_batch([command("t-1", "a", 2), command("t-1", "b", 3)])
        assert [e.sequence for a in answers for e in a.events] == [2, 3]
        assert (await runner(failing, unique_topic).load("t-1")).state == Tally(6, (1, 2, 3))
    finally:
        await failing.close()


async def test_on_written_is_told_of_every_append_as_written(
    log: EventLog, unique_topic: str
) -> None:
    told: list[tuple[str, int, int]] = []

    def written(events: Sequence[Event], positions: Sequence[Position]) -> None:
        told.extend(
            (e.causation_id, p.partition, p.offset) for e, p in zip(events, positions, strict=True)
        )

    tally = runner(log, unique_topic, on_written=written)
    await tally.handle(command("t-1", "a", 1))
    await tally.handle_batch([command("t-1", "b", 2), command("t-1", "c", 20)])  # c: refused
    in_log = [
        (CODEC.decode_event(r.value).causation_id, r.partition, r.offset)
        for r in await all_records(log, unique_topic)
    ]
    assert told == in_log and [cause for cause, _, _ in told] == ["a", "b", "c"]


async def test_what_a_batch_is_shown_as_goes_with_its_events_unless_they_lose_a_race(
    log: EventLog, unique_topic: str
) -> None:
    """``handle_batch_with``: the companions' records (the match service's views) are made of
    the answers as folded and written with the events, in one write on the embedded log; when
    the events lose a race to another writer nothing of them is written (False): the caller
    makes them of the answers it is given."""
    shown = f"{unique_topic}.shown"
    await log.create_topics([TopicSpec(shown, partitions=2)])
    folded: list[list[tuple[str, bool]]] = []

    async def companions(answers: list[Answer]) -> list[tuple[str, list[OutgoingRecord]]]:
        folded.append([(a.command_id, a.accepted) for a in answers])
        text = ",".join(a.command_id for a in answers).encode()
        return [(shown, [OutgoingRecord(value=text, key=b"t-1")])]

    told: list[tuple[str, int]] = []

    def noted(events: Sequence[Event], positions: Sequence[Position]) -> None:
        told.extend((e.causation_id, p.offset) for e, p in zip(events, positions, strict=True))

    owner = runner(log, unique_topic, on_written=noted)
    await owner.handle(command("t-1", "setup", 1))
    batch = [command("t-1", "a", 2), command("t-1", "b", 30)]
    answers, written = await owner.handle_batch_with(batch, companions)
    assert written and [a.accepted for a in answers] == [True, False]
    assert folded == [[("a", True), ("b", False)]]
    assert [r.value for r in await all_records(log, shown)] == [b"a,b"]
    # Somebody else writes the partition behind the owner's back.
    await runner(log, unique_topic).handle(command("t-1", "elsewhere", 6))
    answers, written = await owner.handle_batch_with([command("t-1", "c", 1)], companions)
    assert not written and [r.value for r in await all_records(log, shown)] == [b"a,b"]
    assert answers[0].accepted and [e.sequence for e in answers[0].events] == [5]
    assert (await runner(log, unique_topic).load("t-1")).state == Tally(10, (1, 2, 6, 1))
    # Every record the owner wrote was noted, those of the lost race too where a log without
    # transactions wrote them.
    in_log = [
        (CODEC.decode_event(r.value).causation_id, r.offset)
        for r in await all_records(log, unique_topic)
    ]
    assert sorted(told) == sorted(c for c in in_log if c[0] != "elsewhere")


async def test_a_batch_shown_as_nothing_leaves_the_caller_nothing_to_make(
    log: EventLog, unique_topic: str
) -> None:
    """Companions that make no record are written as surely as any (True): the caller, which
    would make them again of the same answers, has nothing left to make."""

    async def nothing(answers: list[Answer]) -> list[tuple[str, list[OutgoingRecord]]]:
        return []

    owner = runner(log, unique_topic)
    answers, written = await owner.handle_batch_with([command("t-1", "a", 2)], nothing)
    assert written and answers[0].accepted
    answers, written = await owner.handle_batch_with([command("t-1", "b", 3)], None)
    assert not written and answers[0].accepted
