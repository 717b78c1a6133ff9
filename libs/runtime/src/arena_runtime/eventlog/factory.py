"""The event log the settings ask for: Kafka when a bootstrap address is given, else embedded."""

from __future__ import annotations

from arena_runtime.config import Settings
from arena_runtime.eventlog.base import EventLog

EMBEDDED_FILE = "events.db"


def open_event_log(settings: Settings) -> EventLog:
    """The configured event log, not yet started (``await log.start()`` or ``async with log``)."""
    if settings.kafka_bootstrap:
        from arena_runtime.eventlog.kafka import KafkaEventLog
        from arena_runtime.eventlog.kafka_security import KafkaSecurity

        return KafkaEventLog(
            settings.kafka_bootstrap,
            topic_prefix=settings.topic_prefix,
            replication_factor=settings.kafka_replication_factor,
            min_insync_replicas=settings.kafka_min_insync_replicas,
            security=KafkaSecurity.from_settings(settings),
            session_timeout_ms=settings.consumer_session_timeout_ms,
            heartbeat_interval_ms=settings.consumer_heartbeat_ms,
            fetch_max_wait_ms=settings.kafka_fetch_wait_ms,
        )
    from arena_runtime.eventlog.embedded import EmbeddedEventLog

    return EmbeddedEventLog(
        settings.data_dir / EMBEDDED_FILE,
        topic_prefix=settings.topic_prefix,
        session_timeout_ms=settings.consumer_session_timeout_ms,
        heartbeat_interval_ms=settings.consumer_heartbeat_ms,
        tail_records=settings.eventlog_tail_records,
        peer_wakeups=settings.eventlog_peer_wakeups,
    )
