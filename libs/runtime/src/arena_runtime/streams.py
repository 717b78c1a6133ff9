"""The stream runner: fold a stream's events into state and answer its commands, once each.

A stream is one aggregate (a match, a room, a player's rating). Its events live on one event
topic, keyed by the stream id, so they share a partition; each carries the stream's sequence
number 1, 2, 3 … The rules of docs/architecture.md, made reusable:

* **Next sequence only.** A reader applies an event only if its sequence is the next one for its
  stream; the first event with a given number in log order wins and later ones are ignored.
  Duplicated and replayed deliveries, and a zombie writer that lost a race, change nothing.
* **Whole batches.** The events of one write to a stream share a ``batch_id`` (one command's, or
  those of several commands decided together, see :meth:`StreamRunner.handle_batch`); an event
  after the first of its batch is applied only if its predecessor in the batch was. Otherwise a
  losing writer's longer batch would fill the sequence numbers after a shorter winning one.
* **Idempotent commands.** Every event records the command that caused it (``causation_id``),
  and a rejection is recorded as an ``arena.v1.CommandRejected`` event, so the answer to every
  command id is in the log. A command already answered gets the same answer again and appends
  nothing, even after a restart.
* **The log decides races.** The runner appends a command's events with the next sequence
  numbers, then reads its partition back up to them (or, when they landed right where its read
  had stopped, folds what it wrote: that is what the read would return). If another writer's
  events took those numbers first, ours are ignored like everyone else's and the command is
  decided again on the state that won.

A runner keeps every stream of the partitions it has touched in memory and reads each
partition forward from where it stopped.

Once it has read a partition to its end, a runner decides that partition's commands on what it
holds, without asking the log for the end again: the partition's commands come to one owner, so
nobody else writes there, and if somebody did (a rebalance, a zombie), the race rule above
catches it at the append: the offsets are not the ones that followed the fold, the partition is
read up to them, and the command is decided again. That saves a round trip to the log per
command. An owner that loses a partition calls :meth:`StreamRunner.forget_end`, so that when it
gets it back it reads what the other owner wrote before deciding anything.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import islice
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message
from opentelemetry.trace import SpanKind

from arena_runtime import metrics, telemetry
from arena_runtime.envelope import CODEC, Codec, Command, Event, new_id, now
from arena_runtime.eventlog.base import (
    AppendConflictError,
    EventLog,
    OutgoingRecord,
    Position,
    Record,
)
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.eventlog.reading import read_forward
from arena_runtime.malformed import decode_or_skip
from arena_runtime.proto_gen.arena.v1.envelope_pb2 import CommandRejected
from arena_runtime.snapshots import (
    PartitionSnapshot,
    Saved,
    SnapshotPolicy,
    SnapshotStore,
    now_ms,
)

S = TypeVar("S")

REJECTED_TYPE = CommandRejected.DESCRIPTOR.full_name
#: Answers a runner keeps per stream by default, the latest ones: the window in which a command
#: delivered again is answered from memory rather than decided again (see StreamRunner).
KEPT_ANSWERS = 1000
#: Rejection code of a command whose ``decide`` raised (a malformed payload, or a bug).
UNDECIDABLE = "undecidable"
#: The ``group`` label of malformed records a runner skips (it reads partitions, not as a group).
STREAM_RUNNER_GROUP = "stream-runner"

log = telemetry.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Rejection:
    """A command the stream refuses; recorded, so a repeat gets the same refusal."""

    code: str
    message: str = ""


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event a decision produces: its payload type and payload (current schema version)."""

    type: str
    payload: Any


#: What ``decide`` returns: the new events (protobuf messages or NewEvent), or a Rejection.
Decision = Sequence[Message | NewEvent] | Rejection
Apply = Callable[[S, Event], S]
Decide = Callable[[S, Command], Decision]


@dataclass(frozen=True, slots=True)
class Answer:
    """The outcome of one command: the events it caused, or its rejection."""

    command_id: str
    stream: str
    events: tuple[Event, ...] = ()
    rejection: Rejection | None = None
    #: True when the command had been answered before and nothing was appended this time.
    repeated: bool = False

    @property
    def accepted(self) -> bool:
        return self.rejection is None


#: What a batch's answers (as folded, before they are written) are shown as elsewhere, written
#: with their events: (topic, records) each (``StreamRunner.handle_batch_with``).
Companions = Callable[[list[Answer]], Awaitable[list[tuple[str, list[OutgoingRecord]]]]]


