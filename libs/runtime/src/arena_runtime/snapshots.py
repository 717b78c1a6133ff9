"""Snapshots of a stream runner's partitions, so that a new owner reads only the log's tail.

A snapshot of one partition of an event topic says what a runner holds at one log position
(``position``: the offset of the next record it would read):

* **Resting streams** — those the service has put to rest (``SnapshotPolicy.at_rest``: a match
  finished and evicted from memory) and that hold no answers — are kept as their stream id,
  sequence and last batch id only; a resumed runner gives them the service's rest state.
* **Streams whose state the service encodes** (``SnapshotPolicy.capture``/``decode``: a ladder,
  whose history is the bulk of its partition and whose state is small) are kept as their state,
  encoded by the service, with their sequence, last batch id and the events of the answers the
  runner holds for them (so a command delivered again is answered as before, not decided again).
* **Every other stream** is kept as its own records (the event envelopes as logged, with their
  offsets), from its first record up to ``position``. A resumed runner folds them with its own
  ``apply``, so the state, the answered command ids and the timers come out exactly as a full
  replay gives them, and no game or service has to say how its state is encoded.

A snapshot is valid only for the same topic, partition count and ``SnapshotPolicy.version``, a
format this code reads, and a log that still holds, at ``position - 1``, the very record the
snapshot was taken after (a CRC of its value is kept). Anything else — missing, undecodable,
another version, a log that was rebuilt or is shorter — is ignored, and the partition is
replayed from its start as before.

Storage: a compacted topic per event topic (``arena.match.snapshots`` beside
``arena.match.events``), with the event topic's partition count; partition ``p``'s snapshot goes
to partition ``p``. A snapshot is zlib-compressed and cut into chunks of at most
``CHUNK_BYTES`` (brokers refuse large records), appended in one call, each chunk keyed by
``<partition>:<index>`` (compaction keeps the newest of each) and headed by the snapshot's id,
its index and the chunk count. The newest snapshot is read from the partition's end: its last
chunk says how many precede it. Chunks of two writers interleaved (a zombie) do not match and
the snapshot is ignored.
"""

from __future__ import annotations

import asyncio
import json
import struct
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from arena_runtime import telemetry
from arena_runtime.eventlog.base import (
    EventLog,
    OutgoingRecord,
    Record,
    TopicSpec,
    UnknownTopicError,
)

S = TypeVar("S")

#: The format of the snapshot records: 1, streams as records and resting streams; 2, also
#: encoded states. A snapshot is written in the lowest format that holds it (one without states
#: stays readable by code that knows only 1); one of a format not in READABLE is ignored (replay).
FORMAT = 2
READABLE = (1, 2)
MAGIC = b"ASNP"
#: Largest chunk value (brokers refuse records over about 1 MB by default).
CHUNK_BYTES = 256 * 1024
_HEADER = struct.Struct(">4sB16sIII")  # magic, format, snapshot id, index, count, crc32 of all

log = telemetry.get_logger(__name__)


def snapshot_topic(events_topic: str) -> str:
    """``arena.match.events`` -> ``arena.match.snapshots``."""
    base = events_topic.removesuffix(".events")
    return f"{base}.snapshots"


class SnapshotError(ValueError):
    """Bytes that are not a snapshot this code reads."""


@dataclass(frozen=True, slots=True)
class SnapshotPolicy(Generic[S]):
    """What a service tells the runner about its snapshots.

    ``version`` names the meaning of the state (change it when ``apply`` folds the same events
    into something else, or ``rest`` changes): snapshots of another version are ignored.
    ``at_rest(state)``: a stream the service has put to rest (it holds no answers either) is
    kept as its sequence alone and comes back as ``rest(stream_id)``. Without a rest rule every
    stream is kept as its records.
    """

    version: str
    at_rest: Callable[[S], bool] | None = None
    rest: Callable[[str], S] | None = None
    #: ``capture(state)`` and ``decode(stream, data)``: a stream not at rest whose state
    #: ``capture`` takes (None: it does not) is kept as that state, encoded, and its kept answers'
    #: events, rather than as its records. ``capture`` runs under the partition's lock, on the
    #: service's loop: it returns a function that encodes what it captured (so it copies what the
    #: next ``apply`` would change), which runs after the lock, in a worker thread. ``decode``
    #: raises (any exception) on data it cannot read: the snapshot is then ignored (replay). The
    #: encoding is the service's: change ``version`` when it or ``apply`` changes meaning.
    capture: Callable[[S], Callable[[], bytes] | None] | None = None
    decode: Callable[[str, bytes], S] | None = None


