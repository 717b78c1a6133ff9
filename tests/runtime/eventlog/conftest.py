"""Fixtures of the event-log suites: the same tests run on the embedded log and on the broker."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.embedded import EmbeddedEventLog
from arena_runtime.eventlog.kafka import KafkaEventLog

LogMaker = Callable[[], EventLog]


@pytest.fixture(params=["embedded", pytest.param("kafka", marks=pytest.mark.kafka)])
def make_log(request: pytest.FixtureRequest, tmp_path: Path) -> LogMaker:
    """Opens (unstarted) logs over one storage: a second call is the same log after a restart."""
    if request.param == "embedded":
        path = tmp_path / "events.db"
        # Short heartbeats keep the rebalance tests quick; the defaults are for production.
        return lambda: EmbeddedEventLog(path, heartbeat_interval_ms=200)
    bootstrap = request.getfixturevalue("kafka_bootstrap")
    prefix = request.getfixturevalue("topic_prefix")
    timings = request.getfixturevalue("kafka_consumer_timings")
    return lambda: KafkaEventLog(bootstrap, topic_prefix=prefix, **timings._asdict())


@pytest.fixture
def topic() -> str:
    """A topic name of its own for each test (broker topics outlive a test)."""
    return f"events.{uuid.uuid4().hex[:12]}"
