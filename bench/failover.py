"""Failover of the match service: how long a partition's new owner takes to serve moves, with
snapshots (docs/eventlog.md, "Snapshots") beside the same-run baseline of a full replay.

The log: 100,000 finished matches (each opened, five moves, a resignation) appended straight to
the embedded log as records — one real match played through the runner, its records copied
with the match id changed — then live matches played through the runner on top. One partition
is measured (the log has 8, as ``ARENA_PARTITIONS`` by default), through the service's own
path: ``MatchWorker._gain`` (snapshot or replay, compaction, timers, the absent players'
commands), then one move decided and appended.

* **Baseline**: the partition replayed from its start (no snapshot), then a move.
* **Graceful handover**: the old owner snapshots at its stop, the new one resumes from it (no
  tail); the stall counts the snapshot the old owner takes before it leaves.
* **Crash**: the new owner resumes from the old owner's last periodic snapshot plus the tail
  written since (``ARENA_MATCH_SNAPSHOT_SECONDS`` of play at the bench's live load); the stall
  counts from the partition's assignment, i.e. from when the crash was detected (the session
  timeout before that is the broker's, see docs/operations.md).

The consumer group's own handover (the rebalance) is measured apart, on the embedded log and on
the Tansu broker (with its LeaveGroup fix): two members of the group "match", one stops
gracefully, and the time until the other owns every partition is the handover's own stall. Its
session and heartbeat are the product's settings (``ARENA_CONSUMER_SESSION_TIMEOUT_MS``,
``ARENA_CONSUMER_HEARTBEAT_MS``: their defaults, or as set in the bench's environment).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena_games.maths_warriors import wire as schema
from arena_games.registry import STANDARD
from arena_match.clock import now_ms
from arena_match.decide import MatchSettings
from arena_match.runner import Decider, MatchRunner
from arena_match.state import stream_of
from arena_match.worker import MatchWorker
from arena_runtime import topics
from arena_runtime.config import load_settings
from arena_runtime.envelope import SCHEMAS, new_command
from arena_runtime.eventlog import Consumer, EventLog, OutgoingRecord, Record
from arena_runtime.eventlog.embedded import EmbeddedEventLog
from arena_runtime.eventlog.kafka import KafkaEventLog
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.snapshots import SnapshotStore

from bench.match_memory import _create, scripted_move
from bench.targets import target_line

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.harness.kafka import TansuBroker

PARTITIONS = 8
FINISHED = 100_000
#: Live matches per partition, and moves played in each before the measurements.
LIVE_PER_PARTITION = 25
MOVES = 5
#: The crash's tail: moves written after the last periodic snapshot (30 s at one move per live
#: game every 2 s).
TAIL_MOVES = LIVE_PER_PARTITION * 15
CRASH_TARGET_S = 2.0
GRACEFUL_TARGET_S = 1.0
TEMPLATE = "b0000000"
ROUNDS = 3


async def _play(runner: MatchRunner, match_id: str, moves: int, end: bool) -> None:
    stream = stream_of(match_id)
    await runner.handle(new_command(stream, _create(match_id)))
    for _ in range(moves):
        await _move(runner, stream)
    if end:
        await runner.handle(new_command(stream, match_pb2.Resign(player_id=f"p_{match_id}_1")))


async def _move(runner: MatchRunner, stream: str) -> None:
    view = runner.view(stream) or await runner.load(stream)
    state = view.state
    game = state.game.game
    payload = schema.move_to_proto(scripted_move(game), state.seat(game.to_move).player_id)
    await runner.handle(new_command(stream, payload))
    runner.compact(stream)


async def _fill(event_log: EmbeddedEventLog, finished: int) -> list[str]:
    """The finished matches (copies of one played match), then the live ones; their streams."""
    STANDARD.register_schemas(SCHEMAS)  # as the service does (arena_match.service)
    runner = MatchRunner(event_log, Decider(MatchSettings(), now_ms))
    await _play(runner, TEMPLATE, MOVES, end=True)
    stream = stream_of(TEMPLATE)
    partition = partition_for(stream.encode(), PARTITIONS)
    records = await event_log.read(topics.MATCH_EVENTS, partition, 0, 100)
    template = [r.value for r in records if r.key == stream.encode()]
    batch: list[OutgoingRecord] = []
    for number in range(1, finished):
        match_id = f"b{number:07d}"
        key = stream_of(match_id).encode()
        where = partition_for(key, PARTITIONS)
        new = match_id.encode()
        batch.extend(
            OutgoingRecord(value.replace(TEMPLATE.encode(), new), key, partition=where)
            for value in template
        )
        if len(batch) >= 20_000:
            await event_log.append(topics.MATCH_EVENTS, batch)
            batch = []
    if batch:
        await event_log.append(topics.MATCH_EVENTS, batch)
    live = []
    for number in range(LIVE_PER_PARTITION * PARTITIONS):
        match_id = f"l{number:07d}"
        await _play(runner, match_id, MOVES, end=False)
        live.append(stream_of(match_id))
    return live


def _worker(event_log: EmbeddedEventLog, store: SnapshotStore | None) -> MatchWorker:
    runner = MatchRunner(event_log, Decider(MatchSettings(), now_ms))
    return MatchWorker(event_log, runner, 120, snapshots=store)


async def _serve(worker: MatchWorker, partition: int, stream: str) -> float:
    """Gain the partition and decide one move there: the stall, in seconds.

    The heap is collected first: the earlier rounds' runners are garbage a new owner's process
    would not hold, and a full collection over them would be timed here otherwise.
    """
    gc.collect()
    started = time.perf_counter()
    await worker._gain(partition)
    view = worker.runner.view(stream)
    assert view is not None
    game = view.state.game.game
    payload = schema.move_to_proto(scripted_move(game), view.state.seat(game.to_move).player_id)
    command = new_command(stream, payload)
    record = Record(topics.MATCH_COMMANDS, partition, 0, stream.encode(), b"")
    await worker._handle([(command, record)])
    return time.perf_counter() - started


async def _measure(finished: int) -> float:
    """The figures of the log's new owner; returns the graceful handover's stall."""
    with tempfile.TemporaryDirectory() as directory:
        event_log = EmbeddedEventLog(Path(directory) / "events.db")
        await event_log.start()
        try:
            await topics.ensure_topics(event_log, PARTITIONS)
            started = time.perf_counter()
            live = await _fill(event_log, finished)
            ends = await event_log.end_offsets(topics.MATCH_EVENTS)
            print(
                f"log: {finished:,} finished matches, {len(live)} live, "
                f"{sum(ends.values()):,} events, built in {time.perf_counter() - started:.1f} s"
            )
            store = SnapshotStore(event_log, topics.MATCH_EVENTS)
            stream = live[0]
            partition = partition_for(stream.encode(), PARTITIONS)
            mine = [s for s in live if partition_for(s.encode(), PARTITIONS) == partition]
            print(f"partition {partition}: {ends[partition]:,} events, {len(mine)} live matches")

            replays = [await _serve(_worker(event_log, None), partition, stream) for _ in range(3)]
            replay = statistics.median(replays)
            print(f"  baseline, full replay then a move: {replay:.2f} s (median of 3)")

            # The old owner: the partition read, its finished matches evicted (as after
            # ARENA_MATCH_EVICT_SECONDS), then its snapshot.
            owner = _worker(event_log, store)
            await owner._gain(partition)
            for view in list(owner.runner._streams.values()):
                if view.state.over:
                    owner.runner.evict(view.stream)
            takes, sizes = [], []
            for _ in range(ROUNDS):
                owner._snapshotted.clear()
                started = time.perf_counter()
                await owner.snapshot_owned()
                takes.append(time.perf_counter() - started)
                snapshot = await store.load(partition)
                assert snapshot is not None
                sizes.append(len(snapshot.encode()))
            take = statistics.median(takes)
            assert snapshot is not None
            print(
                f"  snapshot: {sizes[-1] / 1e3:,.0f} KB compressed "
                f"({len(snapshot.resting):,} finished matches by sequence, "
                f"{len(snapshot.records)} records of {len(mine)} live ones), "
                f"taken and saved in {take * 1000:.0f} ms (median of {ROUNDS})"
            )

            graceful = []
            for _ in range(ROUNDS):
                graceful.append(take + await _serve(_worker(event_log, store), partition, stream))
            stall = statistics.median(graceful)
            print(
                f"  graceful handover, the old owner's snapshot at its stop then resume and a "
                f"move: {stall:.2f} s (replay/this {replay / stall:.0f}x)  "
                + target_line(stall, "<=", GRACEFUL_TARGET_S, "1 s")
            )

            for number in range(TAIL_MOVES):
                await _move(owner.runner, mine[number % len(mine)])
            crashes = [
                await _serve(_worker(event_log, store), partition, stream) for _ in range(ROUNDS)
            ]
            crash = statistics.median(crashes)
            print(
                f"  crash, from its detection: the last periodic snapshot, a tail of "
                f"{TAIL_MOVES} moves, then a move: {crash:.2f} s (replay/this "
                f"{replay / crash:.0f}x)  " + target_line(crash, "<=", CRASH_TARGET_S, "2 s")
            )
        finally:
            await event_log.close()
    return stall


async def _handover(open_log: Callable[[], EventLog]) -> float:
    """Two members of "match"; the first stops gracefully: seconds until the other owns all."""
    first_log, second_log = open_log(), open_log()
    await first_log.start()
    await second_log.start()
    try:
        await topics.ensure_topics(first_log, PARTITIONS)
        first = first_log.consumer("match", [topics.MATCH_COMMANDS])
        second = second_log.consumer("match", [topics.MATCH_COMMANDS])
        await first.start()
        await second.start()
        stop_polling = asyncio.Event()

        async def poll(consumer: Consumer) -> None:
            while not stop_polling.is_set():
                await consumer.poll(timeout_ms=50)

        polling = [asyncio.create_task(poll(c)) for c in (first, second)]
        while not (first.assignment() and second.assignment()):  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        polling[0].cancel()
        await asyncio.gather(polling[0], return_exceptions=True)
        started = time.perf_counter()
        await first.stop()
        while len(second.assignment()) < PARTITIONS:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        took = time.perf_counter() - started
        stop_polling.set()
        await asyncio.gather(*polling, return_exceptions=True)
        await second.stop()
        return took
    finally:
        await first_log.close()
        await second_log.close()


def _kafka(bootstrap: str, prefix: str) -> EventLog:
    settings = load_settings()
    return KafkaEventLog(
        bootstrap,
        topic_prefix=prefix,
        session_timeout_ms=settings.consumer_session_timeout_ms,
        heartbeat_interval_ms=settings.consumer_heartbeat_ms,
    )


def _embedded(path: Path) -> EventLog:
    settings = load_settings()
    return EmbeddedEventLog(
        path,
        session_timeout_ms=settings.consumer_session_timeout_ms,
        heartbeat_interval_ms=settings.consumer_heartbeat_ms,
    )


async def _handovers(bootstrap: str, stall: float) -> None:
    settings = load_settings()
    print(
        "graceful handover of the consumer group alone (8 partitions move to the other member), "
        f"sessions {settings.consumer_session_timeout_ms} ms, "
        f"heartbeats {settings.consumer_heartbeat_ms} ms:"
    )
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "events.db"
        embedded = [await _handover(functools.partial(_embedded, path)) for _ in range(ROUNDS)]
    print(f"  embedded log: {statistics.median(embedded):.2f} s (median of {ROUNDS})")
    _whole("embedded log", statistics.median(embedded), stall)
    tansu = []
    for _ in range(ROUNDS):
        prefix = f"bench{secrets.token_hex(3)}."
        tansu.append(await _handover(functools.partial(_kafka, bootstrap, prefix)))
    print(f"  Tansu broker: {statistics.median(tansu):.2f} s (median of {ROUNDS})")
    _whole("Tansu broker", statistics.median(tansu), stall)


def _whole(where: str, handover: float, stall: float) -> None:
    whole = handover + stall
    print(
        f"  graceful handover with the group's own on the {where}: {whole:.2f} s  "
        + target_line(whole, "<=", GRACEFUL_TARGET_S, "1 s")
    )


def run(quick: bool = False) -> None:
    stall = asyncio.run(_measure(10_000 if quick else FINISHED))
    broker = TansuBroker()
    bootstrap = broker.start()
    try:
        asyncio.run(_handovers(bootstrap, stall))
    finally:
        broker.stop()


if __name__ == "__main__":
    run()
