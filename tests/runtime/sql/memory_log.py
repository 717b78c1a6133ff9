"""A small in-memory EventLog for runner tests that need a log and nothing else of it.

Only the read side (``append``/``read``/``end_offsets``) is implemented; the runner never uses
consumer groups. The real logs are exercised by the tests that take ``event_log``.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena_runtime.eventlog.base import (
    Consumer,
    EventLog,
    OutgoingRecord,
    Position,
    Record,
    TopicSpec,
    UnknownTopicError,
)


class MemoryLog(EventLog):
    def __init__(self) -> None:
        self._topics: dict[str, list[list[Record]]] = {}
        self._clock_ms = 1_700_000_000_000

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        for spec in specs:
            self._topics.setdefault(spec.name, [[] for _ in range(spec.partitions)])

    async def partitions(self, topic: str) -> int:
        return len(self._partitions(topic))

    def _partitions(self, topic: str) -> list[list[Record]]:
        if topic not in self._topics:
            raise UnknownTopicError(topic)
        return self._topics[topic]

    async def append(self, topic: str, records: Sequence[OutgoingRecord]) -> list[Position]:
        partitions = self._partitions(topic)
        positions = []
        for r in records:
            p = r.partition if r.partition is not None else hash(r.key) % len(partitions)
            self._clock_ms += 1
            offset = len(partitions[p])
            partitions[p].append(
                Record(topic, p, offset, r.key, r.value, r.headers, self._clock_ms)
            )
            positions.append(Position(topic, p, offset))
        return positions

    async def read(
        self, topic: str, partition: int, offset: int, max_records: int = 1000
    ) -> list[Record]:
        return self._partitions(topic)[partition][offset : offset + max_records]

    async def end_offsets(self, topic: str) -> dict[int, int]:
        return {p: len(rs) for p, rs in enumerate(self._partitions(topic))}

    def consumer(self, group: str, topics: Sequence[str]) -> Consumer:
        raise NotImplementedError("the projection runner reads partitions directly")
