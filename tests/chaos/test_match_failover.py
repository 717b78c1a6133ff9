"""Chaos on the distributed stack: two `arena match` instances in one consumer group over the
Tansu broker (PostgreSQL and Redis configured too, as in production); `kill -9` one of them.
Its partitions move to the other, which resumes their streams from the snapshots the dead one
left plus the tail, re-arms their timers, and the games go on; `arena verify` confirms the whole
log afterwards."""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_match.state import stream_of
from arena_match.verify import verify_log
from arena_runtime import topics
from arena_runtime.config import load_settings
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.snapshots import SnapshotStore

from tests.chaos.test_match_restarts import (
    Ledger,
    _answer,
    _play,
    assert_every_original_answered_once,
)
from tests.harness.postgres import database_of_its_own
from tests.processes.arena_process import ArenaProcess, arena_env, free_port
from tests.services.match.harness import BOB, MatchClient, create

PARTITIONS = 4
GAMES_PER_PARTITION = 1
SESSION_TIMEOUT_MS = 6000
MOVES_AFTER_KILL = 8

pytestmark = [pytest.mark.slow, pytest.mark.kafka, pytest.mark.postgres, pytest.mark.redis]

GAINED = re.compile(r"partition gained.*?partition=(\d+)")
RESUMED = re.compile(r"partition gained.*?from_snapshot=True.*?partition=(\d+)")
#: Snapshots this often, so that the killed instance has left some (the default is 30 s).
SNAPSHOT_SECONDS = 0.5
LOST = re.compile(r"partition lost.*?partition=(\d+)")


def _ids_per_partition(prefix: str) -> dict[int, list[str]]:
    """Match ids chosen so that every partition holds GAMES_PER_PARTITION games and one stall."""
    chosen: dict[int, list[str]] = {p: [] for p in range(PARTITIONS)}
    number = 0
    while any(len(ids) < GAMES_PER_PARTITION + 1 for ids in chosen.values()):
        match_id = f"{prefix}{number}"
        partition = partition_for(stream_of(match_id).encode(), PARTITIONS)
        if len(chosen[partition]) < GAMES_PER_PARTITION + 1:
            chosen[partition].append(match_id)
        number += 1
    return chosen


def _owned(output: str) -> set[int]:
    """The partitions an instance holds, from its log lines in order."""
    owned: set[int] = set()
    for line in output.splitlines():
        if gained := GAINED.search(line):
            owned.add(int(gained.group(1)))
        elif lost := LOST.search(line):
            owned.discard(int(lost.group(1)))
    return owned


async def _until(predicate: object, what: str, within: float = 60.0) -> None:
    assert callable(predicate)
    for _ in range(int(within * 10)):
        if predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never: {what}")


@pytest.fixture
async def env(
    tmp_path: Path, kafka_bootstrap: str, topic_prefix: str, postgres_url: str, redis_url: str
) -> dict[str, str]:
    return arena_env(
        tmp_path,
        0,
        ARENA_KAFKA_BOOTSTRAP=kafka_bootstrap,
        ARENA_TOPIC_PREFIX=f"{topic_prefix}failover.",
        ARENA_DATABASE_URL=database_of_its_own(postgres_url),
        ARENA_REDIS_URL=redis_url,
        ARENA_PARTITIONS=str(PARTITIONS),
        ARENA_MATCH_AI_THINK_MS="50",
        ARENA_CONSUMER_SESSION_TIMEOUT_MS=str(SESSION_TIMEOUT_MS),
        ARENA_CONSUMER_HEARTBEAT_MS="500",
        ARENA_MATCH_SNAPSHOT_SECONDS=str(SNAPSHOT_SECONDS),
    )


@pytest.fixture
async def kafka_log(env: dict[str, str]) -> AsyncIterator[EventLog]:
    settings = load_settings({k: v for k, v in env.items() if k.startswith("ARENA_")})
    async with open_event_log(settings) as event_log:
        await topics.ensure_topics(event_log, PARTITIONS)
        yield event_log


