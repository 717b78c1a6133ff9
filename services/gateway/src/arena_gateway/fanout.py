"""Fan-out: every gateway instance reads every partition of the event topics and hands each event
to the :class:`Hub`, which pushes it to the local sockets that watch its stream.

The reader is the only member of a consumer group of its own (``gateway.fanout.<instance>``), so
it is assigned every partition; it never commits, and it starts from the end offsets it found at
start-up (earlier records are skipped), so two instances each see every new event.

Other parts of the gateway add a route of their own topics (:meth:`FanoutReader.route`; accounts
do) instead of running a reader each: every consumer waiting at the tail costs a fetch per
``ARENA_KAFKA_FETCH_WAIT_MS`` on Tansu, and CPU in the broker and here even when nothing happens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from arena_runtime import metrics, telemetry
from arena_runtime.envelope import CODEC, EnvelopeError, Event
from arena_runtime.eventlog import Consumer, EventLog, Record, TopicPartition
from opentelemetry import trace
from opentelemetry.trace import SpanKind

log = telemetry.get_logger(__name__)

POLL_TIMEOUT_MS = 250
#: The group label of the reader's record ages: one series for every instance's own group.
AGE_GROUP = "gateway.fanout"

Deliver = Callable[[Event], Awaitable[None]]
DeliverRecord = Callable[[Record], Awaitable[None]]


@dataclass(frozen=True)
class _Route:
    deliver: Deliver | None
    settle: Callable[[], None]
    #: For topics of records that are not envelopes (arena.match.views): each record as read.
    records: DeliverRecord | None = None


class FanoutReader:
    """A worker (arena_runtime.host.Worker) feeding every new event of ``topics`` to ``deliver``,
    and calling ``settle`` after each batch read; :meth:`route` adds topics of other handlers."""

    def __init__(
        self,
        log: EventLog,
        instance: str,
        topics: Sequence[str],
        deliver: Deliver,
        settle: Callable[[], None] = lambda: None,
    ) -> None:
        self.name = "gateway:fanout"
        self._log = log
        self._group = f"gateway.fanout.{instance}"
        self._routes: dict[str, _Route] = {}
        self._consumer: Consumer | None = None
        self.route(topics, deliver, settle)
        self._start: dict[TopicPartition, int] = {}
        self._positioned: set[TopicPartition] = set()
        self._partitions = 0
        self._stopping = asyncio.Event()
        #: Rebalances and lag under one group label for every instance's own group.
        self._watch = metrics.ConsumerWatch(AGE_GROUP)

    @property
    def topics(self) -> list[str]:
        return list(self._routes)

    def route(
        self, topics: Sequence[str], deliver: Deliver, settle: Callable[[], None] = lambda: None
    ) -> None:
        """Also read ``topics``, handing their events to ``deliver`` (before :meth:`start`)."""
        if self._consumer is not None:
            raise RuntimeError("routes are added before the reader starts")
        for topic in topics:
            if topic in self._routes:
                raise ValueError(f"{topic} already has a route")
            self._routes[topic] = _Route(deliver, settle)

    def route_records(
        self,
        topics: Sequence[str],
        deliver: DeliverRecord,
        settle: Callable[[], None] = lambda: None,
    ) -> None:
        """Also read ``topics``, whose records are not envelopes, handing each to ``deliver``."""
        if self._consumer is not None:
            raise RuntimeError("routes are added before the reader starts")
        for topic in topics:
            if topic in self._routes:
                raise ValueError(f"{topic} already has a route")
            self._routes[topic] = _Route(None, settle, deliver)

    async def start(self) -> None:
        for topic in self._routes:
            for partition, end in (await self._log.end_offsets(topic)).items():
                self._start[TopicPartition(topic, partition)] = end
        self._partitions = len(self._start)
        self._consumer = self._log.consumer(self._group, self.topics, every_partition=True)
        await self._consumer.start()

    async def run(self) -> None:
        consumer = self._started()
        settles = list(dict.fromkeys(route.settle for route in self._routes.values()))
        try:
            while not self._stopping.is_set():
                await self._position(consumer)
                records = await consumer.poll(timeout_ms=POLL_TIMEOUT_MS)
                await self._watch.observe(consumer, len(records))
                for topic in {record.topic for record in records}:
                    stamps = (r.timestamp_ms for r in records if r.topic == topic)
                    metrics.observe_age(topic, AGE_GROUP, stamps)
                for record in records:
                    tp = TopicPartition(record.topic, record.partition)
                    if record.offset < self._start.get(tp, 0):
                        continue  # before this instance started: its clients never saw it
                    route = self._routes[record.topic]
                    if route.records is not None:
                        try:
                            with self._span(record, None):
                                await route.records(record)
                        except Exception:
                            log.exception("fan-out delivery failed", topic=record.topic)
                        continue
                    try:
                        event = CODEC.decode_event(record.value)
                    except EnvelopeError as exc:
                        log.warning("fan-out skipped a record", reason=exc.reason, topic=tp.topic)
                        continue
                    try:
                        with self._span(record, event):
                            assert route.deliver is not None
                            await route.deliver(event)
                    except Exception:
                        # One bad push must not stop every other client's events.
                        log.exception("fan-out delivery failed", stream=event.stream)
                for settle in settles:
                    settle()
        finally:
            await consumer.stop()
            self._watch.close()

    def _span(self, record: Record, event: Event | None) -> AbstractContextManager[object]:
        """The delivery of one record to the sockets, in the trace of the span that wrote it."""
        if not telemetry.exporting():  # no span: its name and attributes would go unused
            carried = telemetry.carried_of_headers(record.headers)
            if carried is None:
                carried = (
                    ("", "")
                    if event is None
                    else telemetry.carried_of(event.traceparent, event.tracestate)
                )
            return telemetry.carrying(carried)
        parent = telemetry.context_from_headers(record.headers)
        if event is not None and not trace.get_current_span(parent).get_span_context().is_valid:
            parent = telemetry.context_of(event.traceparent, event.tracestate)
        return telemetry.detail_span(
            f"{record.topic} process",
            context=parent,
            kind=SpanKind.CONSUMER,
            attributes={
                "messaging.system": "kafka",
                "messaging.operation.type": "process",
                "messaging.destination.name": record.topic,
                "messaging.destination.partition.id": str(record.partition),
                "messaging.kafka.offset": record.offset,
                "messaging.consumer.group.name": AGE_GROUP,
            },
        )

    def _started(self) -> Consumer:
        if self._consumer is None:
            raise RuntimeError("the fan-out reader is not started")
        return self._consumer

    async def _position(self, consumer: Consumer) -> None:
        for tp in consumer.assignment() - self._positioned:
            await consumer.seek(tp, self._start.get(tp, 0))
            self._positioned.add(tp)

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        """Ready once every partition is assigned to this reader and read from its start."""
        return self._partitions > 0 and len(self._positioned) == self._partitions
