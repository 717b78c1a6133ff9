"""What only the Kafka log has to show: the topic settings it asks the broker for."""

from __future__ import annotations

import uuid

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from arena_runtime.eventlog import InvalidRequestError, TopicPartition, TopicSpec
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


async def test_a_stopped_member_leaves_its_group_at_once(
    kafka_bootstrap: str, topic_prefix: str
) -> None:
    """A member that stops leaves its group (LeaveGroup), also in the group's first generation:
    its successor is not kept waiting for the old session to expire (Tansu numbers generations
    from 0, and aiokafka leaves only above 0). The session is long enough that only the
    LeaveGroup can have removed the member by the time the group is described."""
    topic, group = f"lv.{uuid.uuid4().hex[:8]}", f"g.{uuid.uuid4().hex[:8]}"
    async with KafkaEventLog(
        kafka_bootstrap, topic_prefix=topic_prefix, session_timeout_ms=6_000
    ) as log:
        await log.create_topics([TopicSpec(topic, partitions=2)])
        member = log.consumer(group, [topic])
        await member.start()
        while not member.assignment():
            await member.poll(100)
        assert await group_members(kafka_bootstrap, topic_prefix + group) == 1
        await member.stop()
        assert await group_members(kafka_bootstrap, topic_prefix + group) == 0


async def group_members(bootstrap: str, group: str) -> int:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (described,) = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    (found,) = described.groups
    members = found[5]  # error, group, state, protocol type, protocol, members, ...
    return len(members)


async def test_a_reader_of_every_partition_joins_no_group(
    kafka_bootstrap: str, topic_prefix: str
) -> None:
    """The fan-out reader assigns itself its partitions: the broker holds no group of its name
    (a group's join is what made a gateway's start wait), and it has nothing to commit."""
    topic, group = f"rd.{uuid.uuid4().hex[:8]}", f"g.{uuid.uuid4().hex[:8]}"
    async with KafkaEventLog(kafka_bootstrap, topic_prefix=topic_prefix) as log:
        await log.create_topics([TopicSpec(topic, partitions=2)])
        async with log.consumer(group, [topic], every_partition=True) as reader:
            assert len(reader.assignment()) == 2
            await reader.poll(100)
            assert await group_members(kafka_bootstrap, topic_prefix + group) == 0
            assert await reader.committed(TopicPartition(topic, 0)) is None
            with pytest.raises(InvalidRequestError):
                await reader.commit({TopicPartition(topic, 0): 0})
