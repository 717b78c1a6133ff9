"""Snapshots of a stream runner's partitions, on the embedded log and the real broker: a runner
resumed from a snapshot plus the tail holds what a full replay gives, reads only the tail, and
falls back to a full replay whenever the snapshot is missing, unreadable or not valid for it."""

from __future__ import annotations

import random
import zlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

import pytest
from arena_runtime import snapshots as snapshots_module
from arena_runtime.eventlog import EventLog, OutgoingRecord, Record, TopicSpec
from arena_runtime.snapshots import (
    MAGIC,
    PartitionSnapshot,
    SnapshotPolicy,
    SnapshotStore,
)
from arena_runtime.streams import StreamRunner

from tests.runtime.conftest import OpenLog
from tests.runtime.test_streams import CODEC, LIMIT, Tally, apply, command, decide, initial

#: The tally's rest: a full tally the test "service" has put to rest (like an evicted match).
REST = Tally(LIMIT, ("rest",))
POLICY: SnapshotPolicy[Tally] = SnapshotPolicy(
    "tally-1", at_rest=lambda state: state == REST, rest=lambda _: REST
)
PARTITIONS = 2


def runner(log: EventLog, topic: str, policy: SnapshotPolicy[Tally] | None = POLICY) -> Any:
    return StreamRunner(
        log, topic, initial=initial, apply=apply, decide=decide, codec=CODEC, snapshots=policy
    )


def put_to_rest(tally: StreamRunner[Tally], stream: str) -> None:
    """What a service does to a stream it is done with (the match service's evict)."""
    assert tally.forget_answers(stream, lambda state: True)
    view = tally.view(stream)
    assert view is not None
    view.state = REST


def held(tally: StreamRunner[Tally], streams: Sequence[str]) -> dict[str, Any]:
    """Everything a runner holds of each stream: state, sequence, batch, answers."""
    out = {}
    for stream in streams:
        view = tally.view(stream)
        assert view is not None, stream
        out[stream] = (view.state, view.sequence, view.batch_id, dict(view.answers))
    return out