async def test_killing_one_of_two_instances_moves_its_games_to_the_other(
    tmp_path: Path, env: dict[str, str], kafka_log: EventLog
) -> None:
    client = MatchClient(kafka_log)
    ledger = Ledger()
    instances = []
    ports: set[int] = set()
    while len(ports) < 2:  # two calls may return the same free port
        ports.add(free_port())
    for name, port in zip(("a", "b"), sorted(ports), strict=True):
        instance_env = {**env, "ARENA_HTTP_PORT": str(port), "ARENA_SERVICE_NAME": name}
        instances.append(ArenaProcess(["match"], instance_env, tmp_path / f"match-{name}.log"))
    a, b = instances
    try:
        for instance in instances:
            instance.wait_until("/readyz", 200, timeout=90)
        await _until(
            lambda: (
                _owned(a.output()) | _owned(b.output()) == set(range(PARTITIONS))
                and _owned(a.output())
                and _owned(b.output())
            ),
            "both instances own partitions",
        )
        ids = _ids_per_partition("f")
        stalls = {partition: match_ids[0] for partition, match_ids in ids.items()}
        games = [match_id for match_ids in ids.values() for match_id in match_ids[1:]]
        for match_id in stalls.values():
            await client.send(match_id, create(match_id, move_seconds=1), f"{match_id}:create")
        for match_id in games:
            await client.send(match_id, create(match_id), f"{match_id}:create")
        for match_id in (*stalls.values(), *games):
            await client.answer(match_id, f"{match_id}:create", within=60)

        # Kill the instance holding the most partitions (a's on a tie), once it has snapshotted
        # them: the survivor resumes them from those snapshots plus the tail since.
        victim, survivor = (a, b) if len(_owned(a.output())) >= len(_owned(b.output())) else (b, a)
        moved = _owned(victim.output())
        store = SnapshotStore(kafka_log, topics.MATCH_EVENTS)
        for partition in moved:
            for _ in range(300):
                if await store.load(partition) is not None:
                    break
                await asyncio.sleep(0.1)
            assert await store.load(partition) is not None, f"no snapshot of {partition}"
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait()
        killed_at = {m: len(await client.events(m)) for m in stalls.values()}

        # Every game is played on, those of the dead instance's partitions included.
        await asyncio.gather(
            *(
                _play(client, match_id, ledger, seed, MOVES_AFTER_KILL)
                for seed, match_id in enumerate(games)
            )
        )
        await _until(
            lambda: _owned(survivor.output()) == set(range(PARTITIONS)),
            "the survivor owns every partition",
        )
        resumed = {int(m.group(1)) for m in RESUMED.finditer(survivor.output())}
        assert moved <= resumed, "the survivor replayed partitions it had snapshots of"
        for partition in moved:
            stalled = stalls[partition]
            # Its move clock goes on under the new owner: timeouts after the kill.
            for _ in range(300):
                if len(await client.events(stalled)) > killed_at[stalled] + 1:
                    break
                await asyncio.sleep(0.1)
            later = (await client.events(stalled))[killed_at[stalled] :]
            assert any(
                isinstance(e.payload, pb.TurnSkipped) and e.payload.reason == "timeout"
                for e in later
            ), f"no timeout in {stalled} after its partition moved"
        for match_id in stalls.values():
            await _answer(
                client, match_id, match_pb2.Resign(player_id=BOB), f"{match_id}:end", ledger
            )
        await assert_every_original_answered_once(client, ledger)

        for _ in range(300):
            report = await verify_log(kafka_log)
            if not report.unanswered:
                break
            await asyncio.sleep(0.1)
        assert report.problems == [] and report.unanswered == []
        assert report.matches == len(games) + len(stalls)
    finally:
        for instance in instances:
            instance.close()
