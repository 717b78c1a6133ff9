"""The projection runner: applies records and stores its offsets in one transaction.

The runner reads every partition of its projection's topics straight from the log, starting at
the offsets stored in ``projection_offsets`` (never a consumer group's commits). Each batch of
one partition is applied and its next offset written in the same SQL transaction, so after a
crash at any moment the projection holds exactly the records before its stored offset: nothing
applied twice, nothing skipped. A step of records the projection passes over
(``Projection.passes_over``: they would write nothing) needs no transaction of its own: their
offsets are stored with the next one, within ``UNSAVED_SECONDS``, and a crash before that only
makes them be read and passed over again.

The offset update is guarded by the offset the batch started from. If another runner of the same
projection (a second replica, or ``arena rebuild`` resetting it) moved the offset meanwhile, the
update matches no row, the batch rolls back and the runner reloads its offsets.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Mapping

from prometheus_client import Counter
from sqlalchemy import Update, and_, bindparam, case, delete, insert, or_, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from arena_runtime import telemetry
from arena_runtime.eventlog.base import EventLog, Record, TopicPartition, UnknownTopicError
from arena_runtime.malformed import report_malformed
from arena_runtime.sql.metadata import projection_offsets
from arena_runtime.sql.projection import Projection, Skipped, check_projection

log = telemetry.get_logger(__name__)

APPLIED = Counter(
    "arena_projection_records_applied", "Records applied by projections", ["projection"]
)
CONFLICTS = Counter(
    "arena_projection_offset_conflicts",
    "Batches rolled back because another runner moved the offset",
    ["projection"],
)


#: How long a runner may hold the offsets of records its projection passed over unsaved, when
#: no transaction of its own comes to store them: what a restart may read again.
UNSAVED_SECONDS = 1.0


class OffsetConflictError(Exception):
    """The stored offset moved under a batch; the batch was rolled back."""


class ProjectionRunner:
    """Keeps one projection up to date with the log."""

    def __init__(
        self,
        projection: Projection,
        log: EventLog,
        sessions: async_sessionmaker[AsyncSession],
        *,
        batch_size: int = 500,
        idle_sleep: float = 0.2,
    ) -> None:
        check_projection(projection)
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.projection = projection
        self._log = log
        self._sessions = sessions
        self._batch_size = batch_size
        self._idle_sleep = idle_sleep
        # Next offset per partition, as stored in SQL; loaded lazily, dropped on conflict.
        self._next: dict[TopicPartition, int] | None = None
        #: Did the last step read a full batch from some partition (so more is waiting)?
        self.filled_a_batch = False
        #: Partitions already reported with a stored offset past the log's end.
        self._ahead: set[TopicPartition] = set()
        #: Per partition whose records were passed over (``Projection.passes_over``) without
        #: storing its offset, the offset stored; and since when (monotonic) any are held.
        self._unsaved: dict[TopicPartition, int] = {}
        self._unsaved_since = 0.0

    @property
    def name(self) -> str:
        return self.projection.name

    @property
    def group(self) -> str:
        """The label this runner's metrics carry where consumer loops put their group."""
        return f"projection:{self.name}"

    async def stored_offsets(self) -> dict[TopicPartition, int]:
        """The offsets in SQL: per partition, the next record to apply."""
        async with self._sessions() as session:
            rows = await session.execute(
                select(
                    projection_offsets.c.topic,
                    projection_offsets.c.partition,
                    projection_offsets.c.next_offset,
                ).where(projection_offsets.c.projection == self.name)
            )
            return {TopicPartition(t, p): o for t, p, o in rows}

    async def end_offsets(self) -> dict[TopicPartition, int]:
        """Per partition of the projection's topics, where the log ends now."""
        ends: dict[TopicPartition, int] = {}
        for topic in self.projection.topics:
            try:
                per_partition = await self._log.end_offsets(topic)
            except UnknownTopicError:
                continue  # not created yet: nothing to apply
            ends.update({TopicPartition(topic, p): o for p, o in per_partition.items()})
        return ends

    async def lag(self) -> int:
        """Records in the log that this projection has not applied yet."""
        stored = await self.stored_offsets()
        ends = await self.end_offsets()
        return sum(max(0, end - stored.get(tp, 0)) for tp, end in ends.items())

    async def step(self) -> int:
        """Apply at most one batch per partition that has new records; return records consumed."""
        return await self._step(await self.end_offsets())

    async def _step(self, ends: Mapping[TopicPartition, int]) -> int:
        offsets = await self._offsets(ends)
        self.filled_a_batch = False
        reads: list[tuple[TopicPartition, int]] = []
        for tp, end in sorted(ends.items(), key=lambda item: (item[0].topic, item[0].partition)):
            start = offsets.get(tp, 0)
            if start > end and tp not in self._ahead:
                self._report_ahead(tp, start, end)
            if start < end:
                reads.append((tp, start))
        # Every partition in one read: the embedded log then makes one trip to its reader
        # thread per step, not one per partition (each trip costs about as much CPU as a row).
        batches: list[tuple[TopicPartition, int, list[Record]]] = []
        for (tp, start), records in zip(
            reads, await self._log.read_partitions(reads, self._batch_size), strict=True
        ):
            if not records:
                continue
            self.filled_a_batch = self.filled_a_batch or len(records) >= self._batch_size
            batches.append((tp, start, records))
        consumed = sum(len(records) for _, _, records in batches)
        if batches and self._passes_over(batches) and not self._unsaved_due():
            self._hold(batches)
            return consumed
        if not batches and not self._unsaved:
            return 0
        # A step with nothing new stores the offsets held unsaved, as does any transaction.
        try:
            with self._spans(batches):
                await self._apply_batches(batches)
        except OffsetConflictError:
            CONFLICTS.labels(self.name).inc()
            self.forget_offsets()
            return 0
        return consumed

    def _passes_over(self, batches: list[tuple[TopicPartition, int, list[Record]]]) -> bool:
        passes_over = self.projection.passes_over
        return all(passes_over(record) for _, _, records in batches for record in records)

    def _unsaved_due(self) -> bool:
        return bool(self._unsaved) and time.monotonic() - self._unsaved_since >= UNSAVED_SECONDS

    def _hold(self, batches: list[tuple[TopicPartition, int, list[Record]]]) -> None:
        """Move past records the projection passes over without a transaction: their offsets
        are stored with the next one (a projection that ignores most of its topics' records
        would otherwise commit a transaction of offsets alone every step)."""
        assert self._next is not None
        if not self._unsaved:
            self._unsaved_since = time.monotonic()
        for tp, start, records in batches:
            self._unsaved.setdefault(tp, start)
            self._next[tp] = records[-1].offset + 1
        APPLIED.labels(self.name).inc(sum(len(records) for _, _, records in batches))

    def _report_ahead(self, tp: TopicPartition, stored: int, end: int) -> None:
        """A stored offset past the end of its partition: the log is not the one these rows
        were applied from (topics made again, an in-memory broker restarted, or the database
        of another deployment). Nothing new is applied until the log passes the offset, so say
        so once, with what to do: the runner cannot know which rows are still true."""
        self._ahead.add(tp)
        log.error(
            "projection offsets are past the end of the log: it is not the log these rows were "
            "applied from; nothing will be applied until it passes them. Rebuild the projection "
            "from this log (arena rebuild --projection NAME)",
            projection=self.name,
            topic=tp.topic,
            partition=tp.partition,
            stored_offset=stored,
            end_offset=end,
        )

    def _spans(
        self, batches: list[tuple[TopicPartition, int, list[Record]]]
    ) -> contextlib.AbstractContextManager[object]:
        """While spans are exported: one per record applied, in the trace of the span that
        wrote it (``<topic> process``, group ``projection:<name>``), around the transaction."""
        stack = contextlib.ExitStack()
        if not telemetry.exporting():
            return stack
        for tp, _, records in batches:
            attributes = {
                "messaging.system": "kafka",
                "messaging.operation.type": "process",
                "messaging.destination.name": tp.topic,
                "messaging.destination.partition.id": str(tp.partition),
                "messaging.consumer.group.name": self.group,
            }
            parents = [telemetry.context_from_headers(record.headers) for record in records]
            stack.enter_context(telemetry.record_spans(f"{tp.topic} process", parents, attributes))
        return stack

    def forget_offsets(self) -> None:
        """Read the stored offsets again before the next step (after a failed transaction)."""
        self._next = None
        self._unsaved.clear()

    async def catch_up(self) -> int:
        """Apply until the projection reaches the end of the log as it is now."""
        targets = await self.end_offsets()
        total = 0
        while True:
            offsets = await self._offsets(targets)
            behind = {tp: end for tp, end in targets.items() if offsets.get(tp, 0) < end}
            if not behind:
                if not self._unsaved:
                    return total
                await self._step({})  # store the offsets of records passed over
                continue
            consumed = await self._step(behind)
            if consumed == 0:
                await asyncio.sleep(0.01)  # another runner holds the offsets: let it move
            total += consumed

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Follow the log until ``stop`` is set (or forever); errors in ``apply`` propagate."""
        stop = stop or asyncio.Event()
        while not stop.is_set():
            if await self.step() == 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self._idle_sleep)

    async def reset(self) -> None:
        """Empty the projection's tables and forget its offsets, in one transaction."""
        async with self._sessions() as session, session.begin():
            for table in reversed(list(self.projection.tables)):
                await session.execute(delete(table))
            await session.execute(
                delete(projection_offsets).where(projection_offsets.c.projection == self.name)
            )
        self.forget_offsets()

    async def rebuild(self) -> int:
        """Reset, then replay the whole log up to its current end; return records consumed."""
        await self.reset()
        return await self.catch_up()

    async def _offsets(self, partitions: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Stored offsets, with a row (at offset 0) made for every partition that lacks one."""
        if self._next is None:
            self.forget_offsets()
            self._next = await self.stored_offsets()
        missing = [tp for tp in partitions if tp not in self._next]
        if missing:
            await self._create_rows(missing)
            self.forget_offsets()
            self._next = await self.stored_offsets()
        return self._next

    async def _create_rows(self, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            try:
                async with self._sessions() as session, session.begin():
                    await session.execute(
                        insert(projection_offsets).values(
                            projection=self.name,
                            topic=tp.topic,
                            partition=tp.partition,
                            next_offset=0,
                        )
                    )
            except IntegrityError:
                pass  # another runner of this projection made it first

    async def _apply_batches(self, batches: list[tuple[TopicPartition, int, list[Record]]]) -> None:
        """Every partition's batch of one step in one transaction: under load a step holds a
        few records per partition, and a transaction per partition cost more than its rows."""
        assert self._next is not None
        # Per partition: the stored offset the step starts from and the one it stores.
        moves = {tp: (start, records[-1].offset + 1) for tp, start, records in batches}
        for tp, stored in self._unsaved.items():
            moves[tp] = (stored, moves[tp][1] if tp in moves else self._next[tp])
        try:
            skipped = await self._write_batches(batches, moves)
        except DBAPIError:
            # A runner racing on the same rows can also collide there first (a duplicate key,
            # a deadlock). If a stored offset moved, that race is what happened.
            found = await self.stored_offsets()
            for tp, (start, _) in moves.items():
                if found.get(tp) != start:
                    raise OffsetConflictError(
                        f"{self.name}: {tp.topic}/{tp.partition} moved"
                    ) from None
            raise
        self._unsaved.clear()
        for tp, (_, next_offset) in moves.items():
            self._next[tp] = next_offset
        applied = sum(len(records) for _, _, records in batches) - len(skipped)
        APPLIED.labels(self.name).inc(applied)
        for record, exc in skipped:
            report_malformed(record, self.group, exc)

    async def _write_batches(
        self,
        batches: list[tuple[TopicPartition, int, list[Record]]],
        moves: Mapping[TopicPartition, tuple[int, int]],
    ) -> list[Skipped]:
        # The step's partitions in one call, one after the other: a projection then writes
        # a step in a few statements rather than a few per partition. It may, since a batch
        # must equal its records applied one by one.
        step = [record for _, _, records in batches for record in records]
        async with self._sessions() as session, session.begin():
            skipped = await self.projection.apply_batch(session, step) if step else []
            # Every partition's offset in one statement: under load a step touches most
            # partitions with a few records each, and a statement per partition cost as much
            # as the rows. Each row is guarded by the offset its batch started from.
            params: dict[str, object] = {"k_projection": self.name}
            for i, (tp, (start, next_offset)) in enumerate(moves.items()):
                params.update(
                    {
                        f"topic_{i}": tp.topic,
                        f"partition_{i}": tp.partition,
                        f"start_{i}": start,
                        f"next_{i}": next_offset,
                    }
                )
            moved = await session.execute(_offsets_update(len(moves)), params)
            if moved.rowcount != len(moves):  # type: ignore[attr-defined]
                raise OffsetConflictError(
                    f"{self.name}: {len(moves) - moved.rowcount} of "  # type: ignore[attr-defined]
                    f"{len(moves)} partitions moved"
                )
        return skipped


@functools.cache
def _offsets_update(partitions: int) -> Update:
    """The UPDATE that moves the offsets of ``partitions`` partitions, from ``start_<i>`` to
    ``next_<i>``. Built once per count and bound by name: building it afresh each step, with
    the values inline, cost more CPU than running it."""
    t = projection_offsets
    offset_type = t.c.next_offset.type
    return (
        update(t)
        .where(
            t.c.projection == bindparam("k_projection"),
            or_(
                *(
                    and_(
                        t.c.topic == bindparam(f"topic_{i}"),
                        t.c.partition == bindparam(f"partition_{i}"),
                        t.c.next_offset == bindparam(f"start_{i}"),
                    )
                    for i in range(partitions)
                )
            ),
        )
        .values(
            next_offset=case(
                *(
                    (
                        and_(
                            t.c.topic == bindparam(f"topic_{i}"),
                            t.c.partition == bindparam(f"partition_{i}"),
                        ),
                        bindparam(f"next_{i}", type_=offset_type),
                    )
                    for i in range(partitions)
                ),
                else_=t.c.next_offset,
            )
        )
    )
