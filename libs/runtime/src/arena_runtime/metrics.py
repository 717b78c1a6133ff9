"""Prometheus metrics of the runtime, and their text exposition for ``/metrics``.

The metrics live in prometheus-client's default registry, beside its process and GC
collectors. In the embedded mode the four services share one process and so one set of series;
the ``group`` label (the consumer group, one per service) tells them apart.
"""

from __future__ import annotations

import contextlib
import gc
import time
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

RECORDS_CONSUMED = Counter(
    "arena_records_consumed",
    "Records handed to a handler by a consumer loop.",
    ["topic", "group"],
)
MALFORMED_RECORDS = Counter(
    "arena_malformed_records",
    "Records skipped because they could not be decoded (reason: undecodable, unknown_type, "
    "unsupported_schema_version).",
    ["topic", "group", "reason"],
)
HANDLER_SECONDS = Histogram(
    "arena_handler_seconds",
    "Time a consumer loop's handler took per record.",
    ["topic", "group"],
)
RECORD_AGE_SECONDS = Histogram(
    "arena_record_age_seconds",
    "Time from a record's append (its log timestamp, in ms) to the start of its handling by a "
    "consumer: the hop's latency while caught up, the lag behind the log otherwise.",
    ["topic", "group"],
    buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 300),
)
RECORDS_APPENDED = Counter(
    "arena_records_appended",
    "Records appended to the event log by a stream runner.",
    ["topic"],
)
STREAM_EVENTS_IGNORED = Counter(
    "arena_stream_events_ignored",
    "Events a stream reader ignored because their sequence was not the next one (duplicates, "
    "replays, the losing side of a race).",
    ["topic"],
)
COMMANDS = Counter(
    "arena_commands",
    "Commands handled by a stream runner, by outcome (accepted, rejected, repeated, retried).",
    ["topic", "outcome"],
)

PARTITION_LAG = Gauge(
    "arena_consumer_partition_lag",
    "Records of a partition its consumer-group member has not fetched yet: the partition's "
    "high watermark minus the member's position, after the member's latest poll (Kafka only).",
    ["group", "topic", "partition"],
)
REBALANCES = Counter(
    "arena_consumer_rebalances",
    "Changes of a consumer-group member's partition assignment (a member joined, left, or "
    "missed its session): each moves partitions, and their streams pause meanwhile.",
    ["group"],
)

SNAPSHOT_AGE = Gauge(
    "arena_stream_snapshot_age_seconds",
    "Age of the newest snapshot of a stream partition this process owns (taken or resumed from): "
    "how much of the log a new owner would read after the snapshot (docs/eventlog.md).",
    ["topic", "partition"],
)
SNAPSHOT_BYTES = Gauge(
    "arena_stream_snapshot_bytes",
    "Size (compressed) of the newest snapshot this process took of a stream partition.",
    ["topic", "partition"],
)
SNAPSHOT_SECONDS = Histogram(
    "arena_stream_snapshot_seconds",
    "Time taken to take and save one snapshot of a stream partition.",
    ["topic"],
)
SNAPSHOT_LOADS = Counter(
    "arena_stream_snapshot_loads",
    "Partitions gained by a stream runner, by how (snapshot: from a snapshot plus the tail; "
    "replay: from the start, no valid snapshot).",
    ["topic", "outcome"],
)


def set_snapshot_age(topic: str, partition: int, taken_ms: int) -> None:
    """Make the partition's snapshot-age series count from ``taken_ms`` (Unix ms)."""
    SNAPSHOT_AGE.labels(topic, str(partition)).set_function(
        lambda: max(0.0, time.time() - taken_ms / 1000)
    )


def forget_snapshot_age(topic: str, partition: int) -> None:
    """Stop exporting the partition's snapshot age (the process no longer owns it)."""
    with contextlib.suppress(KeyError):
        SNAPSHOT_AGE.remove(topic, str(partition))


GC_FROZEN_OBJECTS = Gauge(
    "arena_gc_frozen_objects",
    "Objects start-up left that the garbage collector's full passes no longer walk (gc.freeze).",
)
GC_FROZEN_OBJECTS.set_function(gc.get_freeze_count)

#: Content-Type of :func:`exposition`.
CONTENT_TYPE = CONTENT_TYPE_LATEST


def exposition() -> bytes:
    """Every metric of this process in the Prometheus text format (serve with CONTENT_TYPE)."""
    return generate_latest(REGISTRY)


#: (metric, label values) -> its child: ``labels`` validates and locks at every call (about a
#: microsecond and a half), and the hot paths touch a few series per record. A metric hashes
#: by identity (prometheus-client defines no equality), so it is its own key.
_SERIES: dict[tuple[Any, tuple[str, ...]], Any] = {}