@dataclass(frozen=True, slots=True)
class PartitionSnapshot:
    """One partition of an event topic as a runner held it at ``position``."""

    topic: str
    partition: int
    partitions: int
    version: str
    #: The next offset of the event partition: the snapshot holds everything before it.
    position: int
    #: CRC-32 of the value of the record at ``position - 1`` (0 when ``position`` is 0).
    check: int
    #: (stream, sequence, batch id) of each resting stream.
    resting: tuple[tuple[str, int, str], ...]
    #: (offset, value) of every record of the other streams, in log order.
    records: tuple[tuple[int, bytes], ...]
    #: When it was taken (Unix ms).
    taken_ms: int
    #: (stream, sequence, batch id, encoded state, encoded events of its kept answers) of each
    #: stream kept as its state (``SnapshotPolicy.encode``).
    states: tuple[tuple[str, int, str, bytes, tuple[bytes, ...]], ...] = ()

    @property
    def format(self) -> int:
        return 2 if self.states else 1

    def encode(self) -> bytes:
        meta = {
            "topic": self.topic,
            "partition": self.partition,
            "partitions": self.partitions,
            "version": self.version,
            "position": self.position,
            "check": self.check,
            "taken_ms": self.taken_ms,
            "resting": self.resting,
            "offsets": [offset for offset, _ in self.records],
        }
        if self.states:
            meta["states"] = [[s, q, b, len(answers)] for s, q, b, _, answers in self.states]
        head = json.dumps(meta, separators=(",", ":")).encode()
        parts = [struct.pack(">I", len(head)), head]
        values = [value for _, value in self.records]
        for _, _, _, state, answers in self.states:
            values.append(state)
            values.extend(answers)
        for value in values:
            parts.append(struct.pack(">I", len(value)))
            parts.append(value)
        return zlib.compress(b"".join(parts), 1)

    @classmethod
    def decode(cls, blob: bytes) -> PartitionSnapshot:
        """The snapshot of ``encode``; SnapshotError (a ValueError) if it is not one."""
        try:
            return cls._decode(blob)
        except (ValueError, KeyError, TypeError, zlib.error, struct.error) as exc:
            raise SnapshotError(f"not a snapshot: {exc}") from exc

    @classmethod
    def _decode(cls, blob: bytes) -> PartitionSnapshot:
        data = zlib.decompress(blob)
        (length,) = struct.unpack_from(">I", data, 0)
        meta = json.loads(data[4 : 4 + length])
        at = 4 + length
        kept = [(str(s), int(q), str(b), int(n)) for s, q, b, n in meta.get("states", [])]
        values = []
        for _ in range(len(meta["offsets"]) + sum(1 + n for *_, n in kept)):
            (size,) = struct.unpack_from(">I", data, at)
            if at + 4 + size > len(data):
                raise ValueError("a value runs past the snapshot's end")
            values.append(data[at + 4 : at + 4 + size])
            at += 4 + size
        if at != len(data):
            raise ValueError("trailing bytes after the snapshot's records")
        records = values[: len(meta["offsets"])]
        rest = iter(values[len(meta["offsets"]) :])
        states = []
        for stream, sequence, batch_id, count in kept:
            state = next(rest)
            states.append(
                (stream, sequence, batch_id, state, tuple(next(rest) for _ in range(count)))
            )
        return cls(
            topic=str(meta["topic"]),
            partition=int(meta["partition"]),
            partitions=int(meta["partitions"]),
            version=str(meta["version"]),
            position=int(meta["position"]),
            check=int(meta["check"]),
            resting=tuple((str(s), int(q), str(b)) for s, q, b in meta["resting"]),
            records=tuple(zip((int(o) for o in meta["offsets"]), records, strict=True)),
            taken_ms=int(meta["taken_ms"]),
            states=tuple(states),
        )


