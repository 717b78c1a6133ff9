"""The consume loop as a service worker, and knowing when it has caught up.

Decoding, skipping malformed records, tracing and committing are the runtime's ConsumerLoop; this
adds what a service host needs on top: a stop request between polls, and readiness, learnt by
watching the offsets the loop commits.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from arena_runtime import metrics, telemetry
from arena_runtime.consumer_loop import BatchHandler, ConsumerLoop, Handler
from arena_runtime.envelope import CODEC, Codec, Command, Event
from arena_runtime.eventlog import Consumer, EventLog, Record, TopicPartition
from arena_runtime.host.catchup import CatchUp

log = telemetry.get_logger(__name__)

T = TypeVar("T")

#: Upper bound on how long a stop request waits for the poll in flight.
POLL_TIMEOUT_MS = 250


async def ignore(item: Any, record: Record) -> None:
    """The handler of a service that consumes its topics but has nothing to do with them yet."""


class ConsumeWorker(Generic[T]):
    """One member of a consumer group, feeding decoded records to a handler.

    Offsets are committed after the records are handled (at least once); the stream rules
    (sequence numbers, idempotent commands) make a redelivery after a crash harmless.
    """

    def __init__(
        self,
        log: EventLog,
        group: str,
        topics: Sequence[str],
        decode: Callable[[bytes], T],
        handler: Handler[T] = ignore,
        name: str | None = None,
        concurrent_partitions: bool = False,
        batch_handler: BatchHandler[T] | None = None,
        pipelined: bool = False,
        on_gain: Callable[[int], Awaitable[object]] | None = None,
        linger: float = 0.0,
        skip: Callable[[Record], bool] | None = None,
    ) -> None:
        """``on_gain(partition)``: run for each partition of the first topic when the group
        gives it to this member, before the member counts as ready (a stream runner reading the
        partition's streams then, not at the first command that needs them: see run).

        ``linger`` (seconds): after a poll that found records but did not fill a batch, wait
        this long before the next, so that a member nobody waits on (one reading every move's
        events for a game's end) handles many moves per poll, commit and wake-up instead of
        one. Zero for members on a player's path.

        ``skip``: the records to commit past unread (see ConsumerLoop), for a handler that acts
        on a few of its topics' types (an :class:`~arena_runtime.envelope.TypeFilter`)."""
        self.name = name or f"consume:{group}"
        self.group = group
        self.topics = list(topics)
        self.catch_up = CatchUp()
        self._log = log
        self._consumer = CommitWatcher(log.consumer(group, self.topics), self.catch_up, group)
        self._loop = ConsumerLoop(
            self._consumer,
            group=group,
            decode=decode,
            handler=None if batch_handler is not None else handler,
            batch_handler=batch_handler,
            poll_timeout_ms=POLL_TIMEOUT_MS,
            concurrent_partitions=concurrent_partitions,
            commit_behind=True,
            pipelined=pipelined,
            skip=skip,
        )
        self._stopping = asyncio.Event()
        self._linger = linger
        self._on_gain = on_gain
        #: Partitions of the first topic on_gain has run for since this member got them.
        self._gained: set[int] = set()

    async def start(self) -> None:
        await self.catch_up.snapshot(self._log, self.topics)
        await self._consumer.start()

    async def run(self) -> None:
        try:
            while not self._stopping.is_set():
                handled = await self._loop.run_once()
                await self.catch_up.observe_assignment(self._consumer)
                await self._load_gained()
                self.after_poll()
                if self._linger and 0 < handled < self._loop.max_records:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stopping.wait(), self._linger)
        finally:
            await self._loop.flush_at_stop()
            await self._consumer.stop()
            log.info(
                "worker stopped", worker=self.name, committed=_describe(self.catch_up.positions)
            )

    async def _load_gained(self) -> None:
        """Run on_gain for the partitions gained since the last poll. A long history read at
        the first command after a restart held the shared loop while players played (the
        rating service's ladder: issue 12's slow move after a game ended); read at the gain,
        it is done while the service is not ready yet, or beside no waiting command."""
        if self._on_gain is None:
            return
        owned = self.assigned(self.topics[0])
        self._gained &= owned
        for partition in sorted(owned - self._gained):
            await self._on_gain(partition)
            self._gained.add(partition)

    def after_poll(self) -> None:
        """Called between polls: a subclass follows the group's assignment here."""

    def assigned(self, topic: str) -> set[int]:
        """The partitions of ``topic`` the group gives this member now."""
        return {tp.partition for tp in self._consumer.assignment() if tp.topic == topic}

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        if not self.catch_up.ready():
            return False
        return self._on_gain is None or self._gained >= self.assigned(self.topics[0])


def command_worker(
    log: EventLog,
    service: str,
    topics: Sequence[str],
    handler: Handler[Command] = ignore,
    concurrent_partitions: bool = False,
    on_gain: Callable[[int], Awaitable[object]] | None = None,
) -> ConsumeWorker[Command]:
    """The service's member of its command group (named after the service); ``on_gain``: see
    ConsumeWorker (a stream runner's ``catch_up_partition``: a command partition and its
    streams' event partition have the same number)."""
    return ConsumeWorker(
        log,
        service,
        topics,
        CODEC.decode_command,
        handler,
        name=f"{service}:commands",
        concurrent_partitions=concurrent_partitions,
        on_gain=on_gain,
    )


def event_worker(
    log: EventLog,
    service: str,
    topics: Sequence[str],
    handler: Handler[Event] = ignore,
    *,
    codec: Codec = CODEC,
    linger: float = 0.0,
    skip: Callable[[Record], bool] | None = None,
) -> ConsumeWorker[Event]:
    """The service's member of its event group, ``<service>.events``.

    A group of its own, apart from the commands, so each group's members share one subscription.
    ``codec`` decodes the events (a reader of another registry: e.g. the games' legacy types
    read as the types they became); ``linger``, ``skip``: see ConsumeWorker.
    """
    return ConsumeWorker(
        log,
        f"{service}.events",
        topics,
        codec.decode_event,
        handler,
        name=f"{service}:events",
        linger=linger,
        skip=skip,
    )


class CommitWatcher(Consumer):
    """A consumer that reports every successful commit to a CatchUp.

    Readiness is learnt from the offsets a worker commits, so a worker that drives its own
    ConsumerLoop wraps its consumer in this and reads ``catch_up.ready()``. Everything else is
    passed to the wrapped consumer unchanged.
    """

    def __init__(self, inner: Consumer, catch_up: CatchUp, group: str = "") -> None:
        self._inner = inner
        self._catch_up = catch_up
        self._watch = metrics.ConsumerWatch(group or getattr(inner, "group", ""))

    async def start(self) -> None:
        await self._inner.start()

    async def stop(self) -> None:
        await self._inner.stop()
        self._watch.close()

    async def poll(self, timeout_ms: int = 1000, max_records: int = 500) -> list[Record]:
        records = await self._inner.poll(timeout_ms, max_records)
        await self._watch.observe(self._inner, len(records))
        return records

    async def lag(self) -> dict[TopicPartition, int]:
        return await self._inner.lag()

    async def commit(self, offsets: Mapping[TopicPartition, int] | None = None) -> None:
        await self._inner.commit(offsets)
        if offsets is not None:
            self._catch_up.advance(offsets)

    async def committed(self, tp: TopicPartition) -> int | None:
        return await self._inner.committed(tp)

    def assignment(self) -> frozenset[TopicPartition]:
        return self._inner.assignment()

    async def seek(self, tp: TopicPartition, offset: int) -> None:
        await self._inner.seek(tp, offset)


def _describe(positions: Mapping[TopicPartition, int]) -> str:
    moved = {tp: offset for tp, offset in positions.items() if offset}
    if not moved:
        return "0 everywhere"
    ordered = sorted(moved.items(), key=lambda item: (item[0].topic, item[0].partition))
    return ", ".join(f"{tp.topic}/{tp.partition}={offset}" for tp, offset in ordered)