@dataclass
class StreamView(Generic[S]):
    """A stream as folded so far: its state, last applied sequence, and answered commands."""

    stream: str
    state: S
    sequence: int = 0
    answers: dict[str, Answer] = field(default_factory=dict)
    #: Batch of the last applied event, which only that batch's next event may continue.
    batch_id: str = ""


class StreamConflictError(Exception):
    """A command lost the race for the next sequence numbers on every attempt."""


def is_next(event: Event, last_sequence: int, last_batch_id: str) -> bool:
    """The reading rule: does ``event`` follow a stream whose last applied event had these?"""
    if event.sequence != last_sequence + 1:
        return False
    return event.batch_index == 0 or (event.batch_id != "" and event.batch_id == last_batch_id)


def is_next_place(place: tuple[int, int, str], last_sequence: int, last_batch_id: str) -> bool:
    """:func:`is_next` of an event known by its (sequence, batch_index, batch_id), as
    :func:`~arena_runtime.envelope.place_of` reads them from its headers."""
    sequence, batch_index, batch_id = place
    if sequence != last_sequence + 1:
        return False
    return batch_index == 0 or (batch_id != "" and batch_id == last_batch_id)


class SequenceGate:
    """The reading rule alone: admit an event only if it is its stream's next one.

    For consumers that keep their own read models (projections, fan-out) rather than a runner.
    """

    def __init__(self) -> None:
        self._last: dict[str, tuple[int, str]] = {}

    def last(self, stream: str) -> int:
        return self._last.get(stream, (0, ""))[0]

    def admit(self, event: Event) -> bool:
        if not is_next(event, *self._last.get(event.stream, (0, ""))):
            return False
        self._last[event.stream] = (event.sequence, event.batch_id)
        return True


def fold(initial: S, apply: Apply[S], events: Iterable[Event]) -> tuple[S, int]:
    """Fold one stream's events in log order by the reading rule: (state, last sequence)."""
    state, sequence, batch_id = initial, 0, ""
    for event in events:
        if is_next(event, sequence, batch_id):
            if event.type != REJECTED_TYPE:
                state = apply(state, event)
            sequence, batch_id = event.sequence, event.batch_id
    return state, sequence


