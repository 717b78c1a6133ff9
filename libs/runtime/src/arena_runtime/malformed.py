"""Skipping a record nobody can read: one log line and one metric, whichever reader met it.

A malformed record (undecodable, unknown type, unsupported schema version) must never stop a
consumer, and nothing must hide it either: every reader of the log — the consume loop, the stream
runner, the projection runner — logs it with its topic, partition and offset, counts it in
``arena_malformed_records_total`` under its own ``group`` label, and moves past it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from arena_runtime import metrics, telemetry
from arena_runtime.envelope import EnvelopeError
from arena_runtime.eventlog.base import Record

T = TypeVar("T")

log = telemetry.get_logger(__name__)


class Unreadable(Protocol):
    """An error that says why a record was unreadable, as the metric's ``reason`` label."""

    # A read-only property, so the errors' class-level ``reason`` constants satisfy it.
    @property
    def reason(self) -> str: ...


def report_malformed(record: Record, group: str, error: Unreadable) -> None:
    """Log and count one skipped record; ``group`` names the reader (consumer group or other)."""
    metrics.MALFORMED_RECORDS.labels(record.topic, group, error.reason).inc()
    log.warning(
        "malformed record skipped",
        topic=record.topic,
        partition=record.partition,
        offset=record.offset,
        group=group,
        reason=error.reason,
        error=str(error),
    )


def decode_or_skip(decode: Callable[[bytes], T], record: Record, group: str) -> T | None:
    """``decode(record.value)``, or None for a malformed record, reported as above."""
    try:
        return decode(record.value)
    except EnvelopeError as exc:
        report_malformed(record, group, exc)
        return None
