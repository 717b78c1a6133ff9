"""Checks both implementations apply before touching storage, so bad input changes nothing."""

from __future__ import annotations

import re
from collections.abc import Sequence

from arena_runtime.eventlog.base import InvalidRequestError, OutgoingRecord, TopicSpec

# Kafka's own rule for topic names (kafka.common.internals.Topic).
_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


def check_topic_name(name: str) -> None:
    if not isinstance(name, str) or not _TOPIC_NAME.match(name) or name in (".", ".."):
        raise InvalidRequestError(
            f"invalid topic name {name!r}: 1-249 characters of ASCII letters, digits, '.', '_', '-'"
        )


def check_spec(spec: TopicSpec) -> None:
    check_topic_name(spec.name)
    if spec.partitions < 1:
        raise InvalidRequestError(f"topic {spec.name!r}: partitions must be >= 1")
    if spec.retention_ms < -1 or spec.retention_ms == 0:
        raise InvalidRequestError(f"topic {spec.name!r}: retention_ms must be -1 or positive")


def check_records(topic: str, records: Sequence[OutgoingRecord], partitions: int) -> None:
    # ``type(x) is bytes or isinstance(x, bytes)``: the same answer as isinstance alone, without
    # its call for the exact types every caller passes (a dozen checks a record, a few records a
    # move; subclasses still pass).
    for record in records:
        value = record.value
        if type(value) is not bytes and not isinstance(value, bytes):
            raise InvalidRequestError(f"{topic}: record value must be bytes")
        key = record.key
        if key is not None and type(key) is not bytes and not isinstance(key, bytes):
            raise InvalidRequestError(f"{topic}: record key must be bytes or None")
        if record.partition is not None and not 0 <= record.partition < partitions:
            raise InvalidRequestError(
                f"{topic}: partition {record.partition} out of range 0..{partitions - 1}"
            )
        for name, value in record.headers:
            if (type(name) is not str and not isinstance(name, str)) or (
                type(value) is not bytes and not isinstance(value, bytes)
            ):
                raise InvalidRequestError(f"{topic}: headers are (str, bytes) pairs")


def check_position(topic: str, partition: int, partitions: int, offset: int) -> None:
    if not 0 <= partition < partitions:
        raise InvalidRequestError(
            f"{topic}: partition {partition} out of range 0..{partitions - 1}"
        )
    if offset < 0:
        raise InvalidRequestError(f"{topic}: offset must be >= 0, not {offset}")
