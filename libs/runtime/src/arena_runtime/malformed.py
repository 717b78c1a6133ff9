"""Skipping a record nobody can read: one log line and one metric, whichever reader met it.

A malformed record (undecodable, unknown type, unsupported schema version) must never stop a
consumer, and nothing must hide it either: every reader of the log — the consume loop, the stream
runner, the projection runner — logs it with its topic, partition and offset, counts it in
``arena_malformed_records_total`` under its own ``group`` label, and moves past it. The line
carries the trace of the span that wrote the record (``trace_id``, ``span_id``), from its
``traceparent`` header: an undecodable record's envelope cannot say it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace

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
    writer = telemetry.context_from_headers(record.headers)
    if not trace.get_current_span(writer).get_span_context().is_valid:
        _log_malformed(record, group, error)
        return
    token = otel_context.attach(writer)
    try:
        _log_malformed(record, group, error)
    finally:
        otel_context.detach(token)


def _log_malformed(record: Record, group: str, error: Unreadable) -> None:
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