def series(metric: Any, *values: str) -> Any:
    """``metric.labels(*values)``, made once. Only for series never removed (counters and
    histograms): a removed series would stay cached and count nowhere."""
    try:
        return _SERIES[metric, values]  # no call but this one when known (a few a move)
    except KeyError:
        child = _SERIES[metric, values] = metric.labels(*values)
        return child


def observe_age(topic: str, group: str, timestamps_ms: Iterable[int]) -> None:
    """Record in RECORD_AGE_SECONDS how old each record was when its handling began."""
    observe_ages(series(RECORD_AGE_SECONDS, topic, group), timestamps_ms)


def observe_ages(age_series: Any, timestamps_ms: Iterable[int]) -> None:
    """:func:`observe_age` into a series already looked up (a ConsumerSeries' ``age``)."""
    now_ms = time.time() * 1000
    observe_many(
        age_series,
        [max(0.0, now_ms - stamp) / 1000 for stamp in timestamps_ms if stamp > 0],
    )  # 0: a log that keeps no time


def observe_many(histogram: Any, amounts: Sequence[float]) -> None:
    """``histogram.observe(amount)`` for each amount (a histogram's series), with one update of
    its sum and one of each bucket touched: a batch's records (a move's events, read together)
    otherwise took a locked update of the sum and of a bucket, and a scan of the bounds, each.
    The series reports what observing them one by one would (its sum but for rounding)."""
    if len(amounts) <= 1:
        for amount in amounts:
            histogram.observe(amount)
        return
    try:
        bounds, buckets, total = histogram._upper_bounds, histogram._buckets, histogram._sum
    except AttributeError:  # not prometheus-client's histogram as we know it: one by one
        for amount in amounts:
            histogram.observe(amount)
        return
    histogram._raise_if_not_observable()
    counts: dict[int, int] = {}
    last = len(bounds) - 1
    for amount in amounts:
        # The first bound at or above it, as observe's scan finds (the last bound is +Inf);
        # a NaN is above none and falls in no bucket, as in observe.
        index = bisect_left(bounds, amount)
        if index <= last and amount <= bounds[index]:
            counts[index] = counts.get(index, 0) + 1
    total.inc(sum(amounts))
    for index, count in counts.items():
        buckets[index].inc(count)


class ConsumerSeries(NamedTuple):
    """The series a consumer loop touches for each record of one topic: looked up once per
    loop and topic rather than three times a record."""

    age: Any
    handler_seconds: Any
    consumed: Any


def consumer_series(topic: str, group: str) -> ConsumerSeries:
    return ConsumerSeries(
        series(RECORD_AGE_SECONDS, topic, group),
        series(HANDLER_SECONDS, topic, group),
        series(RECORDS_CONSUMED, topic, group),
    )


#: How often a busy member's lag series are refreshed: they are scraped every few seconds,
#: and asking every partition's lag after each of a busy member's polls (several a move) cost
#: about 4% of a move's CPU.
LAG_REFRESH_SECONDS = 0.5


class ConsumerWatch:
    """Rebalances and live per-partition lag of one consumer-group member, updated after its
    polls (:meth:`observe`): after every poll that came back empty (the member has caught up,
    so the series settle at once) and otherwise at most every LAG_REFRESH_SECONDS."""

    def __init__(self, group: str) -> None:
        self.group = group
        self._assignment: frozenset[Any] = frozenset()
        #: (topic, partition) -> its lag series and the value last set there: after every poll
        #: only the lags that moved are set (most partitions of a busy consumer stand still).
        self._labelled: dict[tuple[str, int], list[Any]] = {}
        self._next_refresh = 0.0

    async def observe(self, consumer: Any, records: int = 0) -> None:
        """Update after a poll that returned ``records``."""
        now = time.monotonic()
        if records and now < self._next_refresh:
            return
        self._next_refresh = now + LAG_REFRESH_SECONDS
        assignment = consumer.assignment()
        if assignment != self._assignment:
            if assignment or self._assignment:
                REBALANCES.labels(self.group).inc()
            self._assignment = assignment
            owned = {(tp.topic, tp.partition) for tp in assignment}
            for topic, partition in set(self._labelled) - owned:
                PARTITION_LAG.remove(self.group, topic, str(partition))
                del self._labelled[(topic, partition)]
        labelled = self._labelled
        for tp, lag in (await consumer.lag()).items():
            held = labelled.get((tp.topic, tp.partition))
            if held is None:
                child = PARTITION_LAG.labels(self.group, tp.topic, str(tp.partition))
                held = labelled[(tp.topic, tp.partition)] = [child, None]
            if held[1] != lag:
                held[0].set(lag)
                held[1] = lag

    def close(self) -> None:
        """Drop this member's lag series (it stopped)."""
        for topic, partition in self._labelled:
            PARTITION_LAG.remove(self.group, topic, str(partition))
        self._labelled.clear()


def sample(name: str, labels: dict[str, str]) -> float:
    """Current value of one series (0 if it has not been touched yet), for checks and tests."""
    value = REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value