class ReadsOf:
    """The real log, noting the offsets this process reads of one topic."""

    def __init__(self, inner: EventLog, topic: str) -> None:
        self._inner, self._topic = inner, topic
        self.reads: list[tuple[int, int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def read(
        self, topic: str, partition: int, offset: int, max_records: int = 1000
    ) -> list[Record]:
        if topic == self._topic:
            self.reads.append((partition, offset))
        return await self._inner.read(topic, partition, offset, max_records)


@pytest.fixture
async def log(open_log: OpenLog, unique_topic: str) -> AsyncIterator[EventLog]:
    event_log = open_log()
    await event_log.start()
    await event_log.create_topics([TopicSpec(unique_topic, partitions=PARTITIONS)])
    await SnapshotStore(event_log, unique_topic).ensure(PARTITIONS)
    yield event_log
    await event_log.close()


async def play(tally: StreamRunner[Tally], streams: Sequence[str], rng: random.Random) -> None:
    """Commands on ``streams``: adds, double adds, resets, rejections and repeated ids."""
    sent: list[Any] = []
    for _ in range(len(streams) * 6):
        stream = rng.choice(streams)
        if sent and rng.random() < 0.15:
            await tally.handle(rng.choice(sent))  # delivered again: answered once
            continue
        kind = rng.choice(["tally.Add", "tally.Add", "tally.AddTwice", "tally.Reset"])
        one = command(stream, f"c{rng.getrandbits(48):x}", rng.randint(1, 4), type=kind)
        sent.append(one)
        if rng.random() < 0.3:
            await tally.handle_batch([one, command(stream, f"c{rng.getrandbits(48):x}", 1)])
        else:
            await tally.handle(one)


async def test_a_new_owner_resumes_from_a_snapshot_plus_the_tail_as_a_full_replay_would(
    log: EventLog, unique_topic: str
) -> None:
    rng = random.Random(18)
    store = SnapshotStore(log, unique_topic)
    streams = [f"t-{n}" for n in range(24)]
    owner = runner(log, unique_topic)
    await play(owner, streams, rng)
    rested = streams[:8]
    for stream in rested:
        put_to_rest(owner, stream)
    snapshots = {}
    for partition in range(PARTITIONS):
        saved = await owner.save_snapshot(partition, store)
        assert saved is not None and saved.chunks == 1
        snapshots[partition] = await store.load(partition)
    # Resting streams are kept as their sequence alone, the others as their records.
    kept = {s for snap in snapshots.values() for s, _, _ in snap.resting}
    assert kept == set(rested)
    await play(owner, streams[8:], rng)  # the tail, written after the snapshots

    reads = ReadsOf(log, unique_topic)
    resumed = runner(reads, unique_topic)
    for partition in range(PARTITIONS):
        _, used = await resumed.gain_partition(partition, store)
        assert used
        # Only the tail was read from the log (and the one record the snapshot was taken after).
        assert all(
            offset >= snapshots[partition].position - 1
            for p, offset in reads.reads
            if p == partition
        )
    replayed = runner(log, unique_topic, policy=None)
    await replayed.catch_up()
    for stream in rested:
        put_to_rest(replayed, stream)
    assert held(resumed, streams) == held(owner, streams) == held(replayed, streams)

    # Resumed, a runner decides as the owner did: a repeated command is answered once, and a
    # stream at rest goes on from its sequence.
    again = await resumed.handle(command(streams[10], "late", 1))
    assert (await resumed.handle(command(streams[10], "late", 1))).repeated
    woken = await resumed.handle(command(rested[0], "wake", 1))  # refused: over the limit
    assert woken.rejection is not None and woken.rejection.code == "over_limit"
    assert woken.events[0].sequence == owner.view(rested[0]).sequence + 1
    assert again.accepted or again.rejection is not None

    # A stream back from rest is kept as its rest plus its records since.
    for partition in range(PARTITIONS):
        await resumed.save_snapshot(partition, store)
    third = runner(log, unique_topic)
    for partition in range(PARTITIONS):
        assert (await third.gain_partition(partition, store))[1]
    assert held(third, streams) == held(resumed, streams)


async def test_a_big_snapshot_is_cut_into_chunks_and_read_back_whole(
    log: EventLog, unique_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshots_module, "CHUNK_BYTES", 64)
    store = SnapshotStore(log, unique_topic)
    owner = runner(log, unique_topic)
    await play(owner, [f"t-{n}" for n in range(10)], random.Random(3))
    taken = await owner.take_snapshot(0)
    assert taken is not None
    saved = await store.save(taken)
    assert saved.chunks > 3
    assert await store.load(0) == taken


async def test_a_snapshot_not_valid_for_the_runner_or_the_log_falls_back_to_a_full_replay(
    log: EventLog, unique_topic: str
) -> None:
    store = SnapshotStore(log, unique_topic)
    streams = [f"t-{n}" for n in range(8)]
    owner = runner(log, unique_topic)
    await play(owner, streams, random.Random(7))
    taken = await owner.take_snapshot(0)
    assert taken is not None and taken.position > 0
    end = await log.end_offset(unique_topic, 0)
    invalid = {
        "another version": replace(taken, version="tally-2"),
        "another partition count": replace(taken, partitions=PARTITIONS + 1),
        "ahead of the log": replace(taken, position=end + 1),
        "another log (rebuilt)": replace(taken, check=taken.check ^ 1),
    }
    for why, snapshot in invalid.items():
        fresh = runner(log, unique_topic)
        assert not await fresh.resume_partition(0, snapshot), why
    assert await runner(log, unique_topic).resume_partition(0, taken)  # the control
    # Resting streams, for a runner whose service has no rest rule (any more).
    no_rest = runner(log, unique_topic, SnapshotPolicy("tally-1"))
    assert not await no_rest.resume_partition(0, replace(taken, resting=(("t-0", 1, ""),)))

    async def gained(extra: Sequence[OutgoingRecord]) -> bool:
        if extra:
            await log.append(store.topic, extra)
        fresh = runner(log, unique_topic)
        _, used = await fresh.gain_partition(0, store)
        await owner.catch_up()
        assert held(fresh, streams_of(fresh, 0)) == held(owner, streams_of(fresh, 0))
        return used

    assert not await gained([])  # no snapshot at all
    await store.save(taken)
    assert await gained([])
    garbage = OutgoingRecord(b"not a snapshot", key=b"0:0", partition=0)
    assert not await gained([garbage])
    await store.save(taken)
    assert await gained([])
    # An unknown format: the newest record says a format this code does not read.
    header = snapshots_module._HEADER
    future = header.pack(MAGIC, snapshots_module.FORMAT + 1, b"x" * 16, 0, 1, 0) + b"{}"
    assert not await gained([OutgoingRecord(future, key=b"0:0", partition=0)])
    # Chunks of two writers interleaved (a zombie saving at the same time) do not match.
    blob = taken.encode()
    crc, half = zlib.crc32(blob), len(blob) // 2

    def chunk(writer: bytes, index: int, piece: bytes) -> OutgoingRecord:
        value = header.pack(MAGIC, snapshots_module.FORMAT, writer * 16, index, 2, crc) + piece
        return OutgoingRecord(value, key=f"0:{index}".encode(), partition=0)

    assert await gained([chunk(b"x", 0, blob[:half]), chunk(b"x", 1, blob[half:])])  # control
    assert not await gained([chunk(b"y", 0, blob[:half]), chunk(b"x", 1, blob[half:])])


def streams_of(tally: StreamRunner[Tally], partition: int) -> list[str]:
    from arena_runtime.eventlog.partitioner import partition_for

    return [s for s in tally._streams if partition_for(s.encode(), PARTITIONS) == partition]


def test_a_snapshot_round_trips_and_a_damaged_one_is_refused() -> None:
    snapshot = PartitionSnapshot(
        topic="t",
        partition=1,
        partitions=2,
        version="v",
        position=9,
        check=123,
        resting=(("a", 3, "b1"),),
        records=((4, b"\x00\x01"), (7, b"")),
        taken_ms=1,
    )
    blob = snapshot.encode()
    assert PartitionSnapshot.decode(blob) == snapshot
    with pytest.raises(ValueError):
        PartitionSnapshot.decode(blob[:-3])
