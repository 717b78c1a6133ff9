"""Settings that hold secrets never show them: not in repr, str, dumps nor start-up errors.

And the Kafka settings that only work together are refused apart, naming the one to change.
"""

from __future__ import annotations

import pytest
from arena_runtime.config import ConfigError, load_settings

PASSWORD = "hunter2-very-secret"
SECRETS = {
    "ARENA_DATABASE_URL": f"postgresql+asyncpg://arena:{PASSWORD}@db:5432/arena",
    "ARENA_REDIS_URL": f"redis://:{PASSWORD}@cache:6379/0",
    "ARENA_KAFKA_BOOTSTRAP": "kafka:9093",
    "ARENA_KAFKA_TLS": "true",
    "ARENA_KAFKA_TLS_CERT_FILE": "/etc/arena/kafka-tls/tls.crt",
    "ARENA_KAFKA_TLS_KEY_FILE": "/etc/arena/kafka-tls/tls.key",
    "ARENA_KAFKA_TLS_KEY_PASSWORD": PASSWORD,
    "ARENA_KAFKA_SASL_MECHANISM": "scram-sha-512",
    "ARENA_KAFKA_SASL_USERNAME": "arena",
    "ARENA_KAFKA_SASL_PASSWORD": PASSWORD,
}


def test_secrets_are_loaded_but_never_shown() -> None:
    settings = load_settings(SECRETS)
    assert settings.database_url is not None and settings.redis_url is not None
    assert settings.database_url.get_secret_value() == SECRETS["ARENA_DATABASE_URL"]
    assert settings.redis_url.get_secret_value() == SECRETS["ARENA_REDIS_URL"]
    assert settings.kafka_sasl_mechanism == "SCRAM-SHA-512"
    for shown in (repr(settings), str(settings), settings.model_dump_json(), f"{settings}"):
        assert PASSWORD not in shown


def test_the_kafka_security_of_the_log_hides_its_passwords() -> None:
    from arena_runtime.eventlog.kafka_security import KafkaSecurity

    security = KafkaSecurity.from_settings(load_settings(SECRETS))
    assert security.sasl_password == PASSWORD
    assert PASSWORD not in repr(security)
    assert PASSWORD not in security.describe()


@pytest.mark.parametrize(
    ("variable", "value", "expected_shown"),
    [
        ("ARENA_DATABASE_URL", f"mysql://arena:{PASSWORD}@db/arena", "'db'"),
        ("ARENA_REDIS_URL", f"memcached://:{PASSWORD}@cache:11211", "'cache:11211'"),
        ("ARENA_REDIS_URL", f"{PASSWORD}@cache:6379", "hidden"),
    ],
)
def test_a_bad_secret_is_named_but_not_shown(
    variable: str, value: str, expected_shown: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({variable: value})
    assert caught.value.variable == variable
    assert PASSWORD not in str(caught.value)
    assert expected_shown in str(caught.value)


def test_an_unparseable_database_url_is_not_echoed() -> None:
    from arena_runtime.sql.engine import DatabaseUrlError, parse_url

    with pytest.raises(DatabaseUrlError) as caught:
        parse_url(f"postgresql://arena:{PASSWORD}@db:port-is-not-a-number/arena")
    assert PASSWORD not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize(
    ("values", "variable", "problem"),
    [
        (
            {"ARENA_KAFKA_REPLICATION_FACTOR": "3", "ARENA_KAFKA_MIN_INSYNC_REPLICAS": "4"},
            "ARENA_KAFKA_MIN_INSYNC_REPLICAS",
            "every append would be refused",
        ),
        (
            {"ARENA_KAFKA_TLS": "true", "ARENA_KAFKA_TLS_CERT_FILE": "/c.pem"},
            "ARENA_KAFKA_TLS_KEY_FILE",
            "needs both",
        ),
        (
            {"ARENA_KAFKA_TLS_CA_FILE": "/ca.pem"},
            "ARENA_KAFKA_TLS",
            "ARENA_KAFKA_TLS is off",
        ),
        (
            {"ARENA_KAFKA_SASL_MECHANISM": "PLAIN", "ARENA_KAFKA_SASL_USERNAME": "arena"},
            "ARENA_KAFKA_SASL_PASSWORD",
            "needs ARENA_KAFKA_SASL_USERNAME and ARENA_KAFKA_SASL_PASSWORD",
        ),
        (
            {"ARENA_KAFKA_SASL_USERNAME": "arena", "ARENA_KAFKA_SASL_PASSWORD": PASSWORD},
            "ARENA_KAFKA_SASL_MECHANISM",
            "without a mechanism",
        ),
        ({"ARENA_KAFKA_SASL_MECHANISM": "GSSAPI"}, "ARENA_KAFKA_SASL_MECHANISM", "pattern"),
        ({"ARENA_KAFKA_REPLICATION_FACTOR": "0"}, "ARENA_KAFKA_REPLICATION_FACTOR", ">= 1"),
    ],
)
def test_kafka_settings_that_only_work_together_are_refused_apart(
    values: dict[str, str], variable: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(values)
    assert caught.value.variable == variable
    assert problem.replace(">= ", "greater than or equal to ") in str(caught.value)
    assert PASSWORD not in str(caught.value)
