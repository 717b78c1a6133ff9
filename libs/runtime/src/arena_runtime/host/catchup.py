"""Readiness of a consumer: has it processed everything that was in the log when it started?"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence

from arena_runtime.eventlog import Consumer, EventLog, TopicPartition

#: How long a member may poll with no partitions before it counts as caught up. On Kafka the
#: assignment arrives a few polls after joining, so "no partitions yet" is not "nothing to do";
#: a member that really has none (more replicas than partitions) is ready after this.
EMPTY_ASSIGNMENT_GRACE_SECONDS = 15.0


class CatchUp:
    """Compares a consumer's processed offsets with the end offsets seen at start-up.

    Only the partitions assigned to this member count: with several replicas in one group each
    catches up on its own share.
    """

    def __init__(self, empty_grace: float = EMPTY_ASSIGNMENT_GRACE_SECONDS) -> None:
        self.targets: dict[TopicPartition, int] = {}
        self.positions: dict[TopicPartition, int] = {}
        self._assignment: frozenset[TopicPartition] = frozenset()
        self._empty_grace = empty_grace
        self._empty_since: float | None = None
        self._polled = False

    async def snapshot(self, log: EventLog, topics: Sequence[str]) -> None:
        """Note the end offsets of the topics now: the target to reach before being ready."""
        for topic in topics:
            for partition, end in (await log.end_offsets(topic)).items():
                self.targets[TopicPartition(topic, partition)] = end

    async def observe_assignment(self, consumer: Consumer) -> None:
        """After a poll: learn the assignment and the committed start of new partitions."""
        assignment = consumer.assignment()
        new = list(assignment - self._assignment) if assignment != self._assignment else []
        # One request each, sent together: in turn they were a round trip per partition. (None
        # is the usual case, after every poll: no gather then.)
        found = await asyncio.gather(*(consumer.committed(tp) for tp in new)) if new else []
        for tp, committed in zip(new, found, strict=True):
            # A pipelined loop commits in the background: what it committed while this awaited
            # is newer, and must not be put back (readiness would then wait for ever).
            self.positions[tp] = max(committed or 0, self.positions.get(tp, 0))
        self._assignment = assignment
        self._polled = True
        if assignment:
            self._empty_since = None
        elif self._empty_since is None:
            self._empty_since = time.monotonic()

    def advance(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Record committed next-offsets."""
        for tp, offset in offsets.items():
            self.positions[tp] = max(offset, self.positions.get(tp, 0))

    def lag(self, partitions: Iterable[TopicPartition] | None = None) -> int:
        """Records between the processed position and the start-up end offset."""
        tps = self._assignment if partitions is None else partitions
        return sum(max(0, self.targets.get(tp, 0) - self.positions.get(tp, 0)) for tp in tps)

    def ready(self) -> bool:
        if not self._polled:
            return False
        if self._assignment:
            return self.lag() == 0
        if not any(self.targets.values()):
            return True  # the log was empty at start: nothing to catch up on
        assert self._empty_since is not None
        return time.monotonic() - self._empty_since >= self._empty_grace
