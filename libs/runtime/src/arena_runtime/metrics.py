"""Prometheus metrics of the runtime, and their text exposition for ``/metrics``.

The metrics live in prometheus-client's default registry, beside its process and GC
collectors. In the embedded mode the four services share one process and so one set of series;
the ``group`` label (the consumer group, one per service) tells them apart.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable

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


def observe_age(topic: str, group: str, timestamps_ms: Iterable[int]) -> None:
    """Record in RECORD_AGE_SECONDS how old each record was when its handling began."""
    series = RECORD_AGE_SECONDS.labels(topic, group)
    now_ms = time.time() * 1000
    for stamp in timestamps_ms:
        if stamp > 0:  # 0: a log that keeps no time
            series.observe(max(0.0, now_ms - stamp) / 1000)


def sample(name: str, labels: dict[str, str]) -> float:
    """Current value of one series (0 if it has not been touched yet), for checks and tests."""
    value = REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value
