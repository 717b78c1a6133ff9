"""ARENA_* configuration: defaults, parsing, and start-up failures that name the variable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from arena_runtime.config import ConfigError, Settings, load_settings, variable_name


def test_defaults_are_the_embedded_mode() -> None:
    settings = load_settings({})
    assert settings.embedded
    assert settings.data_dir == Path("var")
    assert (settings.http_host, settings.http_port) == ("127.0.0.1", 8000)
    assert settings.database_url is None and settings.redis_url is None


def test_values_are_parsed_and_other_variables_ignored() -> None:
    settings = load_settings(
        {
            "ARENA_KAFKA_BOOTSTRAP": "kafka-0:9092,kafka-1:9092",
            "ARENA_HTTP_PORT": "9100",
            "ARENA_PARTITIONS": "16",
            "ARENA_LOG_LEVEL": "debug",
            "ARENA_LOG_FORMAT": "Console",
            "ARENA_DATA_DIR": "/srv/arena",
            "ARENA_TEST_KAFKA_BOOTSTRAP": "harness-only:1",
            "HOME": "/root",
        }
    )
    assert not settings.embedded
    assert settings.kafka_bootstrap == "kafka-0:9092,kafka-1:9092"
    assert (settings.http_port, settings.partitions) == (9100, 16)
    assert (settings.log_level, settings.log_format) == ("DEBUG", "console")
    assert settings.data_dir == Path("/srv/arena")
    assert isinstance(settings, Settings)


def test_empty_variable_counts_as_unset() -> None:
    assert load_settings({"ARENA_KAFKA_BOOTSTRAP": "", "ARENA_HTTP_PORT": " "}).embedded


def test_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_SERVICE_NAME", "rating")
    assert load_settings().service_name == "rating"


def test_settings_are_immutable() -> None:
    settings = load_settings({})
    with pytest.raises(ValueError, match="frozen"):
        settings.http_port = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("ARENA_HTTP_PORT", "eighty", "valid integer"),
        ("ARENA_HTTP_PORT", "70000", "less than or equal to 65535"),
        ("ARENA_PARTITIONS", "0", "greater than or equal to 1"),
        ("ARENA_LOG_LEVEL", "LOUD", "pattern"),
        ("ARENA_LOG_FORMAT", "xml", "pattern"),
        ("ARENA_EVENT_LOOP", "tokio", "pattern"),
        ("ARENA_GC_FREEZE_SECONDS", "-1", "greater than or equal to 0"),
        ("ARENA_KAFKA_FETCH_WAIT_MS", "0", "greater than or equal to 1"),
        ("ARENA_PROJECTION_LINGER_MS", "-1", "greater than or equal to 0"),
        ("ARENA_EVENT_CONSUMER_LINGER_MS", "10001", "less than or equal to 10000"),
        ("ARENA_KAFKA_BOOTSTRAP", "localhost", "host:port"),
        ("ARENA_KAFKA_BOOTSTRAP", "a:9092,b:port", "host:port"),
        ("ARENA_DATABASE_URL", "mysql://db/arena", "postgresql+asyncpg://"),
        ("ARENA_REDIS_URL", "localhost:6379", "redis://"),
        ("ARENA_OTEL_EXPORTER_ENDPOINT", "collector:4318", "http://"),
        ("ARENA_HTTP_PROT", "8000", "no such setting"),
        ("ARENA_CONSUMER_HEARTBEAT_MS", "6000", "not shorter than"),
    ],
)
def test_bad_configuration_names_the_variable(variable: str, value: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"ARENA_HTTP_HOST": "0.0.0.0", variable: value})
    assert caught.value.variable == variable
    assert str(caught.value).startswith(f"{variable}: ")
    assert problem in str(caught.value)


def test_a_given_mapping_is_the_only_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_HTTP_PORT", "1234")
    assert load_settings({}).http_port == 8000
    assert load_settings().http_port == 1234


def test_docs_list_every_setting() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    section = docs.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(ARENA_[A-Z_]+)` \|", section, re.MULTILINE))
    assert documented == {variable_name(field) for field in Settings.model_fields}


def test_the_kafka_fetch_wait_reaches_the_log() -> None:
    from arena_runtime.eventlog.factory import open_event_log
    from arena_runtime.eventlog.kafka import KafkaEventLog

    settings = load_settings(
        {"ARENA_KAFKA_BOOTSTRAP": "127.0.0.1:9092", "ARENA_KAFKA_FETCH_WAIT_MS": "250"}
    )
    log = open_event_log(settings)  # not started: nothing connects
    assert isinstance(log, KafkaEventLog) and log.fetch_max_wait_ms == 250


#: Apache Kafka's broker defaults: group.min.session.timeout.ms, group.max.session.timeout.ms.
KAFKA_SESSION_BOUNDS = (6_000, 1_800_000)


def test_the_group_timings_are_valid_on_kafka_and_reach_the_log() -> None:
    """The defaults are chosen for Tansu's joins (half the session) but must stay valid on a
    Kafka broker left at its defaults (docs/operations.md, Start-up and group sessions)."""
    from arena_runtime.eventlog.factory import open_event_log
    from arena_runtime.eventlog.kafka import KafkaEventLog

    settings = load_settings({"ARENA_KAFKA_BOOTSTRAP": "127.0.0.1:9092"})
    low, high = KAFKA_SESSION_BOUNDS
    assert low <= settings.consumer_session_timeout_ms <= high
    # Kafka's own advice: heartbeats at most a third of the session.
    assert settings.consumer_heartbeat_ms * 3 <= settings.consumer_session_timeout_ms
    log = open_event_log(settings)
    assert isinstance(log, KafkaEventLog)
    assert (log.session_timeout_ms, log.heartbeat_interval_ms) == (
        settings.consumer_session_timeout_ms,
        settings.consumer_heartbeat_ms,
    )
