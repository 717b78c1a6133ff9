"""Fan-out: every gateway instance reads every partition of the event topics and hands each event
to the :class:`Hub`, which pushes it to the local sockets that watch its stream.

The reader is the only member of a consumer group of its own (``gateway.fanout.<instance>``), so
it is assigned every partition; it never commits, and it starts from the end offsets it found at
start-up (earlier records are skipped), so two instances each see every new event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from arena_runtime import telemetry
from arena_runtime.envelope import CODEC, EnvelopeError, Event
from arena_runtime.eventlog import EventLog, TopicPartition

log = telemetry.get_logger(__name__)

POLL_TIMEOUT_MS = 250

Deliver = Callable[[Event], Awaitable[None]]


class FanoutReader:
    """A worker (arena_runtime.host.Worker) feeding every new event of ``topics`` to ``deliver``,
    and calling ``settle`` after each batch read."""

    def __init__(
        self,
        log: EventLog,
        instance: str,
        topics: Sequence[str],
        deliver: Deliver,
        settle: Callable[[], None] = lambda: None,
    ) -> None:
        self.name = "gateway:fanout"
        self.topics = list(topics)
        self._log = log
        self._deliver = deliver
        self._settle = settle
        self._consumer = log.consumer(f"gateway.fanout.{instance}", self.topics)
        self._start: dict[TopicPartition, int] = {}
        self._positioned: set[TopicPartition] = set()
        self._partitions = 0
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        for topic in self.topics:
            for partition, end in (await self._log.end_offsets(topic)).items():
                self._start[TopicPartition(topic, partition)] = end
        self._partitions = len(self._start)
        await self._consumer.start()

    async def run(self) -> None:
        try:
            while not self._stopping.is_set():
                await self._position()
                records = await self._consumer.poll(timeout_ms=POLL_TIMEOUT_MS)
                for record in records:
                    tp = TopicPartition(record.topic, record.partition)
                    if record.offset < self._start.get(tp, 0):
                        continue  # before this instance started: its clients never saw it
                    try:
                        event = CODEC.decode_event(record.value)
                    except EnvelopeError as exc:
                        log.warning("fan-out skipped a record", reason=exc.reason, topic=tp.topic)
                        continue
                    try:
                        await self._deliver(event)
                    except Exception:
                        # One bad push must not stop every other client's events.
                        log.exception("fan-out delivery failed", stream=event.stream)
                self._settle()
        finally:
            await self._consumer.stop()

    async def _position(self) -> None:
        for tp in self._consumer.assignment() - self._positioned:
            await self._consumer.seek(tp, self._start.get(tp, 0))
            self._positioned.add(tp)

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        """Ready once every partition is assigned to this reader and read from its start."""
        return self._partitions > 0 and len(self._positioned) == self._partitions
