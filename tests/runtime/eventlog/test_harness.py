"""The broker harness finds a real broker and tells a Kafka listener from a closed port."""

from __future__ import annotations

import socket

import pytest

from tests.harness.kafka import answers_kafka
from tests.harness.support import free_port


@pytest.mark.kafka
def test_the_session_broker_answers_kafka(kafka_bootstrap: str, topic_prefix: str) -> None:
    host, port = kafka_bootstrap.rsplit(":", 1)
    assert answers_kafka(host, int(port))
    assert topic_prefix.startswith("t") and topic_prefix.endswith(".")


def test_a_closed_port_or_a_silent_listener_is_not_a_broker() -> None:
    assert not answers_kafka("127.0.0.1", free_port(), timeout=0.2)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert not answers_kafka("127.0.0.1", listener.getsockname()[1], timeout=0.2)
