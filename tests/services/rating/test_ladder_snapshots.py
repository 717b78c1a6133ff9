"""The ladder's snapshots (issue 12, item 5): a partition's new owner loads the ladder's encoded
state plus the log's tail instead of replaying its whole history, and holds exactly what a full
replay gives; a missing, stale or corrupt snapshot is ignored and rebuilt; a crash after a
snapshot and before the commands' offsets are committed loses nothing acknowledged and rates
nothing twice. On the embedded log and on the real broker. The bounded set of recorded match ids
is tested here too: the ids a ladder forgets are of matches it refuses anyway."""

from __future__ import annotations

import random
import zlib
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from arena_rating import ladder
from arena_rating.service import SNAPSHOTS, LadderCommands, build_service, ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import Command, Event, new_command
from arena_runtime.eventlog import EventLog
from arena_runtime.host import open_runtime
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import CASUAL, RANKED, ladder_stream, rate_command_id
from arena_runtime.snapshots import PartitionSnapshot, SnapshotStore
from arena_runtime.streams import Rejection, StreamRunner

from tests.runtime.conftest import OpenLog, open_log  # noqa: F401  (the fixture)
from tests.runtime.test_snapshots import ReadsOf
from tests.services.rating.test_replay import eventually

LADDER = ladder_stream("maths-warriors")
PARTITIONS = 2
T0 = 1_790_000_000_000
PLAYERS = [f"p_{n:02d}" for n in range(12)]
HUMAN = match_pb2.SEAT_KIND_HUMAN


def rate(match_id: str, ended_at_ms: int, rng: random.Random, mode: str = RANKED) -> pb.RateMatch:
    a, b = rng.sample(PLAYERS, 2)
    return pb.RateMatch(
        match_id=match_id,
        game="maths-warriors",
        mode=mode,
        reason="all_captured",
        ended_at_ms=ended_at_ms,
        seats=[
            pb.LadderPlayer(player_id=a, display_name=a.upper(), seat=1, kind=HUMAN, rank=1),
            pb.LadderPlayer(player_id=b, display_name=b.upper(), seat=2, kind=HUMAN, rank=2),
        ],
    )


def command(request: pb.RateMatch, command_id: str | None = None) -> Command:
    return new_command(LADDER, request, command_id=command_id or rate_command_id(request.match_id))


async def play(runner: StreamRunner[Any], rng: random.Random, first: int, count: int) -> list[Any]:
    """``count`` matches from number ``first``: ranked and casual, some sent again under their
    own id (answered again) or another (refused), one refused as invalid."""
    sent = []
    for number in range(first, first + count):
        request = rate(f"m{number:04d}", T0 + number * 1000, rng, RANKED if number % 3 else CASUAL)
        sent.append(command(request))
        await runner.handle(sent[-1])
        if number % 5 == 0:
            await runner.handle(rng.choice(sent))  # delivered again
        if number % 7 == 0:
            await runner.handle(command(request, f"other:{number}"))  # already_recorded
    bad = rate(f"m{first:04d}-bad", T0, rng)
    bad.seats[1].player_id = bad.seats[0].player_id
    await runner.handle(command(bad))  # same_player
    return sent


def held(runner: StreamRunner[Any]) -> tuple[Any, ...]:
    view = runner.view(LADDER)
    assert view is not None
    return view.state, view.sequence, view.batch_id, dict(view.answers)


@pytest.fixture
async def log(open_log: OpenLog) -> AsyncIterator[EventLog]:  # noqa: F811
    event_log = open_log()
    await event_log.start()
    await topics.ensure_topics(event_log, PARTITIONS)
    yield event_log
    await event_log.close()


