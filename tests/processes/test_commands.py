"""`arena serve` and the single-service commands as real processes: they answer /healthz and
/readyz, and SIGTERM or Ctrl-C (SIGINT) stops them with exit code 0 after committing what they
read."""

from __future__ import annotations

import re
import signal
import sqlite3
from pathlib import Path

import arena_match.service
import arena_matchmaking.service
import arena_rating.service
import pytest
from arena_cli.commands.serve import SERVICES
from arena_runtime import topics
from arena_runtime.config import Settings, load_settings
from arena_runtime.eventlog import OutgoingRecord, TopicPartition
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.sql.engine import SQLITE_FILE
from arena_runtime.sql.stream_activity import EVENT_TOPICS
from arena_runtime.topics import ensure_topics

from tests.harness.kafka import ConsumerTimings
from tests.harness.postgres import database_of_its_own
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

# Per consumer group, the topics it reads: commands in a group named after the service, events
# in "<service>.events". (The gateway reads events per instance, not as a group.)
CONSUMES: dict[str, tuple[str, ...]] = {}
for module in (arena_match.service, arena_matchmaking.service, arena_rating.service):
    if commands := getattr(module, "COMMANDS", ()):
        CONSUMES[module.NAME] = commands
    if events := getattr(module, "EVENTS", ()):
        CONSUMES[f"{module.NAME}.events"] = events
BACKLOG_PER_TOPIC = 200


def settings_for(data_dir: Path) -> Settings:
    return load_settings({"ARENA_DATA_DIR": str(data_dir)})


async def seed_backlog(settings: Settings) -> dict[str, dict[int, int]]:
    """Records on every consumed topic before the process starts, so readiness means work."""
    log = open_event_log(settings)
    await log.start()
    try:
        await ensure_topics(log, settings.partitions)
        for topic in topics.ALL:
            records = [
                OutgoingRecord(value=b"not an envelope %d" % i, key=b"stream-%d" % (i % 17))
                for i in range(BACKLOG_PER_TOPIC)
            ]
            await log.append(topic, records)
        return {topic: await log.end_offsets(topic) for topic in topics.ALL}
    finally:
        await log.close()


async def assert_committed(settings: Settings, ends: dict[str, dict[int, int]]) -> None:
    """Each group has committed every record on its topics: the backlog seeded before the start
    (``ends``) and whatever the services appended themselves (the season clock's command)."""
    log = open_event_log(settings)
    await log.start()
    try:
        for group in CONSUMES:
            consumer = log.consumer(group, CONSUMES[group])
            await consumer.start()
            try:
                for topic in CONSUMES[group]:
                    committed = {
                        p: await consumer.committed(TopicPartition(topic, p)) or 0
                        for p in ends[topic]
                    }
                    assert committed == await log.end_offsets(topic), (group, topic)
                    assert all(committed[p] >= ends[topic][p] for p in ends[topic]), (group, topic)
            finally:
                await consumer.stop()
    finally:
        await log.close()


async def test_serve_runs_all_four_services_and_commits_on_sigterm(tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    ends = await seed_backlog(settings_for(data_dir))
    arena = ArenaProcess(["serve"], arena_env(data_dir, free_port()), tmp_path / "serve.log")
    try:
        assert arena.wait_until("/healthz", 200).json() == {"status": "alive"}
        ready = arena.wait_until("/readyz", 200).json()
        assert ready["services"] == dict.fromkeys(SERVICES, True)
        metrics = arena.get("/metrics").text
        for name in SERVICES:
            assert f'arena_service_ready{{service="{name}"}} 1.0' in metrics
        frozen = re.search(r"^arena_gc_frozen_objects (\S+)$", metrics, re.MULTILINE)
        assert frozen is not None and float(frozen.group(1)) > 10_000  # start-up's heap, frozen
        assert arena.get("/openapi.json").status_code == 200  # the gateway's app is behind
        # The backlog is not envelopes: every record was skipped as malformed, none stopped a loop.
        malformed = (
            'arena_malformed_records_total{group="match",reason="undecodable",'
            f'topic="arena.commands.match"}} {BACKLOG_PER_TOPIC}.0'
        )
        assert malformed in metrics
    finally:
        code = arena.terminate(signal.SIGTERM)
    assert code == 0, arena.output()
    await assert_committed(settings_for(data_dir), ends)
    # The projections ran too: stream_activity counted every keyed record on the event topics.
    with sqlite3.connect(data_dir / SQLITE_FILE) as db:
        (counted,) = db.execute("SELECT sum(records) FROM stream_activity").fetchone()
    assert counted == sum(sum(ends[t].values()) for t in EVENT_TOPICS)


# Ctrl-C (SIGINT) is checked on one of them: every command is the same host, whose handler
# treats SIGINT and SIGTERM alike, and a process start costs several seconds.
STOP_SIGNAL = dict.fromkeys(SERVICES, signal.SIGTERM) | {"match": signal.SIGINT}


@pytest.mark.parametrize("name", list(SERVICES))
def test_single_service_command_answers_health_and_stops(tmp_path: Path, name: str) -> None:
    arena = ArenaProcess([name], arena_env(tmp_path / "var", free_port()), tmp_path / "log")
    try:
        arena.wait_until("/healthz", 200)
        assert arena.wait_until("/readyz", 200).json()["services"] == {name: True}
        # Only the gateway has an HTTP API beyond the probes.
        assert arena.get("/openapi.json").status_code == (200 if name == "gateway" else 404)
    finally:
        code = arena.terminate(STOP_SIGNAL[name])
    assert code == 0, arena.output()


@pytest.fixture
def own_database(postgres_url: str) -> str:
    """A database of this test's own: serving migrates it, which must not touch other tests'."""
    return database_of_its_own(postgres_url)


@pytest.mark.kafka
@pytest.mark.postgres
@pytest.mark.redis
async def test_serve_runs_distributed_when_given_kafka_postgres_and_redis(
    tmp_path: Path,
    kafka_bootstrap: str,
    kafka_consumer_timings: ConsumerTimings,
    topic_prefix: str,
    own_database: str,
    redis_url: str,
) -> None:
    distributed = {
        **kafka_consumer_timings.settings(),
        "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "ARENA_TOPIC_PREFIX": f"{topic_prefix}serve.",
        "ARENA_DATABASE_URL": own_database,
        "ARENA_REDIS_URL": redis_url,
        "ARENA_PARTITIONS": "2",
    }
    data_dir = tmp_path / "var"
    settings = load_settings({"ARENA_DATA_DIR": str(data_dir), **distributed})
    await seed_backlog(settings)
    env = arena_env(data_dir, free_port(), **distributed)
    arena = ArenaProcess(["serve"], env, tmp_path / "serve.log")
    try:
        ready = arena.wait_until("/readyz", 200).json()
        assert ready["services"] == dict.fromkeys(SERVICES, True)
    finally:
        code = arena.terminate(signal.SIGTERM)
    assert code == 0, arena.output()
    assert not data_dir.exists()  # nothing ran embedded
    # Readiness counts only offsets the broker acknowledged committing, so it already showed every
    # group's commits on Kafka; reading them back would cost a rebalance per group.