class StreamRunner(Generic[S]):
    """Folds and writes the streams of one event topic.

    ``initial(stream_id)`` is a stream's state before its first event; ``apply(state, event)``
    folds one event (it must not fail on an event it has accepted before); ``decide(state,
    command)`` returns the command's new events or a Rejection, and must be pure. If decide
    raises, the command is rejected with code ``undecidable`` (and the error logged).

    A stream's answers are kept for its latest ``kept_answers`` commands only: a stream that
    lives long (a ladder, a queue, a player, a room code used again and again) would otherwise
    hold one per command it ever had. A command is delivered again within moments (a client's
    retry, the uncommitted tail of a partition after a restart), far inside that window; one
    older than it is decided again, and its stream's own rules (a match recorded twice, a room
    already joined) refuse what it repeats.
    """

    def __init__(
        self,
        log: EventLog,
        topic: str,
        *,
        initial: Callable[[str], S],
        apply: Apply[S],
        decide: Decide[S],
        codec: Codec = CODEC,
        clock: Callable[[], datetime] = now,
        max_attempts: int = 3,
        read_batch: int = 1000,
        on_written: Callable[[Sequence[Event], Sequence[Position]], None] | None = None,
        kept_answers: int = KEPT_ANSWERS,
        snapshots: SnapshotPolicy[S] | None = None,
    ) -> None:
        if kept_answers < 1:
            raise ValueError("a runner keeps at least one answer per stream")
        self.log = log
        self.topic = topic
        self.initial = initial
        self.apply = apply
        self.decide = decide
        self.codec = codec
        self.clock = clock
        self.max_attempts = max_attempts
        self.read_batch = read_batch
        #: Told of every append of this runner once acknowledged: the events as written, and
        #: where they landed (a cross-stream view, like the lobby directory, folds them so).
        self.on_written = on_written
        self.kept_answers = kept_answers
        self._partitions: int | None = None
        self._next_offset: dict[int, int] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._streams: dict[str, StreamView[S]] = {}
        #: Partitions read to their end, written since only by this runner as far as it knows.
        self._at_end: set[int] = set()
        #: What the service says about snapshots of its streams (None: every stream as records).
        self.snapshots = snapshots
        #: Offset of the first record seen of each stream: where its records start in a snapshot.
        self._first_offset: dict[str, int] = {}
        #: (sequence, batch id) at which each stream was last kept at rest: a stream given new
        #: events since is kept as that rest plus its records after it.
        self._rest_base: dict[str, tuple[int, str]] = {}

    async def _partition_count(self) -> int:
        if self._partitions is None:
            self._partitions = await self.log.partitions(self.topic)
        return self._partitions

    async def partition_of(self, stream: str) -> int:
        return partition_for(stream.encode(), await self._partition_count())

    async def load(self, stream: str) -> StreamView[S]:
        """The stream folded up to the current end of its partition."""
        partition = await self.partition_of(stream)
        async with self._lock(partition):
            await self._catch_up(partition)
        return self._view(stream)

    def forget_end(self, partition: int) -> None:
        """Read ``partition`` to its end before the next command (someone else may write it)."""
        self._at_end.discard(partition)

    def view(self, stream: str) -> StreamView[S] | None:
        """The stream as folded so far, without reading the log; None if never seen."""
        return self._streams.get(stream)

    def position(self, partition: int) -> int | None:
        """The offset of the next record of ``partition`` to fold; None if never read."""
        return self._next_offset.get(partition)

    def stream_count(self) -> int:
        """How many streams are held in memory."""
        return len(self._streams)

    async def catch_up_partition(self, partition: int) -> list[StreamView[S]]:
        """Read one partition to its end (e.g. when it is assigned); returns its streams."""
        count = await self._partition_count()
        async with self._lock(partition):
            await self._catch_up(partition)
        return [
            view
            for stream, view in self._streams.items()
            if partition_for(stream.encode(), count) == partition
        ]

    async def catch_up(self) -> None:
        """Read every partition of the topic up to its end (e.g. before serving reads)."""
        for partition in range(await self._partition_count()):
            async with self._lock(partition):
                await self._catch_up(partition)

    async def handle_record(self, command: Command, record: Record) -> None:
        """``handle`` as a consumer-loop handler (the answer is in the log)."""
        await self.handle(command)

    async def handle(self, command: Command) -> Answer:
        """Answer a command exactly once per command id; see the module docstring."""
        partition = await self.partition_of(command.stream)
        with telemetry.detail_span(
            f"{command.type} handle", attributes={"arena.stream": command.stream}
        ):
            async with self._lock(partition):
                answer = await self._handle_locked(partition, command)
                self._trim_answers((command.stream,))
                return answer

    async def handle_batch(self, commands: Sequence[Command]) -> list[Answer]:
        """Answer several commands, in order, with one append per partition.

        The answers are the ones :meth:`handle` would give them one after the other: each
        command is decided on the state its predecessors' events left, folded here before they
        are written; then all their events go to the log in one append. If the log put them
        anywhere but right after the fold (another writer got in first), the fold is put back,
        the partition read up to them, and every command of the batch is handled alone, so the
        race rule decides as it always does. Each command's events carry its own trace context.

        Only for streams whose ``apply`` returns a new state rather than changing the one it is
        given (the fold is put back by keeping the old states): a ladder, which is changed in
        place, is handled one command at a time.
        """
        answers, _ = await self.handle_batch_with(commands, None)
        return answers

    async def handle_batch_with(
        self, commands: Sequence[Command], companions: Companions | None
    ) -> tuple[list[Answer], bool]:
        """``handle_batch``, with what ``companions`` makes of the answers (before they are
        written: on the fold) appended in the same write as their events, only if those land
        where the fold expects (``EventLog.append_chained``). True: they were (or they were
        none); False (a race lost, several partitions, nothing appended): they were not, and the
        caller makes them on the answers returned.
        """
        answers: dict[int, Answer] = {}
        by_partition: dict[int, list[tuple[int, Command]]] = {}
        for index, command in enumerate(commands):
            partition = await self.partition_of(command.stream)
            by_partition.setdefault(partition, []).append((index, command))
        chained = companions if len(by_partition) == 1 else None
        written = False
        for partition, numbered in by_partition.items():
            async with self._lock(partition):
                handled, written = await self._handle_together(partition, numbered, chained)
                answers.update(handled)
                # After the batch: before, the answers it folds but has not returned could go.
                self._trim_answers({command.stream for _, command in numbered})
        return [answers[index] for index in range(len(commands))], written

    async def _handle_locked(
        self, partition: int, command: Command, appended: set[str] | None = None
    ) -> Answer:
        #: First event id of each batch this call (or the batch it falls back from) appended.
        ours: set[str] = set(appended or ())
        for attempt in range(self.max_attempts):
            if attempt or partition not in self._at_end:
                await self._catch_up(partition)
            view = self._view(command.stream)
            answered = view.answers.get(command.command_id)
            if answered is not None:
                return self._answered(answered, ours)
            events = self._events_for(view, command)
            if not events:
                metrics.series(metrics.COMMANDS, self.topic, "accepted").inc()
                return Answer(command.command_id, command.stream)
            ours.add(events[0].event_id)
            await self._append_and_observe(partition, events)
            answered = view.answers.get(command.command_id)
            if answered is not None:
                return self._answered(answered, ours)
            # Another command's events took our sequence numbers: decide again.
            metrics.series(metrics.COMMANDS, self.topic, "retried").inc()
        raise StreamConflictError(
            f"{command.stream}: command {command.command_id} lost {self.max_attempts} races"
        )

    async def _handle_together(
        self,
        partition: int,
        numbered: list[tuple[int, Command]],
        companions: Companions | None = None,
    ) -> tuple[dict[int, Answer], bool]:
        if partition not in self._at_end:
            await self._catch_up(partition)
        answers: dict[int, Answer] = {}
        #: Each stream's fold before this batch touched it, to put back if the append races.
        before: dict[str, tuple[S, int, str]] = {}
        #: Per stream, the batch its events in this append form, and its next index.
        chains: dict[str, tuple[str, int]] = {}
        exporting = telemetry.exporting()
        tentative: list[tuple[int, Command]] = []
        written: list[Event] = []
        for index, command in numbered:
            view = self._view(command.stream)
            answered = view.answers.get(command.command_id)
            if answered is not None:  # before, or earlier in this batch (delivered twice)
                answers[index] = self._answered(answered, set())
                continue
            # A stream's events in one append form one batch, so that if the first command's
            # events lose a race, those decided on them are ignored with them (the reading rule)
            # instead of landing on a state they were not decided on.
            batch_id, first = chains.get(view.stream, ("", 0))
            # Unexported, no span and no context: only what is logged in decide needs the
            # command's trace (its events carry the command's strings as they are).
            with (
                telemetry.detail_span(
                    f"{command.type} handle",
                    context=telemetry.context_of(command.traceparent, command.tracestate),
                    attributes={"arena.stream": command.stream},
                )
                if exporting
                else telemetry.carrying(
                    telemetry.carried_of(command.traceparent, command.tracestate)
                )
            ):
                # Made with their batch and their command's trace: no copy of each event after.
                traced = self._events_for(view, command, batch_id, first, traced=True)
            if not traced:
                metrics.series(metrics.COMMANDS, self.topic, "accepted").inc()
                answers[index] = Answer(command.command_id, command.stream)
                continue
            before.setdefault(view.stream, (view.state, view.sequence, view.batch_id))
            chains[view.stream] = (traced[0].batch_id, first + len(traced))
            for event in traced:
                self._observe_event(event)
            tentative.append((index, command))
            written.extend(traced)
        if not written:
            return answers, False
        then: list[tuple[str, list[OutgoingRecord]]] = []
        if companions is not None:
            streams = self._streams
            then = await companions(
                [
                    answers[index]
                    if index in answers
                    else streams[command.stream].answers[command.command_id]
                    for index, command in numbered
                ]
            )

        def put_back() -> None:
            for stream, (state, sequence, batch_id) in before.items():
                view = self._streams[stream]
                view.state, view.sequence, view.batch_id = state, sequence, batch_id
            for _, command in tentative:
                self._streams[command.stream].answers.pop(command.command_id, None)

        try:
            _, positions = await self._append_events(partition, written, then=then)
        except AppendConflictError as conflict:
            # Lost a race, found by the log itself (nothing chained was written).
            put_back()
            positions = conflict.positions
        except BaseException:
            put_back()  # nothing acknowledged: the fold must not hold what the log may not
            self.forget_end(partition)  # … though it may have them: read before deciding again
            raise
        else:
            if self._follows_fold(partition, positions):
                for index, command in tentative:
                    answer = self._streams[command.stream].answers[command.command_id]
                    outcome = "accepted" if answer.accepted else "rejected"
                    metrics.series(metrics.COMMANDS, self.topic, outcome).inc()
                    answers[index] = answer
                return answers, companions is not None
            put_back()
        if positions:
            await self._catch_up(partition, max(p.offset for p in positions) + 1)
        else:
            await self._catch_up(partition)
        # Lost a race: the whole batch again, one by one, as handle() would have done it (what
        # this batch wrote and won is found answered, and counts as ours).
        ours = {event.event_id for event in written if event.batch_index == 0}
        return {
            index: await self._handle_locked(partition, command, ours)
            for index, command in numbered
        }, False

    # -- snapshots (arena_runtime.snapshots) -----------------------------------------------

    async def take_snapshot(self, partition: int) -> PartitionSnapshot | None:
        """A snapshot of ``partition`` as folded so far; None if it was never read.

        Only the list of streams is taken under the partition's lock; the records of the streams
        not at rest are then read from the log, which does not change below the position.
        """
        count = await self._partition_count()
        policy = self.snapshots
        async with self._lock(partition):
            if partition not in self._next_offset:
                return None
            position = self._next_offset[partition]
            resting: list[tuple[str, int, str]] = []
            live: set[str] = set()
            #: Streams kept as their state: (stream, sequence, batch, encoder, answers' events).
            captured: list[tuple[str, int, str, Callable[[], bytes], list[Event]]] = []
            capture = policy.capture if policy is not None else None
            start = position
            for stream, view in self._streams.items():
                if partition_for(stream.encode(), count) != partition:
                    continue
                if (
                    policy is not None
                    and policy.at_rest is not None
                    and not view.answers
                    and policy.at_rest(view.state)
                ):
                    resting.append((stream, view.sequence, view.batch_id))
                    self._rest_base[stream] = (view.sequence, view.batch_id)
                    self._first_offset.pop(stream, None)
                elif capture is not None and (encoder := capture(view.state)) is not None:
                    # Its state, not its history; with its answers' events, so that a command
                    # delivered again is answered as before. Encoded after the lock.
                    answered = [e for answer in view.answers.values() for e in answer.events]
                    captured.append((stream, view.sequence, view.batch_id, encoder, answered))
                else:
                    base = self._rest_base.get(stream)
                    if base is not None:  # back from rest: the rest, then its records since
                        resting.append((stream, *base))
                    live.add(stream)
                    start = min(start, self._first_offset.get(stream, position))
        states = []
        if captured:

            def encode_all() -> list[tuple[str, int, str, bytes, tuple[bytes, ...]]]:
                encode_event = self.codec.encode_event
                return [
                    (stream, sequence, batch, encoder(), tuple(map(encode_event, answered)))
                    for stream, sequence, batch, encoder, answered in captured
                ]

            # In a worker thread: a long ladder's encoding would hold the service's loop.
            states = await asyncio.to_thread(encode_all)
        keys = {stream.encode() for stream in live}
        records: list[tuple[int, bytes]] = []
        check = 0
        async for batch in read_forward(
            self.log, self.topic, partition, start, position, self.read_batch
        ):
            for record in batch:
                if record.offset >= position:
                    break
                if record.key in keys:
                    records.append((record.offset, record.value))
                if record.offset == position - 1:
                    check = zlib.crc32(record.value)
        if position and start >= position:
            check = await self._check_at(partition, position)
        return PartitionSnapshot(
            topic=self.topic,
            partition=partition,
            partitions=count,
            version=policy.version if policy is not None else "",
            position=position,
            check=check,
            resting=tuple(sorted(resting)),
            records=tuple(records),
            taken_ms=now_ms(),
            states=tuple(sorted(states)),
        )

    async def resume_partition(self, partition: int, snapshot: PartitionSnapshot) -> bool:
        """Take ``partition``'s streams from ``snapshot`` if it is valid for this runner and
        the partition has not been read yet; then :meth:`catch_up_partition` reads the tail.

        False, and nothing changed, if the snapshot is for another topic, partition, partition
        count or policy version, is ahead of the log, or the log no longer holds at its position
        the record it was taken after (the log was rebuilt): the partition is then replayed.
        """
        count = await self._partition_count()
        policy = self.snapshots
        version = policy.version if policy is not None else ""
        if (
            snapshot.topic != self.topic
            or snapshot.partition != partition
            or snapshot.partitions != count
            or snapshot.version != version
        ):
            return False
        if snapshot.resting and (policy is None or policy.rest is None):
            return False
        kept: list[StreamView[S]] = []
        if snapshot.states:
            decode = policy.decode if policy is not None else None
            if decode is None:
                return False
            try:  # every state decoded before anything changes: a bad one means a replay
                for stream, sequence, batch_id, state, answered in snapshot.states:
                    view = StreamView(stream, decode(stream, state), sequence, {}, batch_id)
                    for value in answered:
                        _note_answer(view, self.codec.decode_event(value))
                    kept.append(view)
            except Exception:
                log.warning("snapshot state unreadable; replaying", topic=self.topic, exc_info=True)
                return False
        async with self._lock(partition):
            if partition in self._next_offset or any(
                partition_for(stream.encode(), count) == partition for stream in self._streams
            ):
                return False  # already read (a partition regained): its own tail is shorter
            end = await self.log.end_offset(self.topic, partition)
            if snapshot.position > end:
                return False
            if (
                snapshot.position
                and await self._check_at(partition, snapshot.position) != snapshot.check
            ):
                return False
            for view in kept:
                self._streams[view.stream] = view
            rest = policy.rest if policy is not None else None
            for stream, sequence, batch_id in snapshot.resting:
                assert rest is not None
                self._streams[stream] = StreamView(stream, rest(stream), sequence, {}, batch_id)
                self._rest_base[stream] = (sequence, batch_id)
            touched = set()
            for offset, value in snapshot.records:
                record = Record(self.topic, partition, offset, None, value)
                event = decode_or_skip(self.codec.decode_event, record, STREAM_RUNNER_GROUP)
                if event is not None:
                    self._first_offset.setdefault(event.stream, offset)
                    self._observe_event(event)
                    touched.add(event.stream)
            self._trim_answers(touched)
            self._next_offset[partition] = snapshot.position
        return True

    async def gain_partition(
        self, partition: int, store: SnapshotStore | None
    ) -> tuple[list[StreamView[S]], bool]:
        """Read ``partition`` to its end starting from its newest valid snapshot in ``store``
        (then only the tail is read), or from its start. Returns its streams, and whether a
        snapshot was used."""
        resumed = False
        if store is not None and partition not in self._next_offset:
            snapshot = await store.load(partition)
            if snapshot is not None:
                resumed = await self.resume_partition(partition, snapshot)
                if resumed:
                    metrics.set_snapshot_age(self.topic, partition, snapshot.taken_ms)
            if not resumed:
                log.info("no valid snapshot; replaying", topic=self.topic, partition=partition)
            metrics.SNAPSHOT_LOADS.labels(self.topic, "snapshot" if resumed else "replay").inc()
        return await self.catch_up_partition(partition), resumed

    async def save_snapshot(self, partition: int, store: SnapshotStore) -> Saved | None:
        """Take a snapshot of ``partition`` and save it in ``store``; None if never read."""
        started = time.perf_counter()
        snapshot = await self.take_snapshot(partition)
        if snapshot is None:
            return None
        saved = await store.save(snapshot)
        metrics.SNAPSHOT_SECONDS.labels(self.topic).observe(time.perf_counter() - started)
        metrics.SNAPSHOT_BYTES.labels(self.topic, str(partition)).set(saved.bytes)
        metrics.set_snapshot_age(self.topic, partition, snapshot.taken_ms)
        return saved

    async def _check_at(self, partition: int, position: int) -> int:
        """CRC-32 of the value of the record at ``position - 1`` (-1 if the log lacks it)."""
        records = await self.log.read(self.topic, partition, position - 1, 1)
        if not records or records[0].offset != position - 1:
            return -1
        return zlib.crc32(records[0].value)

    # -- internals ------------------------------------------------------------------------

    def _answered(self, answer: Answer, ours: set[str]) -> Answer:
        if answer.events and answer.events[0].event_id in ours:
            metrics.series(
                metrics.COMMANDS, self.topic, "accepted" if answer.accepted else "rejected"
            ).inc()
            return answer
        metrics.series(metrics.COMMANDS, self.topic, "repeated").inc()
        return replace(answer, repeated=True)

    def forget_answers(self, stream: str, at_rest: Callable[[S], bool]) -> bool:
        """Drop every answer ``stream`` holds if ``at_rest(state)``; commands to it are then
        decided again. For a stream long past its last command (a room closed minutes ago),
        whose commands are delivered again within moments if at all.

        False, and nothing dropped, while a command of its partition is being decided (its
        answers may be pending): try again later.
        """
        view = self._streams.get(stream)
        if view is None or self._partitions is None:
            return True
        if self._lock(partition_for(stream.encode(), self._partitions)).locked():
            return False
        if at_rest(view.state):
            view.answers = {}
        return True

    def _trim_answers(self, streams: Iterable[str]) -> None:
        """Keep the latest ``kept_answers`` answers of each of ``streams``, oldest out first.

        Only where no answer is pending: under the partition's lock, outside a batch."""
        keep = self.kept_answers
        for stream in streams:
            answers = self._streams[stream].answers
            excess = len(answers) - keep
            if excess > 0:
                for command_id in list(islice(answers, excess)):
                    del answers[command_id]

    def _lock(self, partition: int) -> asyncio.Lock:
        return self._locks.setdefault(partition, asyncio.Lock())

    def _view(self, stream: str) -> StreamView[S]:
        view = self._streams.get(stream)
        if view is None:
            view = self._streams[stream] = StreamView(stream, self.initial(stream))
        return view

    def _events_for(
        self,
        view: StreamView[S],
        command: Command,
        batch_id: str = "",
        first: int = 0,
        traced: bool = False,
    ) -> list[Event]:
        """The events ``command`` decides on ``view``: in batch ``batch_id`` (a new one if "")
        from index ``first``; ``traced``: carrying the command's trace context."""
        try:
            decision = self.decide(view.state, command)
        except Exception:
            # decide is pure, so it would fail the same way on every redelivery: answer with a
            # rejection rather than stop the partition behind one poisoned command.
            log.exception(
                "decide failed; command rejected",
                stream=command.stream,
                command_id=command.command_id,
                command_type=command.type,
            )
            decision = Rejection(UNDECIDABLE, "the command could not be decided")
        if isinstance(decision, Rejection):
            decided: Sequence[Message | NewEvent] = [
                CommandRejected(
                    command_id=command.command_id,
                    command_type=command.type,
                    code=decision.code,
                    message=decision.message,
                )
            ]
        else:
            decided = decision
        moment = self.clock()
        batch_id = batch_id or new_id()
        traceparent, tracestate = (command.traceparent, command.tracestate) if traced else ("", "")
        events = []
        for number, item in enumerate(decided, start=view.sequence + 1):
            if isinstance(item, NewEvent):
                type_, payload = item.type, item.payload
            else:
                type_, payload = self.codec.schemas.type_of(item), item
            events.append(
                Event(
                    event_id=new_id(),
                    stream=command.stream,
                    sequence=number,
                    type=type_,
                    payload=payload,
                    time=moment,
                    causation_id=command.command_id,
                    correlation_id=command.correlation_id or command.command_id,
                    traceparent=traceparent,
                    tracestate=tracestate,
                    batch_id=batch_id,
                    batch_index=first + number - view.sequence - 1,
                )
            )
        return events

    async def _append_and_observe(self, partition: int, events: list[Event]) -> None:
        """Append one command's events, then fold the partition up to them.

        If they landed right where the fold had stopped, nothing else was appended in between and
        a read would return exactly the records just written: fold those instead of reading them
        back (one round trip less per command). Otherwise read the partition up to them, so
        whatever got in first is folded first.
        """
        written, positions = await self._append_events(partition, events, traced=False)
        if not self._follows_fold(partition, positions):
            await self._catch_up(partition, max(p.offset for p in positions) + 1)
            return
        # The events as written, not decoded back from their records: the same values.
        for event in written:
            self._observe_event(event)

    def _follows_fold(self, partition: int, positions: Sequence[Position]) -> bool:
        """Did an append land right where the fold of its partition had stopped (nobody else
        wrote in between)? If so the fold's read position moves past it."""
        start = self._next_offset.get(partition, 0)
        if [position.offset for position in positions] != list(
            range(start, start + len(positions))
        ):
            return False
        self._next_offset[partition] = start + len(positions)
        return True

    async def _append_events(
        self,
        partition: int,
        events: list[Event],
        traced: bool = True,
        then: Sequence[tuple[str, Sequence[OutgoingRecord]]] = (),
    ) -> tuple[list[Event], list[Position]]:
        """Append events to one partition in one call; returns them as written.

        Unless ``traced`` (each carries its own command's context already), the events carry
        the context of the publish span. Traced, each trace among the events gets a publish span
        of its own (commands of several moves handled together are appended at once).
        """
        attributes = {
            "messaging.system": "kafka",
            "messaging.operation.type": "send",
            "messaging.destination.name": self.topic,
            "messaging.destination.partition.id": str(partition),
            "messaging.batch.message_count": len(events),
        }
        publish: AbstractContextManager[object]
        if traced:
            # The events' distinct traces are only looked for while spans are exported: this
            # is every move's append.
            parents = (
                [
                    telemetry.context_of(*c)
                    for c in dict.fromkeys((e.traceparent, e.tracestate) for e in events)
                ]
                if telemetry.exporting()
                else []
            )
            publish = telemetry.record_spans(
                f"{self.topic} publish", parents, attributes, kind=SpanKind.PRODUCER
            )
        else:
            publish = telemetry.detail_span(
                f"{self.topic} publish", kind=SpanKind.PRODUCER, attributes=attributes
            )
        with publish:
            if not traced:
                traceparent, tracestate = telemetry.current_trace()
                events = [
                    replace(event, traceparent=traceparent, tracestate=tracestate)
                    for event in events
                ]
            records = []
            for event in events:
                record = self.codec.event_record(event)
                records.append(OutgoingRecord(record.value, record.key, record.headers, partition))
            if then:
                expected = self._next_offset.get(partition, 0)
                try:
                    positions = await self.log.append_chained(self.topic, records, expected, then)
                except AppendConflictError as conflict:
                    # A log without transactions wrote them all the same, elsewhere: noted as
                    # any append is (``on_written``), before the race is handled.
                    if conflict.positions:
                        self._written(events, conflict.positions)
                    raise
            else:
                positions = await self.log.append(self.topic, records)
        self._written(events, positions)
        return events, positions

    def _written(self, events: list[Event], positions: list[Position]) -> None:
        for event, position in zip(events, positions, strict=True):
            self._first_offset.setdefault(event.stream, position.offset)
        metrics.series(metrics.RECORDS_APPENDED, self.topic).inc(len(events))
        if self.on_written is not None:
            self.on_written(events, positions)

    async def _catch_up(self, partition: int, until: int | None = None) -> None:
        to_end = until is None
        if until is None:
            until = await self.log.end_offset(self.topic, partition)
        start = self._next_offset.get(partition, 0)
        async for records in read_forward(
            self.log, self.topic, partition, start, until, self.read_batch
        ):
            touched = set()
            for record in records:
                event = decode_or_skip(self.codec.decode_event, record, STREAM_RUNNER_GROUP)
                if event is not None:
                    self._first_offset.setdefault(event.stream, record.offset)
                    self._observe_event(event)
                    touched.add(event.stream)
            self._next_offset[partition] = records[-1].offset + 1
            # Chunk by chunk, so that folding a long history never holds all of its answers.
            self._trim_answers(touched)
        if to_end:
            self._at_end.add(partition)

    def _observe_event(self, event: Event) -> None:
        view = self._view(event.stream)
        if not is_next(event, view.sequence, view.batch_id):
            metrics.series(metrics.STREAM_EVENTS_IGNORED, self.topic).inc()
            return
        view.sequence, view.batch_id = event.sequence, event.batch_id
        if event.type != REJECTED_TYPE:
            view.state = self.apply(view.state, event)
        _note_answer(view, event)


def _note_answer(view: StreamView[Any], event: Event) -> None:
    """Add an applied event (or a rejection) to the answer of the command that caused it."""
    if event.type == REJECTED_TYPE:
        rejected = event.payload
        view.answers[rejected.command_id] = Answer(
            rejected.command_id, event.stream, (event,), Rejection(rejected.code, rejected.message)
        )
    elif event.causation_id:
        previous = view.answers.get(event.causation_id)
        caused = (*previous.events, event) if previous is not None else (event,)
        view.answers[event.causation_id] = Answer(event.causation_id, event.stream, caused)
