"""A consume loop as a service worker: poll, handle, commit, and know when it has caught up."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from arena_runtime.eventlog import EventLog, Record, TopicPartition
from arena_runtime.host.catchup import CatchUp

log = logging.getLogger(__name__)

Handler = Callable[[list[Record]], Awaitable[None]]

#: Upper bound on how long a stop request waits for the poll in flight.
POLL_TIMEOUT_MS = 250


async def ignore(records: list[Record]) -> None:
    """The handler of a service that consumes its topics but has nothing to do with them yet."""


class ConsumeWorker:
    """Consumes topics as a member of a group and commits after each handled batch.

    Committing only after the handler returns gives at-least-once delivery; the stream rules
    (sequence numbers, idempotent commands) make the redelivery after a crash harmless.
    """

    def __init__(
        self,
        log: EventLog,
        group: str,
        topics: Sequence[str],
        handler: Handler = ignore,
        name: str | None = None,
    ) -> None:
        self.name = name or f"consume:{group}"
        self.group = group
        self.topics = list(topics)
        self._log = log
        self._handler = handler
        self._consumer = log.consumer(group, self.topics)
        self._stopping = asyncio.Event()
        self.catch_up = CatchUp()

    async def start(self) -> None:
        await self.catch_up.snapshot(self._log, self.topics)
        await self._consumer.start()

    async def run(self) -> None:
        try:
            while not self._stopping.is_set():
                records = await self._consumer.poll(timeout_ms=POLL_TIMEOUT_MS)
                await self.catch_up.observe_assignment(self._consumer)
                if not records:
                    continue
                await self._handler(records)
                offsets = _next_offsets(records)
                await self._consumer.commit(offsets)
                self.catch_up.advance(offsets)
        finally:
            await self._consumer.stop()
            positions = self.catch_up.positions
            log.info(
                "%s stopped; committed up to %d record(s) over %d partition(s)",
                self.name,
                sum(positions.values()),
                len(positions),
            )

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return self.catch_up.ready()


def _next_offsets(records: list[Record]) -> dict[TopicPartition, int]:
    offsets: dict[TopicPartition, int] = {}
    for record in records:
        offsets[TopicPartition(record.topic, record.partition)] = record.offset + 1
    return offsets
