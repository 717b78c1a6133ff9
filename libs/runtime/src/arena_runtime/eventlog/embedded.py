"""The embedded event log: Kafka's semantics in one SQLite file (WAL mode).

Topics have partitions, a key picks its partition with Kafka's partitioner, offsets count per
partition from 0, and consumer groups keep committed offsets in the same file. Every blocking
SQLite call runs on one of two dedicated threads (a writer and a reader, each with its own
connection), so the event loop stays responsive.

Durability: an append is acknowledged only after its transaction has committed to the WAL, so a
``kill -9`` of the process loses nothing acknowledged; ``synchronous="FULL"`` also fsyncs each
commit, for power loss. Concurrent single appends are group-committed: one writer task takes every
append pending when the previous transaction finished and commits them together.

Several processes may share the file: writes serialise on SQLite's write lock, offsets are
re-read when another connection has written (``PRAGMA data_version``), and group membership is
kept in the file with heartbeats that expire (see embedded_consumer).

The tail: reads share one reader thread, so when one process runs many consumers (``arena
serve``) every read queues behind the others' for a thread hop, and a record crossing several
consumers pays that wait at each. Most of those reads are of records the process has just
appended itself. So the log keeps, per partition, the contiguous run of the last records it
appended (at most ``tail_records``), as ready ``Record``s, added once their transaction has
committed; a read starting inside that run is answered from memory, without the thread, and
stops at the run's end. Only this log's appends are known to it: if another connection (another
process) appends to the partition in between, the offsets this log's next append gets are not
contiguous with the run, and the run starts over there, so the cache never holds a gap. A read
at or past the run's end goes to the file, where other processes' records are. The tail is a
copy of what is committed, never the only copy: losing it (a crash) loses nothing.

Retention and compaction, as a topic's spec asks (Kafka's ``retention.ms`` and
``cleanup.policy=compact``): a sweep every ``SWEEP_INTERVAL_S`` deletes, inside a write
transaction, the records older than a topic's retention and the records of a compacted topic
that a later record with the same key replaces, a bounded number at a time, so that the views
and the snapshots do not grow the file forever. Like Kafka it never deletes a partition's last
record (the next offset is read from it). A consumer whose position lies before what is left
reads on from the first record kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from arena_runtime.eventlog.base import (
    GROUP_HEARTBEAT_MS,
    GROUP_SESSION_TIMEOUT_MS,
    AppendConflictError,
    Consumer,
    EventLog,
    EventLogError,
    Headers,
    InvalidRequestError,
    OutgoingRecord,
    Position,
    Record,
    TopicPartition,
    TopicSpec,
    UnknownTopicError,
)
from arena_runtime.eventlog.one_thread import OneThread
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.eventlog.peers import Peers
from arena_runtime.eventlog.validation import check_position, check_records, check_spec
from arena_runtime.sqlite_files import BUSY_TIMEOUT_MS, switch_to_wal

T = TypeVar("T")

#: Records kept per partition in the tail of this log's own appends (see the module docstring).
DEFAULT_TAIL_RECORDS = 256

SCHEMA = """
CREATE TABLE IF NOT EXISTS topics (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    partitions INTEGER NOT NULL,
    retention_ms INTEGER NOT NULL,
    compacted INTEGER NOT NULL
);
-- One row per record, keyed by (topic id, partition, offset) packed into the rowid (see
-- record_id): a partition's records are contiguous, so reading one is a range scan of the table
-- itself, with no index beside it to update on every append.
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    timestamp_ms INTEGER NOT NULL,
    key BLOB,
    value BLOB NOT NULL,
    headers BLOB
);
CREATE TABLE IF NOT EXISTS group_offsets (
    group_name TEXT NOT NULL,
    topic_id INTEGER NOT NULL,
    partition INTEGER NOT NULL,
    "offset" INTEGER NOT NULL,
    PRIMARY KEY (group_name, topic_id, partition)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS group_members (
    group_name TEXT NOT NULL,
    member_id TEXT NOT NULL,
    topic_ids TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (group_name, member_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS partition_owners (
    group_name TEXT NOT NULL,
    topic_id INTEGER NOT NULL,
    partition INTEGER NOT NULL,
    member_id TEXT NOT NULL,
    PRIMARY KEY (group_name, topic_id, partition)
) WITHOUT ROWID;
"""

SCHEMA_VERSION = 1
_INSERT = "INSERT INTO records (id, timestamp_ms, key, value, headers) VALUES (?, ?, ?, ?, ?)"
_LAST_ID = "SELECT max(id) FROM records WHERE id >= ? AND id < ?"
_READ = (
    "SELECT id, timestamp_ms, key, value, headers FROM records "
    "WHERE id >= ? AND id < ? ORDER BY id LIMIT ?"
)

# The rowid packs topic id (16 bits), partition (12 bits) and offset (35 bits) into 63 bits.
MAX_TOPICS = 1 << 16
MAX_PARTITIONS = 1 << 12
_OFFSET_BITS = 35
MAX_OFFSET = (1 << _OFFSET_BITS) - 1


_TOPIC_SHIFT = _OFFSET_BITS + MAX_PARTITIONS.bit_length() - 1  # the partition's bits above


def record_id(topic_id: int, partition: int, offset: int) -> int:
    return (topic_id << _TOPIC_SHIFT) | (partition << _OFFSET_BITS) | offset


def split_record_id(packed: int) -> tuple[int, int, int]:
    """(topic id, partition, offset) of a :func:`record_id`."""
    return (
        packed >> _TOPIC_SHIFT,
        (packed >> _OFFSET_BITS) & (MAX_PARTITIONS - 1),
        packed & MAX_OFFSET,
    )


def next_offset(conn: sqlite3.Connection, topic_id: int, partition: int) -> int:
    base = record_id(topic_id, partition, 0)
    (last,) = conn.execute(_LAST_ID, (base, base + MAX_OFFSET + 1)).fetchone()
    return 0 if last is None else last - base + 1


_HEADER = struct.Struct(">HI")  # name length, value length


#: Header name -> its length as packed by _HEADER, and its UTF-8 bytes: the names are the same
#: few (the envelope's) in every record.
_HEADER_NAMES: dict[str, tuple[bytes, bytes]] = {}
_HEADER_NAMES_KEPT = 256
#: A header value's length as packed by _HEADER, for the short values headers carry.
_VALUE_LENGTHS = [struct.pack(">I", size) for size in range(1024)]


def encode_headers(headers: Headers) -> bytes | None:
    if not headers:
        return None
    names, lengths = _HEADER_NAMES, _VALUE_LENGTHS
    try:
        # One comprehension and one len() a header (not six calls): a dozen headers a record.
        return b"".join(
            [names[n][0] + lengths[len(value)] + names[n][1] + value for n, value in headers]
        )
    except (KeyError, IndexError):  # a name met for the first time, or a long value
        pass
    parts = []
    for name, value in headers:
        raw = name.encode()
        parts.append(_HEADER.pack(len(raw), len(value)) + raw + value)
        if name not in names and len(names) < _HEADER_NAMES_KEPT:
            names[name] = (_HEADER.pack(len(raw), 0)[:2], raw)
    return b"".join(parts)


def decode_headers(blob: bytes | None) -> Headers:
    if not blob:
        return ()
    name_len, value_len = _HEADER.unpack_from(blob)
    name_end = 6 + name_len
    if name_end + value_len == len(blob):  # one header, the usual case (the trace context)
        return ((blob[6:name_end].decode(), blob[name_end:]),)
    out = []
    at = 0
    size = len(blob)
    while at < size:
        name_len, value_len = _HEADER.unpack_from(blob, at)
        name_end = at + 6 + name_len
        at = name_end + value_len
        out.append((blob[name_end - name_len : name_end].decode(), blob[name_end:at]))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class TopicInfo:
    id: int
    name: str
    partitions: int


@dataclass(slots=True)
class _Append:
    topic_id: int
    topic: str
    #: (partition, key, value, encoded headers, the caller's headers) per record
    rows: list[tuple[int, bytes | None, bytes, bytes | None, Headers]]
    future: asyncio.Future[list[int]]
    #: Written only if its partition ends at this offset (None: wherever it ends).
    expect: int | None = None
    #: Written in the same transaction if this one is (their futures are not used).
    chained: tuple[_Append, ...] = ()
    #: A chained append's offsets, once written (set by the writer thread).
    written: list[int] | None = None


class _Tail:
    """The run of records this log last appended to one partition, offsets ``start`` to
    ``end`` - 1. They sit in a ring that grows to the bound and then wraps: the record at offset
    o is at ``(o - base) % bound``, so adding one is a store, never a shift, and the oldest leaves
    the run when the ring is full."""

    __slots__ = ("base", "end", "ring", "start")

    def __init__(self, offset: int) -> None:
        self.base = self.start = self.end = offset
        self.ring: list[Record] = []

    def add(self, record: Record, size: int) -> None:
        """Append the run's next record, pushing out the oldest once ``size`` are held."""
        offset = record.offset
        ring = self.ring
        if len(ring) < size:
            ring.append(record)
        else:
            ring[(offset - self.base) % size] = record
            self.start = offset + 1 - size
        self.end = offset + 1

    def read(self, offset: int, max_records: int) -> list[Record] | None:
        """From ``offset`` up to the run's end, or None if ``offset`` is outside the run."""
        if not self.start <= offset < self.end:
            return None
        ring = self.ring
        size = len(ring)
        first = (offset - self.base) % size
        last = first + min(self.end - offset, max_records)
        return ring[first:last] if last <= size else ring[first:] + ring[: last - size]


@dataclass(slots=True)
class _Operation:
    run: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future[Any]


def _rows(
    info: TopicInfo, records: Sequence[OutgoingRecord]
) -> list[tuple[int, bytes | None, bytes, bytes | None, Headers]]:
    """An append's rows: (partition, key, value, encoded headers, the caller's headers)."""
    partitions = info.partitions
    return [
        (
            partition_for(r.key, partitions) if r.partition is None else r.partition,
            r.key,
            r.value,
            encode_headers(r.headers),
            r.headers,
        )
        for r in records
    ]


def _place(
    conn: sqlite3.Connection,
    next_offsets: dict[tuple[int, int], int],
    item: _Append,
    ts: int,
    rows: list[tuple[Any, ...]],
) -> list[int]:
    """Give an append's records their offsets and add their rows to ``rows`` (the writer's)."""
    tid = item.topic_id
    offsets = []
    for partition, key, value, headers, _ in item.rows:
        slot = (tid, partition)
        offset = next_offsets.get(slot)
        if offset is None:
            offset = next_offset(conn, tid, partition)
        if offset > MAX_OFFSET:
            raise EventLogError(f"partition {partition} is full")
        next_offsets[slot] = offset + 1
        offsets.append(offset)
        rows.append((record_id(tid, partition, offset), ts, key, value, headers))
    return offsets


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# Checkpoints (copying the WAL into the database, with an fsync) run on their own thread at most
# this often, so a commit never waits for one; the writer checkpoints itself only as a backstop.
CHECKPOINT_INTERVAL_S = 0.5
#: How often a log deletes what retention and compaction let go (see the module docstring).
SWEEP_INTERVAL_S = 60.0
#: Records a sweep deletes at most per partition: the write transaction it runs in stays short.
SWEEP_BATCH = 20_000
_BACKSTOP_CHECKPOINT_PAGES = 50_000
_WAL_SIZE_LIMIT = 64 * 1024 * 1024


def _create_schema(conn: sqlite3.Connection) -> None:
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    known = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'records'").fetchone()
    if known[0] and version != SCHEMA_VERSION:
        raise EventLogError(
            f"{conn.execute('PRAGMA database_list').fetchone()[2]} holds an event log of format "
            f"{version}, not {SCHEMA_VERSION}; move it away to start a new log"
        )
    conn.executescript(SCHEMA)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _connect(path: Path, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
    )
    switch_to_wal(conn.cursor())
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute(f"PRAGMA wal_autocheckpoint={_BACKSTOP_CHECKPOINT_PAGES}")
    conn.execute(f"PRAGMA journal_size_limit={_WAL_SIZE_LIMIT}")
    return conn


class EmbeddedEventLog(EventLog):
    """An event log in one SQLite file; see the module docstring."""

    def __init__(
        self,
        path: Path | str,
        *,
        topic_prefix: str = "",
        synchronous: str = "NORMAL",
        session_timeout_ms: int = GROUP_SESSION_TIMEOUT_MS,
        heartbeat_interval_ms: int = GROUP_HEARTBEAT_MS,
        tail_records: int = DEFAULT_TAIL_RECORDS,
        peer_wakeups: bool = True,
    ) -> None:
        """``tail_records``: how many of its own latest appends per partition the log keeps in
        memory to answer reads without the reader thread (0: none; see the module docstring).
        Every log tells the other processes on the file that listen of each commit
        (arena_runtime.eventlog.peers); ``peer_wakeups``: listen, so that this log's consumers
        hear of theirs at once, not at their periodic read (every 100 ms)."""
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be NORMAL or FULL")
        if tail_records < 0:
            raise ValueError("tail_records must be >= 0")
        self.path = Path(path)
        self.topic_prefix = topic_prefix
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self._synchronous = synchronous
        self._topics: dict[str, TopicInfo] = {}
        self._writer_pool: OneThread | None = None
        self._reader_pool: OneThread | None = None
        self._checkpoint_pool: OneThread | None = None
        self._checkpoint_conn: sqlite3.Connection | None = None
        self._checkpointing: asyncio.Future[None] | None = None
        self._last_checkpoint = 0.0
        self._writer_conn: sqlite3.Connection | None = None
        self._reader_conn: sqlite3.Connection | None = None
        self._pending: list[_Append | _Operation] = []
        self._wakeup = asyncio.Event()
        self._writer_task: asyncio.Task[None] | None = None
        self._next_offsets: dict[tuple[int, int], int] = {}
        self._data_version: int | None = None
        #: Bumped at every change consumers wait for (see :meth:`wait_for_change`): the latest
        #: change's stamp (an attribute, not a property: every poll reads it). Also the stamp of
        #: each topic's latest append here, and of the latest change that concerns everyone (a
        #: group's membership, the log closing).
        self.stamp = 0
        self._touched: dict[int, int] = {}
        self._everyone_stamp = 0
        #: Consumers waiting for a change: each one's future -> the topic ids it reads.
        self._waiting: dict[asyncio.Future[None], frozenset[int]] = {}
        #: Topic id -> the sets in which its consumers here collect the slots this process
        #: appends to (see :meth:`watch_appends`).
        self._appends_to: dict[int, list[set[tuple[int, int]]]] = {}
        #: (topic id, partition) -> offset after the last record this process appended there.
        self._local_ends: dict[tuple[int, int], int] = {}
        self._tail_records = tail_records
        self._tails: dict[tuple[int, int], _Tail] = {}
        self._group_epochs: dict[str, int] = {}
        self._closing = False
        self._last_sweep = time.monotonic()
        self._sweeping: asyncio.Future[int] | None = None
        self._peer_wakeups = peer_wakeups
        self._peers: Peers | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        if self._writer_task is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer_pool = OneThread("eventlog-writer")
        self._reader_pool = OneThread("eventlog-reader")
        self._checkpoint_pool = OneThread("eventlog-checkpoint")
        try:
            self._writer_conn = await self._writer_pool.run(_connect, self.path, self._synchronous)
            await self._writer_pool.run(_create_schema, self._writer_conn)
            self._reader_conn = await self._reader_pool.run(_connect, self.path, self._synchronous)
            self._checkpoint_conn = await self._checkpoint_pool.run(
                _connect, self.path, self._synchronous
            )
            self._peers = Peers(listen=self._peer_wakeups)
            await self._writer_pool.run(self._peers.register, self._writer_conn)
            if self._peer_wakeups:
                asyncio.get_running_loop().add_reader(self._peers.sock, self._peer_appended)
        except BaseException:
            # Not a file SQLite can open (or cancelled): leave no thread or connection behind.
            await self._release()
            raise
        self._closing = False
        self._writer_task = asyncio.create_task(self._write_loop(), name="eventlog-writer")

    async def close(self) -> None:
        if self._writer_task is None:
            return
        if self._sweeping is not None:
            await asyncio.gather(self._sweeping, return_exceptions=True)
        self._closing = True
        self._wakeup.set()
        await self._writer_task
        self._writer_task = None
        if self._checkpointing is not None:
            await self._checkpointing
        await self._release()
        self._notify()

    async def _release(self) -> None:
        """Close each connection in its own thread, then the threads."""
        pools = (
            (self._writer_pool, self._writer_conn),
            (self._reader_pool, self._reader_conn),
            (self._checkpoint_pool, self._checkpoint_conn),
        )
        peers, self._peers = self._peers, None
        if peers is not None:
            if peers.listen:
                asyncio.get_running_loop().remove_reader(peers.sock)
            if self._writer_pool is not None and self._writer_conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    await self._writer_pool.run(peers.unregister, self._writer_conn)
            peers.close()
        self._writer_conn = self._reader_conn = self._checkpoint_conn = None
        # Closed, reads fail as before; reopened, other processes may have appended meanwhile.
        self._tails.clear()
        self._writer_pool = self._reader_pool = self._checkpoint_pool = None
        for pool, conn in pools:
            if pool is None:
                continue
            if conn is not None:
                await pool.run(conn.close)
            pool.shutdown()

    @property
    def is_open(self) -> bool:
        return self._writer_task is not None and not self._closing

    # -- topics ------------------------------------------------------------------------------

    async def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        for spec in specs:
            check_spec(spec)
            if spec.partitions > MAX_PARTITIONS:
                raise InvalidRequestError(f"at most {MAX_PARTITIONS} partitions per topic")
        rows = [
            (self.topic_prefix + s.name, s.partitions, s.retention_ms, int(s.compacted))
            for s in specs
        ]

        def create(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT OR IGNORE INTO topics (name, partitions, retention_ms, compacted) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )
            (largest,) = conn.execute("SELECT max(id) FROM topics").fetchone()
            if largest is not None and largest >= MAX_TOPICS:
                raise InvalidRequestError(f"an embedded log holds at most {MAX_TOPICS} topics")

        await self.write(create)

    async def topic(self, name: str) -> TopicInfo:
        """The stored topic, from the cache or the file (another process may have created it)."""
        info = self._topics.get(name)
        if info is not None:
            return info
        row = await self.read_with(
            lambda conn: conn.execute(
                "SELECT id, partitions FROM topics WHERE name = ?", (self.topic_prefix + name,)
            ).fetchone()
        )
        if row is None:
            raise UnknownTopicError(f"unknown topic {name!r}")
        info = TopicInfo(row[0], name, row[1])
        self._topics[name] = info
        return info

    async def partitions(self, topic: str) -> int:
        return (await self.topic(topic)).partitions

    # -- appends -----------------------------------------------------------------------------

    async def append(self, topic: str, records: Sequence[OutgoingRecord]) -> list[Position]:
        return await self._append(topic, records)

    async def append_chained(
        self,
        topic: str,
        records: Sequence[OutgoingRecord],
        expect: int,
        then: Sequence[tuple[str, Sequence[OutgoingRecord]]],
    ) -> list[Position]:
        """All in one transaction, and nothing of it unless ``records`` land at ``expect``."""
        return await self._append(topic, records, expect, then)

    async def _append(
        self,
        topic: str,
        records: Sequence[OutgoingRecord],
        expect: int | None = None,
        then: Sequence[tuple[str, Sequence[OutgoingRecord]]] = (),
    ) -> list[Position]:
        info = await self.topic(topic)
        check_records(topic, records, info.partitions)
        if not records:
            return []
        rows = _rows(info, records)
        if expect is not None and len({row[0] for row in rows}) != 1:
            raise InvalidRequestError(f"{topic}: a chained append goes to one partition")
        future: asyncio.Future[list[int]] = asyncio.get_running_loop().create_future()
        chained = []
        for other, more in then:
            other_info = await self.topic(other)
            check_records(other, more, other_info.partitions)
            if more:
                chained.append(_Append(other_info.id, other, _rows(other_info, more), future))
        self._submit(_Append(info.id, topic, rows, future, expect, tuple(chained)))
        offsets = await future
        return [Position(topic, row[0], off) for row, off in zip(rows, offsets, strict=True)]

    async def write(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``run`` on the writer connection inside the next write transaction."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._submit(_Operation(run, future))
        return await future

    def _submit(self, item: _Append | _Operation) -> None:
        if self._writer_task is None or self._closing:
            raise EventLogError("the event log is not started")
        self._pending.append(item)
        self._wakeup.set()

    async def _write_loop(self) -> None:
        writer = self._writer_pool
        assert writer is not None
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            batch, self._pending = self._pending, []
            if batch:
                try:
                    results, written_ms = await writer.run(self._write_batch, batch)
                except BaseException as exc:  # the whole transaction failed
                    failure = (
                        exc
                        if isinstance(exc, EventLogError)
                        else EventLogError(f"embedded log write failed: {exc!r}")
                    )
                    for item in batch:
                        if not item.future.done():
                            item.future.set_exception(failure)
                    if not isinstance(exc, Exception):
                        raise
                else:
                    appended = set()
                    for item, (ok, value) in zip(batch, results, strict=True):
                        if ok and isinstance(item, _Append):
                            self._note_appended(item, value, written_ms)
                            appended.add(item.topic_id)
                            for chained in item.chained:
                                assert chained.written is not None
                                self._note_appended(chained, chained.written, written_ms)
                                appended.add(chained.topic_id)
                        if item.future.done():  # the caller was cancelled
                            continue
                        if ok:
                            item.future.set_result(value)
                        else:
                            item.future.set_exception(value)
                    if appended:
                        # Only appends wake consumers, and only those reading the topics: an
                        # offset commit or another topic's append gives them nothing to read.
                        self._notify(appended)
                self._maybe_checkpoint()
                self._maybe_sweep()
            if self._closing and not self._pending:
                return

    def _note_appended(self, item: _Append, offsets: list[int], written_ms: int) -> None:
        """Record where a committed append ended, and add its records to the tails."""
        ends = self._local_ends
        tid = item.topic_id
        size = self._tail_records
        tails = self._tails
        name = item.topic
        new = tuple.__new__
        watchers = self._appends_to.get(tid, ())
        for (partition, key, value, blob, headers), offset in zip(item.rows, offsets, strict=True):
            slot = (tid, partition)
            if ends.get(slot, 0) <= offset:
                ends[slot] = offset + 1
            for appended in watchers:
                appended.add(slot)
            if not size:
                continue
            tail = tails.get(slot)
            if tail is None or offset != tail.end:
                # New, or someone else appended here since: a new run, so that the tail never
                # spans a record this log has not seen.
                tail = tails[slot] = _Tail(offset)
            # Kept as given if it is the tuple of (str, bytes) tuples a read from the file
            # returns (append has checked the pairs' types), as the envelope's CloudEvents
            # headers are: decoding the blob again cost a move more than the check, and a copy
            # is objects freed long after, when they have left the CPU caches. (A loop, not
            # all() over a generator: a dozen calls fewer per record.)
            if type(headers) is tuple:
                for pair in headers:
                    if type(pair) is not tuple:
                        headers = decode_headers(blob)
                        break
            else:
                headers = decode_headers(blob)
            # Equal to what read_partition builds from the row.
            tail.add(new(Record, (name, partition, offset, key, value, headers, written_ms)), size)

    def tail_read(
        self, topic_id: int, partition: int, offset: int, max_records: int
    ) -> list[Record] | None:
        """Records from ``offset`` out of this log's own latest appends, without the reader
        thread; None unless ``offset`` lies inside the run kept (then read from the file).

        A non-empty list otherwise, which may stop short of the partition's end: the next read
        starts where it stopped.
        """
        tail = self._tails.get((topic_id, partition))
        if tail is None or max_records < 1:
            return None
        return tail.read(offset, max_records)

    def watch_appends(self, topic_ids: Iterable[int], appended: set[tuple[int, int]]) -> None:
        """Add to ``appended`` every (topic id, partition) of ``topic_ids`` this process
        appends to from now on (until :meth:`unwatch_appends`): a consumer woken by a write
        looks at those partitions only, not at every one it owns."""
        for topic_id in topic_ids:
            self._appends_to.setdefault(topic_id, []).append(appended)

    def unwatch_appends(self, appended: set[tuple[int, int]]) -> None:
        for topic_id, watchers in list(self._appends_to.items()):
            watchers[:] = [w for w in watchers if w is not appended]
            if not watchers:
                del self._appends_to[topic_id]

    def local_end(self, topic_id: int, partition: int) -> int:
        """Where the appends this log knows of end in a partition: its own, and those other
        processes announced (0 if none).

        Lets a consumer woken by a write skip the read when none of its partitions moved; an
        append by another process that was not announced is seen by its periodic read.
        """
        return self._local_ends.get((topic_id, partition), 0)

    def _maybe_checkpoint(self) -> None:
        now = time.monotonic()
        if self._checkpointing is not None or now - self._last_checkpoint < CHECKPOINT_INTERVAL_S:
            return
        self._last_checkpoint = now
        conn = self._checkpoint_conn
        assert conn is not None

        wal = Path(f"{self.path}-wal")

        def checkpoint() -> None:
            # PASSIVE copies what it can without blocking anyone. Under a writer that never
            # pauses the WAL can then never start over, so past the size limit TRUNCATE makes
            # the writer wait for a moment while the WAL is emptied.
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            with contextlib.suppress(OSError):
                if wal.stat().st_size > _WAL_SIZE_LIMIT:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

        assert self._checkpoint_pool is not None
        done = self._checkpoint_pool.run(checkpoint)
        self._checkpointing = done

        def finished(future: asyncio.Future[None]) -> None:
            self._checkpointing = None
            if not future.cancelled():
                future.exception()  # a failed checkpoint is retried next time; nothing is lost

        done.add_done_callback(finished)

    def _maybe_sweep(self) -> None:
        now = time.monotonic()
        if self._sweeping is not None or self._closing or now - self._last_sweep < SWEEP_INTERVAL_S:
            return
        self._last_sweep = now
        sweeping = self._sweeping = asyncio.ensure_future(self.sweep())

        def finished(future: asyncio.Future[int]) -> None:
            self._sweeping = None
            if not future.cancelled():
                future.exception()  # retried at the next sweep; deleting is never urgent

        sweeping.add_done_callback(finished)

    async def sweep(self, now: int | None = None) -> int:
        """Delete what retention and compaction let go (at most SWEEP_BATCH records per
        partition); returns how many records went. ``now``: the time retention counts from."""
        at = now_ms() if now is None else now
        rows = await self.read_with(
            lambda conn: conn.execute(
                "SELECT id, partitions, retention_ms, compacted FROM topics "
                "WHERE retention_ms >= 0 OR compacted"
            ).fetchall()
        )
        if not rows:
            return 0
        return await self.write(lambda conn: _sweep(conn, rows, at))

    def _write_batch(self, batch: list[_Append | _Operation]) -> tuple[list[tuple[bool, Any]], int]:
        """One transaction for everything pending (runs on the writer thread).

        Returns each item's outcome, and the timestamp written on the records it appended.
        """
        conn = self._writer_conn
        assert conn is not None
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            if version != self._data_version:  # another connection wrote: offsets may have moved
                self._next_offsets.clear()
                self._data_version = version
            results: list[tuple[bool, Any]] = []
            rows: list[tuple[Any, ...]] = []
            ts = now_ms()
            next_offsets = self._next_offsets
            for item in batch:
                if isinstance(item, _Append):
                    if item.expect is not None:
                        slot = (item.topic_id, item.rows[0][0])
                        end = next_offsets.get(slot)
                        if end is None:
                            end = next_offsets[slot] = next_offset(conn, *slot)
                        if end != item.expect:
                            conflict = AppendConflictError(
                                f"{item.topic}: partition {slot[1]} ends at {end}, "
                                f"not {item.expect}"
                            )
                            results.append((False, conflict))
                            continue
                    results.append((True, _place(conn, next_offsets, item, ts, rows)))
                    for chained in item.chained:
                        chained.written = _place(conn, next_offsets, chained, ts, rows)
                else:
                    if rows:
                        rows.sort(key=_first)
                        conn.executemany(_INSERT, rows)
                        rows = []
                    conn.execute("SAVEPOINT op")
                    try:
                        value = item.run(conn)
                    except Exception as exc:
                        conn.execute("ROLLBACK TO op")
                        results.append((False, exc))
                    else:
                        results.append((True, value))
                    conn.execute("RELEASE op")
            if rows:
                # In id order, each insert lands next to the one before: far fewer page seeks.
                rows.sort(key=_first)
                conn.executemany(_INSERT, rows)
            peers = self._peers
            if peers is not None:
                peers.refresh(conn, time.monotonic())
            conn.execute("COMMIT")
        except BaseException:
            self._next_offsets.clear()
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if peers is not None and peers.others:
            peers.send(_last_ids(batch, results))
        return results, ts

    def _peer_appended(self) -> None:
        """Another process committed: note where its partitions now end and wake the consumers
        of those topics here, as for an append of this process (they read those from the file)."""
        peers = self._peers
        if peers is None:
            return
        ends = self._local_ends
        appends_to = self._appends_to
        topics = set()
        for last in peers.drain():
            tid, partition, offset = split_record_id(last)
            slot, end = (tid, partition), offset + 1
            if ends.get(slot, 0) < end:
                ends[slot] = end
                topics.add(tid)
                for appended in appends_to.get(tid, ()):
                    appended.add(slot)
        if topics:
            self._notify(topics)

    # -- reads -------------------------------------------------------------------------------

    async def read_with(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``run`` on the reader connection (its own thread)."""
        if self._reader_conn is None:
            raise EventLogError("the event log is not started")
        conn = self._reader_conn
        assert self._reader_pool is not None
        return await self._reader_pool.run(run, conn)

    async def read(
        self, topic: str, partition: int, offset: int, max_records: int = 1000
    ) -> list[Record]:
        info = await self.topic(topic)
        check_position(topic, partition, info.partitions, offset)
        cached = self.tail_read(info.id, partition, offset, max_records)
        if cached is not None:
            return cached
        return await self.read_with(
            lambda conn: read_partition(conn, info, partition, offset, max_records)
        )

    async def read_partitions(
        self, reads: Sequence[tuple[TopicPartition, int]], max_records: int = 1000
    ) -> list[list[Record]]:
        found: list[list[Record] | None] = []
        jobs: list[tuple[int, TopicInfo, int, int]] = []
        for tp, offset in reads:
            info = await self.topic(tp.topic)
            check_position(tp.topic, tp.partition, info.partitions, offset)
            cached = self.tail_read(info.id, tp.partition, offset, max_records)
            if cached is None:
                jobs.append((len(found), info, tp.partition, offset))
            found.append(cached)
        if jobs:

            def read_all(conn: sqlite3.Connection) -> list[list[Record]]:
                return [read_partition(conn, i, p, o, max_records) for _, i, p, o in jobs]

            for (index, *_), records in zip(jobs, await self.read_with(read_all), strict=True):
                found[index] = records
        return [records or [] for records in found]

    async def end_offsets(self, topic: str) -> dict[int, int]:
        info = await self.topic(topic)

        def ends(conn: sqlite3.Connection) -> dict[int, int]:
            out = {}
            for p in range(info.partitions):
                out[p] = next_offset(conn, info.id, p)
            return out

        return await self.read_with(ends)

    async def end_offset(self, topic: str, partition: int) -> int:
        info = await self.topic(topic)
        check_position(topic, partition, info.partitions, 0)
        return await self.read_with(lambda conn: next_offset(conn, info.id, partition))

    # -- groups ------------------------------------------------------------------------------

    def consumer(
        self, group: str, topics: Sequence[str], *, every_partition: bool = False
    ) -> Consumer:
        # A group's only member: joining takes a write here, not seconds (every_partition).
        from arena_runtime.eventlog.embedded_consumer import EmbeddedConsumer

        return EmbeddedConsumer(self, group, list(topics))

    def group_epoch(self, group: str) -> int:
        """Bumped whenever a member of ``group`` in this process sees the membership change."""
        return self._group_epochs.get(group, 0)

    def bump_group(self, group: str) -> None:
        self._group_epochs[group] = self._group_epochs.get(group, 0) + 1
        self._notify()

    async def wait_for_change(self, since: int, topic_ids: frozenset[int], seconds: float) -> None:
        """Wait until this process appends to one of ``topic_ids``, a group's membership changes
        or the log closes, after the :attr:`stamp` ``since`` (taken before reading, so that what
        was appended during the read is not waited for), or until ``seconds`` pass."""
        if seconds <= 0 or self.changed_since(since, topic_ids):
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._waiting[future] = topic_ids
        timer = loop.call_later(seconds, _wake, future)
        try:
            await future
        finally:
            timer.cancel()
            self._waiting.pop(future, None)

    def changed_since(self, stamp: int, topic_ids: frozenset[int]) -> bool:
        if self._everyone_stamp > stamp:
            return True
        touched = self._touched
        # A loop, not any() over a generator (a call per topic): asked at every poll.
        for topic_id in topic_ids:  # noqa: SIM110
            if touched.get(topic_id, 0) > stamp:
                return True
        return False

    def _notify(self, topic_ids: set[int] | None = None) -> None:
        """Wake the consumers waiting for appends to ``topic_ids`` (None: every consumer)."""
        self.stamp += 1
        if topic_ids is None:
            self._everyone_stamp = self.stamp
        else:
            for topic_id in topic_ids:
                self._touched[topic_id] = self.stamp
        waiting = self._waiting
        if topic_ids is None:
            woken = list(waiting)
        elif len(topic_ids) == 1:  # an append's one topic: a membership test, not a call each
            (topic_id,) = topic_ids
            woken = [future for future, wanted in waiting.items() if topic_id in wanted]
        else:
            woken = [f for f, wanted in waiting.items() if not wanted.isdisjoint(topic_ids)]
        for future in woken:
            del waiting[future]
            if not future.done():  # _wake, inline
                future.set_result(None)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _last_ids(batch: list[_Append | _Operation], results: list[tuple[bool, Any]]) -> list[int]:
    """The id of the last record a committed batch wrote to each partition."""
    last: dict[tuple[int, int], int] = {}
    for item, (ok, value) in zip(batch, results, strict=True):
        if ok and isinstance(item, _Append):
            for written, offsets in ((item, value), *((c, c.written) for c in item.chained)):
                tid = written.topic_id
                for row, offset in zip(written.rows, offsets, strict=True):
                    last[(tid, row[0])] = record_id(tid, row[0], offset)
    return list(last.values())


def _sweep(conn: sqlite3.Connection, topics: list[tuple[int, int, int, int]], now: int) -> int:
    deleted = 0
    for topic_id, partitions, retention_ms, compacted in topics:
        for partition in range(partitions):
            base = record_id(topic_id, partition, 0)
            end = base + MAX_OFFSET + 1
            first, last = conn.execute(
                "SELECT min(id), max(id) FROM records WHERE id >= ? AND id < ?", (base, end)
            ).fetchone()
            if last is None:
                continue
            stop = min(last, first + SWEEP_BATCH)  # the last record stays, whatever its age
            if retention_ms >= 0:
                (kept,) = conn.execute(
                    "SELECT min(id) FROM records WHERE id >= ? AND id < ? AND timestamp_ms >= ?",
                    (first, stop, now - retention_ms),
                ).fetchone()
                cut = stop if kept is None else kept
                deleted += conn.execute(
                    "DELETE FROM records WHERE id >= ? AND id < ?", (first, cut)
                ).rowcount
            if compacted:
                deleted += conn.execute(
                    "DELETE FROM records WHERE id >= ? AND id < ? AND id NOT IN "
                    "(SELECT max(id) FROM records WHERE id >= ? AND id < ? GROUP BY key)",
                    (base, last, base, end),
                ).rowcount
    return deleted


def read_partition(
    conn: sqlite3.Connection, info: TopicInfo, partition: int, offset: int, max_records: int
) -> list[Record]:
    name = info.name
    base = record_id(info.id, partition, 0)
    new = tuple.__new__  # the named tuple's own __new__ is a Python function: skip it
    return [
        new(Record, (name, partition, id_ - base, key, value, decode_headers(h) if h else (), ts))
        for id_, ts, key, value, h in conn.execute(
            _READ, (base + offset, base + MAX_OFFSET + 1, max_records)
        ).fetchall()
    ]


def _first(row: tuple[Any, ...]) -> Any:
    return row[0]