@dataclass(frozen=True, slots=True)
class Saved:
    """What saving a snapshot wrote."""

    bytes: int
    chunks: int


class SnapshotStore:
    """The snapshots of one event topic's partitions, on its compacted snapshot topic."""

    def __init__(self, log: EventLog, events_topic: str) -> None:
        self.log = log
        self.events_topic = events_topic
        self.topic = snapshot_topic(events_topic)

    async def ensure(self, partitions: int) -> None:
        """Create the snapshot topic (compacted) if it is missing."""
        await self.log.create_topics([TopicSpec(self.topic, partitions, compacted=True)])

    async def save(self, snapshot: PartitionSnapshot) -> Saved:
        # In a worker thread (zlib lets go of the GIL): a long ladder's few MB would hold the loop.
        blob = await asyncio.to_thread(snapshot.encode)
        crc = zlib.crc32(blob)
        pieces = [blob[i : i + CHUNK_BYTES] for i in range(0, len(blob), CHUNK_BYTES)] or [b""]
        snapshot_id = uuid.uuid4().bytes
        records = [
            OutgoingRecord(
                value=_HEADER.pack(MAGIC, snapshot.format, snapshot_id, index, len(pieces), crc)
                + piece,
                key=f"{snapshot.partition}:{index}".encode(),
                partition=snapshot.partition,
            )
            for index, piece in enumerate(pieces)
        ]
        await self.log.append(self.topic, records)
        return Saved(len(blob), len(pieces))

    async def load(self, partition: int) -> PartitionSnapshot | None:
        """The newest snapshot of ``partition``, or None if there is none it can read."""
        try:
            end = await self.log.end_offset(self.topic, partition)
            if end == 0:
                return None
            last = await self.log.read(self.topic, partition, end - 1, 1)
            if not last:
                return None
            header = _parse_header(last[0].value)
            if header is None:
                return None
            snapshot_id, index, count, crc = header
            if index != count - 1 or count > end:
                return None
            chunks = await _read_range(self.log, self.topic, partition, end - count, end)
            pieces = []
            for expected, record in enumerate(chunks):
                parsed = _parse_header(record.value)
                if parsed is None or parsed != (snapshot_id, expected, count, crc):
                    return None  # interleaved with another writer's, or compacted away
                pieces.append(record.value[_HEADER.size :])
            if len(pieces) != count:
                return None
            blob = b"".join(pieces)
            if zlib.crc32(blob) != crc:
                return None
            snapshot = PartitionSnapshot.decode(blob)
        except UnknownTopicError:
            return None  # no snapshot topic (yet): nothing to resume from
        except (SnapshotError, struct.error) as exc:
            log.warning("snapshot unreadable; replaying", topic=self.topic, error=str(exc))
            return None
        if snapshot.topic != self.events_topic or snapshot.partition != partition:
            return None
        return snapshot


def _parse_header(value: bytes) -> tuple[bytes, int, int, int] | None:
    if len(value) < _HEADER.size:
        return None
    magic, fmt, snapshot_id, index, count, crc = _HEADER.unpack_from(value, 0)
    if magic != MAGIC or fmt not in READABLE:
        return None
    return snapshot_id, index, count, crc


async def _read_range(
    log: EventLog, topic: str, partition: int, start: int, until: int
) -> list[Record]:
    out: list[Record] = []
    offset = start
    while offset < until:
        records = await log.read(topic, partition, offset, until - offset)
        if not records:
            break
        out.extend(r for r in records if r.offset < until)
        offset = records[-1].offset + 1
    return out


def now_ms() -> int:
    return int(time.time() * 1000)
