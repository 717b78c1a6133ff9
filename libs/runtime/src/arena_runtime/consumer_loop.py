"""The consume loop every service runs: poll, decode, handle, commit.

A record that cannot be decoded (an :class:`~arena_runtime.envelope.EnvelopeError`: undecodable,
unknown type, unsupported schema version) is logged with its topic, partition and offset,
counted in ``arena_malformed_records_total``, skipped, and committed past: one bad record never
stops a consumer. Offsets are committed after the records are handled, so a crash redelivers
what was not handled yet (at least once; the stream rules make redelivery harmless). If the
handler itself raises, the records handled before it are committed and the error propagates:
that is a bug or an outage, and the record is retried when the service restarts. A commit
refused because the group rebalanced meanwhile is logged and the loop goes on: the partition's
new owner handles those records again, which the stream rules make harmless.

With ``concurrent_partitions`` the records of each partition in a poll are handled in order, but
the partitions side by side: a handler that waits on the log (a command handler appends its
answer) then waits once per partition rather than once per record, and the appends of the
partitions meet in one write. Order within a partition is all the stream rules need, since a
stream's commands share a partition; a handler that reads state across partitions must take
its own lock for that.

With ``skip`` (an :class:`~arena_runtime.envelope.TypeFilter`: records of the types a handler
does nothing with, told from their ``ce_type`` header) a record it answers True for is neither
decoded nor handled nor counted, only committed past, as if the handler had passed over it.

A ``batch_handler`` takes each partition's decoded records of a poll at once (the match service
decides them together and writes their events in one append); if it raises, none of that
partition's records of the poll is committed, and all of them come again.

``pipelined`` goes further: each partition has a lane (a queue and a task) that handles its
records in order, and the loop polls again as soon as it has handed a poll's records out, up to
``max_in_flight`` records not yet handled. A partition that waits (the matchmaking service's
directory lock) then holds up only itself. Offsets are committed behind, as each lane finishes
a batch; a lane's failure stops the loop at its next poll, and what the other lanes finished is
committed.

With ``commit_behind`` a poll's offsets are committed by a background task while the next poll
is already handled: the commit is a round trip to the log that used to sit between every two
polls of a busy consumer. One commit is in flight at a time (offsets only ever move forward);
what a crash leaves uncommitted is redelivered, as before. A handler's failure, a cancellation
and :meth:`ConsumerLoop.flush` (call it before stopping the consumer) still commit at once.
Background commits are at least ``COMMIT_INTERVAL_S`` apart: a busy member's polls come one
move apart, and a commit each was a write to the log and a task each time; what waits is
redelivered after a crash, which the stream rules make harmless.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from opentelemetry import context as otel_context
from opentelemetry.trace import SpanKind

from arena_runtime import metrics, telemetry
from arena_runtime.eventlog.base import CommitFailedError, Consumer, Record, TopicPartition
from arena_runtime.malformed import decode_or_skip

T = TypeVar("T")
#: A handler's result is ignored, so one that answers (a command handler) fits as it is.
Handler = Callable[[T, Record], Awaitable[object]]
#: Takes the decoded records of one partition from one poll, in order.
BatchHandler = Callable[[list[tuple[T, Record]]], Awaitable[object]]

log = telemetry.get_logger(__name__)

#: The least time between two background commits of one member (see the module's docstring).
COMMIT_INTERVAL_S = 0.05
#: How long a stopping member waits for its last commit.
STOP_COMMIT_SECONDS = 5.0


class ConsumerLoop(Generic[T]):
    """Feeds decoded records of one consumer-group member to ``handler``, in partition order."""

    def __init__(
        self,
        consumer: Consumer,
        *,
        group: str,
        decode: Callable[[bytes], T],
        handler: Handler[T] | None = None,
        batch_handler: BatchHandler[T] | None = None,
        poll_timeout_ms: int = 500,
        max_records: int = 500,
        concurrent_partitions: bool = False,
        commit_behind: bool = False,
        pipelined: bool = False,
        max_in_flight: int = 2000,
        skip: Callable[[Record], bool] | None = None,
    ) -> None:
        self.consumer = consumer
        self.skip = skip
        self.group = group
        self.decode = decode
        if (handler is None) == (batch_handler is None):
            raise TypeError("give a ConsumerLoop either a handler or a batch_handler")
        self.handler = handler
        self.batch_handler = batch_handler
        self.poll_timeout_ms = poll_timeout_ms
        self.max_records = max_records
        self.concurrent_partitions = concurrent_partitions
        self.commit_behind = commit_behind
        self._to_commit: dict[TopicPartition, int] = {}
        self._committer: asyncio.Task[None] | None = None
        #: When the last background commit began (monotonic seconds).
        self._committed_at = -COMMIT_INTERVAL_S
        #: What a background commit waiting for its turn awaits.
        self._turn: asyncio.Future[None] | None = None
        #: Pipelined: each partition's records wait in its lane, handled by the lane's task.
        self.pipelined = pipelined
        self.max_in_flight = max_in_flight
        self._lanes: dict[TopicPartition, tuple[asyncio.Queue[list[Record]], asyncio.Task[None]]]
        self._lanes = {}
        self._in_flight = 0
        self._room = asyncio.Event()
        self._lane_failure: BaseException | None = None
        #: Topic -> the series its records are counted in.
        self._series: dict[str, metrics.ConsumerSeries] = {}

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until ``stop`` is set; what was handled is committed before returning."""
        try:
            while not stop.is_set():
                await self.run_once()
        finally:
            await self.flush()

    async def run_once(self) -> int:
        """One poll: handle (or skip) and commit every record it returned; returns their count.

        Pipelined, the records are handed to their partitions' lanes and the next poll may come
        at once, while they are handled; a lane's failure is raised by the next call.
        """
        self._reap_committer()
        if self.pipelined:
            return await self._dispatch()
        records = await self.consumer.poll(self.poll_timeout_ms, self.max_records)
        done: dict[TopicPartition, int] = {}
        handled = False
        try:
            if self.concurrent_partitions:
                await self._side_by_side(records, done)
            elif self.batch_handler is not None:
                for batch in _by_partition(records).values():
                    await self._in_order(batch, done)
            else:
                await self._in_order(records, done)
            handled = True
        finally:
            if done:
                self._to_commit.update(done)
            if not handled or not self.commit_behind:
                # Also on a handler error or cancellation: never redeliver what was handled.
                await self.flush()
            else:
                self._commit_soon()
        return len(records)

    def _commit_soon(self) -> None:
        """Commit what is handled in the background, unless a commit is in flight (which takes
        up what is pending when it is done)."""
        self._reap_committer()
        if self._to_commit and self._committer is None:
            self._committer = asyncio.create_task(self._commit_in_turn())

    async def _commit_in_turn(self) -> None:
        wait = self._committed_at + COMMIT_INTERVAL_S - time.monotonic()
        if wait > 0:
            # A flush cuts the wait short: a stop or a failure commits at once.
            self._turn = asyncio.get_running_loop().create_future()
            timer = asyncio.get_running_loop().call_later(wait, _settle, self._turn)
            try:
                await self._turn
            finally:
                timer.cancel()
                self._turn = None
        self._committed_at = time.monotonic()
        await self._commit_pending()

    def _reap_committer(self) -> None:
        if self._committer is not None and self._committer.done():
            committer, self._committer = self._committer, None
            committer.result()  # a commit that failed in the background fails the loop here

    # -- pipelined ------------------------------------------------------------------------

    async def _dispatch(self) -> int:
        self._raise_lane_failure()
        while self._in_flight >= self.max_in_flight:
            self._room.clear()
            await self._room.wait()
            self._raise_lane_failure()
        records = await self.consumer.poll(self.poll_timeout_ms, self.max_records)
        for tp, batch in _by_partition(records).items():
            lane = self._lanes.get(tp)
            if lane is None:
                queue: asyncio.Queue[list[Record]] = asyncio.Queue()
                task = asyncio.create_task(self._run_lane(queue), name=f"{self.group}:{tp}")
                lane = self._lanes[tp] = (queue, task)
            lane[0].put_nowait(batch)
            self._in_flight += len(batch)
        await asyncio.sleep(0)  # let the lanes start before the next poll
        return len(records)

    async def _run_lane(self, queue: asyncio.Queue[list[Record]]) -> None:
        while True:
            batch = await queue.get()
            done: dict[TopicPartition, int] = {}
            try:
                await self._in_order(batch, done)
            except BaseException as exc:
                if self._lane_failure is None and not isinstance(exc, asyncio.CancelledError):
                    self._lane_failure = exc
                raise
            finally:
                self._to_commit.update(done)
                self._in_flight -= len(batch)
                self._room.set()
                queue.task_done()
            self._commit_soon()

    def _raise_lane_failure(self) -> None:
        if self._lane_failure is not None:
            raise self._lane_failure

    async def _drain_lanes(self) -> None:
        """Wait until every lane has handled what it was given (or failed), then stop them."""
        lanes, self._lanes = self._lanes, {}
        for queue, task in lanes.values():
            if not task.done():
                waiting = asyncio.ensure_future(queue.join())
                await asyncio.wait([waiting, task], return_when=asyncio.FIRST_COMPLETED)
                waiting.cancel()
            task.cancel()
        await asyncio.gather(*(task for _, task in lanes.values()), return_exceptions=True)

    async def flush(self) -> None:
        """Commit everything handled so far, waiting for a commit already in flight (and,
        pipelined, for the lanes to handle what they hold)."""
        if self._lanes:
            await self._drain_lanes()
        if self._committer is not None:
            committer, self._committer = self._committer, None
            if self._turn is not None:
                _settle(self._turn)
            await committer
        await self._commit_pending()

    async def flush_at_stop(self, within: float = STOP_COMMIT_SECONDS) -> bool:
        """``flush``, given up after ``within`` seconds: a stop never hangs on a log that does
        not answer a commit (a broker just back from an outage); what was not committed is
        handled again by the partitions' next owner, which the stream rules make harmless.
        False if it gave up."""
        try:
            await asyncio.wait_for(self.flush(), within)
        except TimeoutError:
            log.warning(
                "the last commit was not answered in time: the next owner handles those "
                "records again",
                group=self.group,
                seconds=within,
            )
            return False
        return True

    async def _commit_pending(self) -> None:
        while self._to_commit:
            offsets, self._to_commit = self._to_commit, {}
            await self._commit(offsets)

    async def _in_order(self, records: list[Record], done: dict[TopicPartition, int]) -> None:
        if self.batch_handler is not None and records:
            await self._process_batch(records)
            last = records[-1]
            done[TopicPartition(last.topic, last.partition)] = last.offset + 1
            return
        skip = self.skip
        # Counted by runs of one topic's records (a poll's, mostly): one increment, not one a
        # record; what a failing handler leaves unhandled is not counted.
        topic = records[0].topic if records else ""
        handled = 0
        try:
            for record in records:
                if record.topic != topic:
                    if handled:
                        self._series_of(topic).consumed.inc(handled)
                    topic, handled = record.topic, 0
                if (skip is None or not skip(record)) and await self._process(record):
                    handled += 1
                done[TopicPartition(record.topic, record.partition)] = record.offset + 1
        finally:
            if handled:
                self._series_of(topic).consumed.inc(handled)

    async def _side_by_side(self, records: list[Record], done: dict[TopicPartition, int]) -> None:
        by_partition = _by_partition(records)
        if len(by_partition) <= 1:
            await self._in_order(records, done)
            return
        outcomes = await asyncio.gather(
            *(self._in_order(batch, done) for batch in by_partition.values()),
            return_exceptions=True,
        )
        # Every partition ran to its end or its first failure (and was committed that far);
        # the first failure is the loop's, as in order.
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _commit(self, offsets: dict[TopicPartition, int]) -> None:
        try:
            await self.consumer.commit(offsets)
        except CommitFailedError as exc:
            log.warning(
                "commit refused after a rebalance; the new owner will handle these records",
                group=self.group,
                offsets={f"{tp.topic}/{tp.partition}": offset for tp, offset in offsets.items()},
                error=str(exc),
            )

    def _series_of(self, topic: str) -> metrics.ConsumerSeries:
        series = self._series.get(topic)
        if series is None:
            series = self._series[topic] = metrics.consumer_series(topic, self.group)
        return series

    def _span_attributes(self, record: Record) -> dict[str, str | int]:
        """The OpenTelemetry messaging attributes of processing ``record`` (or a batch from it)."""
        return {
            "messaging.system": "kafka",
            "messaging.operation.type": "process",
            "messaging.destination.name": record.topic,
            "messaging.destination.partition.id": str(record.partition),
            "messaging.kafka.offset": record.offset,
            "messaging.consumer.group.name": self.group,
        }

    async def _process_batch(self, records: list[Record]) -> None:
        """One partition's records to the batch handler. Each record keeps its own trace: while
        spans are exported, one consumer span per record (a child of the span that wrote it),
        whose context the item then carries, so what the handler writes for it follows that
        span; otherwise the items carry on their writers' contexts as they are."""
        assert self.batch_handler is not None
        items = []
        skip = self.skip
        for record in records:
            if skip is not None and skip(record):
                continue
            item = decode_or_skip(self.decode, record, self.group)
            if item is not None:
                items.append((item, record))
        if not items:
            return
        first = records[0]
        series = self._series_of(first.topic)
        metrics.observe_ages(series.age, [record.timestamp_ms for _, record in items])
        started = time.perf_counter()
        if not telemetry.exporting():
            # The items carry on their writers' contexts as they are (see the docstring).
            await self.batch_handler(items)
        else:
            attributes = self._span_attributes(first)
            attributes["messaging.batch.message_count"] = len(items)
            parents = [self._parent(item, record) for item, record in items]
            with telemetry.record_spans(f"{first.topic} process", parents, attributes) as carried:
                items = [
                    (_carrying(item, traceparent, tracestate), record)
                    for (item, record), (traceparent, tracestate) in zip(
                        items, carried, strict=True
                    )
                ]
                await self.batch_handler(items)
        series.handler_seconds.observe(time.perf_counter() - started)
        series.consumed.inc(len(items))

    @staticmethod
    def _parent(item: object, record: Record) -> otel_context.Context:
        """The context of the span that wrote ``record``: its headers', else its envelope's."""
        parent = telemetry.parent_from_headers(record.headers)
        if parent is None:
            parent = telemetry.context_of(
                getattr(item, "traceparent", ""), getattr(item, "tracestate", "")
            )
        return parent

    @staticmethod
    def _carried(item: object, record: Record) -> tuple[str, str]:
        """:meth:`_parent`'s trace as :func:`telemetry.carried_of` gives it."""
        carried = telemetry.carried_of_headers(record.headers)
        if carried is None:
            carried = telemetry.carried_of(
                getattr(item, "traceparent", ""), getattr(item, "tracestate", "")
            )
        return carried

    async def _process(self, record: Record) -> bool:
        """Decode and handle one record; False if it was skipped as malformed."""
        item = decode_or_skip(self.decode, record, self.group)
        if item is None:
            return False
        series = self._series_of(record.topic)
        metrics.observe_ages(series.age, (record.timestamp_ms,))
        started = time.perf_counter()
        assert self.handler is not None
        if telemetry.exporting():
            with telemetry.detail_span(
                f"{record.topic} process",
                context=self._parent(item, record),
                kind=SpanKind.CONSUMER,
                attributes=self._span_attributes(record),
            ):
                await self.handler(item, record)
        else:
            # Unexported, the span would carry nothing its parent does not (the same trace, in
            # what the handler writes and logs): the parent's trace goes on instead, as the
            # strings it came in (no context is made of them).
            with telemetry.carrying(self._carried(item, record)):
                await self.handler(item, record)
        series.handler_seconds.observe(time.perf_counter() - started)
        return True


def _carrying(item: T, traceparent: str, tracestate: str) -> T:
    """``item`` (a Command or Event) carrying another trace context on."""
    if dataclasses.is_dataclass(item) and hasattr(item, "traceparent"):
        return dataclasses.replace(item, traceparent=traceparent, tracestate=tracestate)  # type: ignore[type-var]
    return item


def _by_partition(records: list[Record]) -> dict[TopicPartition, list[Record]]:
    out: dict[TopicPartition, list[Record]] = {}
    for record in records:
        out.setdefault(TopicPartition(record.topic, record.partition), []).append(record)
    return out


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
