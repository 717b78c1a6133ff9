"""The Kafka log's TLS and SASL settings: the aiokafka options they become, and connections.

TLS is exercised end to end against a Tansu broker behind a TLS terminator (tests/harness/tls.py
says why Tansu cannot serve TLS itself). SASL: Tansu's ``--authentication`` offers SCRAM-SHA-256
and SCRAM-SHA-512 only (no PLAIN), and a user can only be created over an authenticated
connection on a broker whose memory storage does not outlive it, so no credentials can ever
succeed there: what is tested on it is that the SCRAM exchange runs and a refusal stops start-up
with an error naming the mechanism and user but not the password.
"""

from __future__ import annotations

import ssl
import uuid
from pathlib import Path
from typing import Any

import pytest
import trustme
from arena_runtime.config import ConfigError, load_settings
from arena_runtime.eventlog import EventLogError, OutgoingRecord, TopicSpec
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.kafka import KafkaEventLog
from arena_runtime.eventlog.kafka_security import KafkaSecurity

from tests.harness.kafka import TansuBroker
from tests.harness.tls import TlsFiles, tls_broker, write_tls_files

PASSWORD = "s3cret-sasl-password"


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def files(tmp_path: Path, ca: trustme.CA) -> TlsFiles:
    return write_tls_files(tmp_path, ca, "arena")


def security(env: dict[str, str]) -> KafkaSecurity:
    return KafkaSecurity.from_settings(load_settings({"ARENA_KAFKA_BOOTSTRAP": "k:9093", **env}))


# -- the options every client gets -------------------------------------------------------------


def test_without_security_settings_the_clients_speak_plaintext() -> None:
    assert security({}).client_options() == {"security_protocol": "PLAINTEXT"}


def test_tls_verifies_the_ca_and_the_host_name_and_presents_the_client_certificate(
    files: TlsFiles,
) -> None:
    options = security(
        {
            "ARENA_KAFKA_TLS": "true",
            "ARENA_KAFKA_TLS_CA_FILE": str(files.ca),
            "ARENA_KAFKA_TLS_CERT_FILE": str(files.client_cert),
            "ARENA_KAFKA_TLS_KEY_FILE": str(files.client_key),
        }
    ).client_options()
    assert set(options) == {"security_protocol", "ssl_context"}
    assert options["security_protocol"] == "SSL"
    context: ssl.SSLContext = options["ssl_context"]
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True
    issuers = [dict(item[0] for item in c["subject"]) for c in context.get_ca_certs()]
    assert any("Testing CA" in str(subject) for subject in issuers)


def test_tls_without_the_host_name_check_still_verifies_the_ca(files: TlsFiles) -> None:
    options = security(
        {
            "ARENA_KAFKA_TLS": "true",
            "ARENA_KAFKA_TLS_CA_FILE": str(files.ca),
            "ARENA_KAFKA_TLS_CHECK_HOSTNAME": "false",
        }
    ).client_options()
    context: ssl.SSLContext = options["ssl_context"]
    assert context.check_hostname is False
    assert context.verify_mode == ssl.CERT_REQUIRED


@pytest.mark.parametrize(
    ("tls", "mechanism", "protocol"),
    [
        ("false", "PLAIN", "SASL_PLAINTEXT"),
        ("false", "SCRAM-SHA-256", "SASL_PLAINTEXT"),
        ("true", "SCRAM-SHA-512", "SASL_SSL"),
    ],
)
def test_sasl_settings_become_the_sasl_options(tls: str, mechanism: str, protocol: str) -> None:
    options = security(
        {
            "ARENA_KAFKA_TLS": tls,
            "ARENA_KAFKA_SASL_MECHANISM": mechanism,
            "ARENA_KAFKA_SASL_USERNAME": "arena",
            "ARENA_KAFKA_SASL_PASSWORD": PASSWORD,
        }
    ).client_options()
    context = options.pop("ssl_context", None)
    assert (context is not None) == (tls == "true")
    assert options == {
        "security_protocol": protocol,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "arena",
        "sasl_plain_password": PASSWORD,
    }


def test_the_settings_reach_the_kafka_log_and_its_topics() -> None:
    log = open_event_log(
        load_settings(
            {
                "ARENA_KAFKA_BOOTSTRAP": "k:9093",
                "ARENA_KAFKA_REPLICATION_FACTOR": "3",
                "ARENA_KAFKA_MIN_INSYNC_REPLICAS": "2",
                "ARENA_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
                "ARENA_KAFKA_SASL_USERNAME": "arena",
                "ARENA_KAFKA_SASL_PASSWORD": PASSWORD,
            }
        )
    )
    assert isinstance(log, KafkaEventLog)
    assert (log.replication_factor, log.min_insync_replicas) == (3, 2)
    assert log.security.protocol == "SASL_PLAINTEXT"
    assert log.security.sasl_password == PASSWORD


@pytest.mark.parametrize(
    ("missing", "variable"),
    [("ca", "ARENA_KAFKA_TLS_CA_FILE"), ("client_key", "ARENA_KAFKA_TLS_CERT_FILE")],
)
def test_a_tls_file_that_cannot_be_loaded_is_named(
    files: TlsFiles, missing: str, variable: str
) -> None:
    getattr(files, missing).unlink()
    settings = {
        "ARENA_KAFKA_TLS": "true",
        "ARENA_KAFKA_TLS_CA_FILE": str(files.ca),
        "ARENA_KAFKA_TLS_CERT_FILE": str(files.client_cert),
        "ARENA_KAFKA_TLS_KEY_FILE": str(files.client_key),
    }
    with pytest.raises(ConfigError) as caught:
        security(settings).client_options()
    assert caught.value.variable == variable


