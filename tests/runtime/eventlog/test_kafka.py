"""What only the Kafka log has to show: the topic settings it asks the broker for."""

from __future__ import annotations

import uuid

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from arena_runtime.eventlog import TopicSpec
from arena_runtime.eventlog.kafka import KafkaEventLog

pytestmark = pytest.mark.kafka


async def topic_config(bootstrap: str, name: str) -> dict[str, str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (response,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)])
    finally:
        await admin.close()
    (resource,) = response.resources
    return {entry[0]: entry[1] for entry in resource[4]}


async def test_event_topics_keep_everything_and_snapshots_compact(
    kafka_bootstrap: str, topic_prefix: str
) -> None:
    events, snapshots = f"ev.{uuid.uuid4().hex[:8]}", f"snap.{uuid.uuid4().hex[:8]}"
    async with KafkaEventLog(kafka_bootstrap, topic_prefix=topic_prefix) as log:
        await log.create_topics(
            [TopicSpec(events, partitions=3), TopicSpec(snapshots, partitions=2, compacted=True)]
        )
        assert await log.partitions(events) == 3
        assert await log.partitions(snapshots) == 2
    event_config = await topic_config(kafka_bootstrap, topic_prefix + events)
    assert event_config["retention.ms"] == "-1"
    assert event_config.get("cleanup.policy", "delete") == "delete"
    assert (await topic_config(kafka_bootstrap, topic_prefix + snapshots))[
        "cleanup.policy"
    ] == "compact"