async def test_a_ladder_resumed_from_its_snapshot_plus_the_tail_equals_a_full_replay(
    log: EventLog,
) -> None:
    rng = random.Random(12)
    store = SnapshotStore(log, topics.RATING_EVENTS)
    owner = ladder_runner(log)
    await play(owner, rng, 0, 60)
    partition = await owner.partition_of(LADDER)
    assert await owner.save_snapshot(partition, store) is not None
    snapshot = await store.load(partition)
    assert snapshot is not None
    # The ladder is kept as its state and its answers, not as its history's records.
    assert [s[0] for s in snapshot.states] == [LADDER] and snapshot.records == ()
    tail = await play(owner, rng, 60, 25)  # written after the snapshot

    reads = ReadsOf(log, topics.RATING_EVENTS)
    resumed = ladder_runner(reads)  # type: ignore[arg-type]
    _, used = await resumed.gain_partition(partition, store)
    assert used
    assert all(offset >= snapshot.position - 1 for p, offset in reads.reads if p == partition)
    replayed = ladder_runner(log)
    await replayed.catch_up_partition(partition)
    # The live owner holds its answers' events as it wrote them (schema_version of the code);
    # the two readers as logged: compared with each other whole, with the owner in all else.
    assert held(resumed) == held(replayed)
    assert held(resumed)[:3] == held(owner)[:3] and held(resumed)[3].keys() == held(owner)[3].keys()
    # Both decide the next commands alike: a new match, and one answered in the tail.
    nxt = command(rate("m9999", T0 + 99_000_000, random.Random(1)))
    assert (await resumed.handle(tail[-1])).repeated
    first = await resumed.handle(nxt)
    assert first.accepted and not first.repeated
    replayed.forget_end(partition)
    assert [e.payload for e in (await replayed.handle(nxt)).events] == [
        e.payload for e in first.events
    ]


async def test_a_crash_after_the_snapshot_before_the_commit_loses_nothing_acknowledged(
    log: EventLog,
) -> None:
    """The commands answered before the snapshot, whose offsets the crashed owner never
    committed, come again to the next owner: each gets its first answer, nothing is appended."""
    rng = random.Random(3)
    store = SnapshotStore(log, topics.RATING_EVENTS)
    owner = ladder_runner(log)
    answered = await play(owner, rng, 0, 30)
    partition = await owner.partition_of(LADDER)
    assert await owner.save_snapshot(partition, store) is not None
    answers = {c.command_id: owner.view(LADDER).answers[c.command_id] for c in answered}  # type: ignore[union-attr]
    end = await log.end_offset(topics.RATING_EVENTS, partition)
    # The crash: the owner is gone; the next one resumes and is sent every command again.
    nxt = ladder_runner(log)
    assert (await nxt.gain_partition(partition, store))[1]
    for again in answered:
        answer = await nxt.handle(again)
        assert answer.repeated
        assert ids(answer) == ids(answers[again.command_id])
    assert await log.end_offset(topics.RATING_EVENTS, partition) == end
    assert held(nxt)[0] == held(owner)[0]


def ids(answer: Any) -> list[str]:
    return [event.event_id for event in answer.events]


async def replay(log: EventLog, partition: int) -> StreamRunner[Any]:
    replayed = ladder_runner(log)
    await replayed.catch_up_partition(partition)
    return replayed


def corrupt(snapshot: PartitionSnapshot, how: str) -> PartitionSnapshot:
    if how == "another version":
        return replace(snapshot, version="ladder-0")
    if how == "undecodable state":
        (stream, sequence, batch_id, _, answered), *_ = snapshot.states
        return replace(snapshot, states=((stream, sequence, batch_id, b'{"game":', answered),))
    if how == "another log":  # the same names, another history: the record it followed differs
        return replace(snapshot, check=zlib.crc32(b"not this log"))
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["another version", "undecodable state", "another log"])
async def test_a_stale_or_corrupt_snapshot_is_replayed_over_and_never_used(
    log: EventLog, how: str
) -> None:
    rng = random.Random(7)
    store = SnapshotStore(log, topics.RATING_EVENTS)
    owner = ladder_runner(log)
    await play(owner, rng, 0, 20)
    partition = await owner.partition_of(LADDER)
    snapshot = await owner.take_snapshot(partition)
    assert snapshot is not None
    # A snapshot that claims other ratings: had it been used, they would show.
    state = ladder.decode(LADDER, snapshot.states[0][3])
    state.ratings = {player: 2500 for player in state.ratings}
    (stream, sequence, batch_id, _, answered), *_ = snapshot.states
    forged = replace(
        snapshot, states=((stream, sequence, batch_id, ladder.encode(state), answered),)
    )
    control = ladder_runner(log)  # the forgery unspoilt is used: the check below can fail
    assert await control.resume_partition(partition, forged)
    assert held(control)[0].ratings != held(owner)[0].ratings
    await store.save(corrupt(forged, how))
    resumed = ladder_runner(log)
    _, used = await resumed.gain_partition(partition, store)
    assert not used
    assert held(resumed) == held(await replay(log, partition))


