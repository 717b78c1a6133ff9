"""Fixtures of the runtime suites: each test runs on the embedded log and on the real broker."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from arena_runtime.config import load_settings
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log

OpenLog = Callable[[], EventLog]


@pytest.fixture(params=["embedded", pytest.param("kafka", marks=pytest.mark.kafka)])
def open_log(request: pytest.FixtureRequest, tmp_path: Path) -> OpenLog:
    """Opens (unstarted) logs over one storage, as the processes do: through the settings.

    Each call is another client of the same log (another writer, or the same one restarted).
    """
    if request.param == "embedded":
        settings = load_settings({"ARENA_DATA_DIR": str(tmp_path)})
    else:
        settings = load_settings(
            {
                "ARENA_KAFKA_BOOTSTRAP": request.getfixturevalue("kafka_bootstrap"),
                "ARENA_TOPIC_PREFIX": request.getfixturevalue("topic_prefix"),
                **request.getfixturevalue("kafka_consumer_timings").settings(),
            }
        )
    return lambda: open_event_log(settings)


@pytest.fixture
def unique_topic() -> str:
    """A topic name of its own for each test (broker topics outlive a test)."""
    return f"streams.{uuid.uuid4().hex[:12]}"
