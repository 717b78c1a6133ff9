"""Event log: one interface, a Kafka and an embedded implementation."""

from arena_runtime.eventlog.base import (
    UNLIMITED_RETENTION,
    AppendConflictError,
    CommitFailedError,
    Consumer,
    EventLog,
    EventLogError,
    Headers,
    InvalidRequestError,
    OutgoingRecord,
    Position,
    Record,
    TopicMismatchError,
    TopicPartition,
    TopicSpec,
    UnknownTopicError,
)

__all__ = [
    "UNLIMITED_RETENTION",
    "AppendConflictError",
    "CommitFailedError",
    "Consumer",
    "EventLog",
    "EventLogError",
    "Headers",
    "InvalidRequestError",
    "OutgoingRecord",
    "Position",
    "Record",
    "TopicMismatchError",
    "TopicPartition",
    "TopicSpec",
    "UnknownTopicError",
]