# -- over TLS, on the broker -------------------------------------------------------------------


def tls_log(bootstrap: str, files: TlsFiles, **env: str) -> KafkaEventLog:
    settings = {
        "ARENA_KAFKA_BOOTSTRAP": bootstrap,
        "ARENA_KAFKA_TLS": "true",
        "ARENA_KAFKA_TLS_CA_FILE": str(files.ca),
        "ARENA_KAFKA_TLS_CERT_FILE": str(files.client_cert),
        "ARENA_KAFKA_TLS_KEY_FILE": str(files.client_key),
        "ARENA_CONSUMER_SESSION_TIMEOUT_MS": "3000",
        "ARENA_CONSUMER_HEARTBEAT_MS": "300",
        **env,
    }
    log = open_event_log(load_settings(settings))
    assert isinstance(log, KafkaEventLog)
    return log


@pytest.mark.kafka
async def test_over_mutual_tls_every_client_appends_reads_and_consumes(
    ca: trustme.CA, files: TlsFiles
) -> None:
    topic = f"tls.{uuid.uuid4().hex[:8]}"
    async with tls_broker(ca, client_ca=ca) as bootstrap, tls_log(bootstrap, files) as log:
        await log.create_topics([TopicSpec(topic, partitions=2)])
        await log.check_topics([TopicSpec(topic, partitions=2)])
        (position,) = await log.append(topic, [OutgoingRecord(b"over tls", key=b"k")])
        (record,) = await log.read(topic, position.partition, position.offset)
        assert record.value == b"over tls"
        async with log.consumer("tls-group", [topic]) as member:
            seen: list[Any] = []
            while not seen:
                seen = await member.poll(timeout_ms=500)
            assert [r.value for r in seen] == [b"over tls"]


@pytest.mark.kafka
async def test_a_broker_certificate_from_another_ca_is_refused(
    tmp_path: Path, ca: trustme.CA, caplog: pytest.LogCaptureFixture
) -> None:
    other = write_tls_files(tmp_path, trustme.CA(), "other")
    async with tls_broker(ca) as bootstrap:
        with pytest.raises(EventLogError, match=r"cannot reach Kafka at .* \(SSL\)"):
            await tls_log(bootstrap, other).start()
    # aiokafka logs why (its error only says it could not bootstrap): what an operator reads.
    assert "CERTIFICATE_VERIFY_FAILED" in caplog.text


@pytest.mark.kafka
async def test_a_certificate_for_another_host_is_refused_unless_the_check_is_off(
    ca: trustme.CA, files: TlsFiles, caplog: pytest.LogCaptureFixture
) -> None:
    async with tls_broker(ca, server_names=("broker.example",)) as bootstrap:
        with pytest.raises(EventLogError, match="cannot reach Kafka"):
            await tls_log(bootstrap, files).start()
        assert "Hostname mismatch" in caplog.text
        async with tls_log(bootstrap, files, ARENA_KAFKA_TLS_CHECK_HOSTNAME="false") as log:
            await log.create_topics([TopicSpec(f"tls.{uuid.uuid4().hex[:8]}")])


@pytest.mark.kafka
async def test_without_a_client_certificate_mutual_tls_is_refused(
    ca: trustme.CA, files: TlsFiles
) -> None:
    async with tls_broker(ca, client_ca=ca) as bootstrap:
        log = tls_log(bootstrap, files, ARENA_KAFKA_TLS_CERT_FILE="", ARENA_KAFKA_TLS_KEY_FILE="")
        with pytest.raises(EventLogError, match="cannot reach Kafka"):
            await log.start()


# -- SASL, on a broker that requires it --------------------------------------------------------


@pytest.fixture(scope="module")
def authenticating_broker() -> Any:
    broker = TansuBroker(extra_args=("--authentication",))
    broker.start()
    yield broker.bootstrap
    broker.stop()


@pytest.mark.kafka
async def test_a_refused_scram_login_stops_start_up_without_showing_the_password(
    authenticating_broker: str,
) -> None:
    log = open_event_log(
        load_settings(
            {
                "ARENA_KAFKA_BOOTSTRAP": authenticating_broker,
                "ARENA_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
                "ARENA_KAFKA_SASL_USERNAME": "nobody",
                "ARENA_KAFKA_SASL_PASSWORD": PASSWORD,
            }
        )
    )
    with pytest.raises(EventLogError) as caught:
        await log.start()
    message = str(caught.value)
    assert "SASL_PLAINTEXT, SCRAM-SHA-512 as 'nobody'" in message
    assert PASSWORD not in message


@pytest.mark.kafka
async def test_a_client_without_sasl_cannot_use_a_broker_that_requires_it(
    authenticating_broker: str,
) -> None:
    log = open_event_log(load_settings({"ARENA_KAFKA_BOOTSTRAP": authenticating_broker}))
    with pytest.raises(EventLogError, match=r"\(PLAINTEXT\)"):
        await log.start()
