"""Prometheus metrics of the runtime, and their text exposition for ``/metrics``.

The metrics live in prometheus-client's default registry, beside its process and GC
collectors. In the embedded mode the four services share one process and so one set of series;
the ``group`` label (the consumer group, one per service) tells them apart.
"""

from __future__ import annotations

import gc

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


def sample(name: str, labels: dict[str, str]) -> float:
    """Current value of one series (0 if it has not been touched yet), for checks and tests."""
    value = REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value