async def test_the_service_rebuilds_a_missing_or_corrupt_snapshot_when_it_replays(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path, partitions=PARTITIONS, rating_snapshot_seconds=0)
    rng = random.Random(9)
    async with open_runtime(settings) as runtime:
        await topics.ensure_topics(runtime.log, PARTITIONS)
        writer = ladder_runner(runtime.log)
        await play(writer, rng, 0, 15)
        partition = await writer.partition_of(LADDER)
        store = SnapshotStore(runtime.log, topics.RATING_EVENTS)
        snapshot = await writer.take_snapshot(partition)
        assert snapshot is not None
        await store.save(corrupt(snapshot, "undecodable state"))
        end = await runtime.log.end_offset(topics.RATING_EVENTS, partition)

        service = await build_service(runtime)
        (worker,) = [w for w in service.workers if isinstance(w, LadderCommands)]
        await service.start()
        try:
            await eventually(lambda: _ready(worker), "the rating service ready")
            rebuilt = await store.load(partition)
            # Rebuilt right after the replay: valid, at the log's end, the ladder as replayed.
            assert rebuilt is not None and rebuilt.position == end
            assert rebuilt.version == SNAPSHOTS.version
            assert ladder.decode(LADDER, rebuilt.states[0][3]) == held(writer)[0]
            assert held(worker.runner) == held(await replay(runtime.log, partition))
        finally:
            await service.stop()


async def _ready(worker: LadderCommands) -> bool:
    return worker.ready()


def test_ids_older_than_the_window_are_forgotten_and_their_matches_refused() -> None:
    rng = random.Random(4)
    state = ladder.initial(LADDER)
    window = ladder.RECORDED_WINDOW_MS

    def record(match_id: str, ended: int) -> Any:
        decided = ladder.decide(state, command(rate(match_id, ended, rng)))
        if not isinstance(decided, Rejection):
            for number, payload in enumerate(decided, start=1):
                ladder.apply(state, _event(payload, number))
            return decided[0]
        return decided

    record("old", T0)
    record("edge", T0 + 1)
    record("new", T0 + window + 1)  # the horizon moves to T0 + 1
    assert state.recorded.keys() == {"edge", "new"}
    # Forgotten, and refused: never rated twice. A match as old, never seen, is refused too.
    for match_id, ended in (("old", T0), ("unseen", T0)):
        refused = record(match_id, ended)
        assert isinstance(refused, Rejection) and refused.code == ladder.TOO_LATE
    # On the horizon: still remembered, so refused as recorded; a new one there is rated.
    again = record("edge", T0 + 1)
    assert isinstance(again, Rejection) and again.code == ladder.ALREADY_RECORDED
    assert isinstance(record("late", T0 + 1), pb.MatchRated)
    # A snapshot keeps the window and the order the ids go in.
    copy = ladder.decode(LADDER, ladder.encode(state))
    assert copy == state and list(copy.order) == list(state.order)


def _event(payload: Any, sequence: int) -> Event:
    when = datetime(2026, 12, 1, tzinfo=UTC)
    return Event(
        f"e{sequence}", LADDER, sequence, type(payload).DESCRIPTOR.full_name, payload, when
    )
