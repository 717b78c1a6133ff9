"""A topic that exists with another partition count or replication factor than configured stops
start-up with an error naming the setting and the topic; replication and min ISR reach the broker.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from arena_runtime import topics
from arena_runtime.config import ConfigError
from arena_runtime.eventlog.kafka import KafkaEventLog

from tests.runtime.eventlog.conftest import LogMaker
from tests.runtime.eventlog.test_kafka import topic_config


async def test_another_partition_count_names_the_topic_and_the_setting(make_log: LogMaker) -> None:
    async with make_log() as log:
        await topics.ensure_topics(log, partitions=2)
        await topics.ensure_topics(log, partitions=2)  # the same layout: nothing to say
    async with make_log() as log:  # a restart with another ARENA_PARTITIONS
        with pytest.raises(ConfigError) as caught:
            await topics.ensure_topics(log, partitions=3)
        assert await log.partitions(topics.MATCH_COMMANDS) == 2  # left as it was
    assert caught.value.variable == "ARENA_PARTITIONS"
    assert "exists with partitions 2, not the 3 configured" in str(caught.value)
    assert "arena.commands." in str(caught.value)


@pytest.fixture
def kafka_log(kafka_bootstrap: str) -> Callable[..., KafkaEventLog]:
    """Kafka logs over topics of their own (one prefix per test)."""
    prefix = f"layout.{uuid.uuid4().hex[:8]}."

    def make(**options: Any) -> KafkaEventLog:
        return KafkaEventLog(kafka_bootstrap, topic_prefix=prefix, **options)

    return make


@pytest.mark.kafka
async def test_another_replication_factor_names_the_topic_and_the_setting(
    kafka_log: Callable[..., KafkaEventLog],
) -> None:
    async with kafka_log(replication_factor=1) as log:
        await topics.ensure_topics(log, partitions=2)
    async with kafka_log(replication_factor=2) as log:
        with pytest.raises(ConfigError) as caught:
            await topics.ensure_topics(log, partitions=2)
    assert caught.value.variable == "ARENA_KAFKA_REPLICATION_FACTOR"
    assert "exists with replication factor 1, not the 2 configured" in str(caught.value)


@pytest.mark.kafka
async def test_replication_and_min_insync_replicas_reach_the_broker(
    kafka_bootstrap: str, kafka_log: Callable[..., KafkaEventLog]
) -> None:
    # Tansu is one node, but it records the replication factor asked for and reports it back.
    async with kafka_log(replication_factor=3, min_insync_replicas=2) as log:
        await topics.ensure_topics(log, partitions=2)
        name = log.physical(topics.MATCH_EVENTS)
    config = await topic_config(kafka_bootstrap, name)
    assert config["min.insync.replicas"] == "2"
    assert config["retention.ms"] == "-1"
    async with kafka_log(replication_factor=3) as log:
        await topics.ensure_topics(log, partitions=2)  # the same layout: accepted
