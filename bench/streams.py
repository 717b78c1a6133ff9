"""Envelope codec and stream runner on the embedded log, each beside a baseline from the same run.

* codec: Event -> bytes -> Event through arena_runtime.envelope, against bare protobuf
  serialize/parse of the same envelope (the cost of the typed layer and the payload registry);
* commands: StreamRunner.handle (read to the end, decide, append, read back) against appending
  one pre-encoded record per call to the same log (the cost of idempotency and race-safety);
* fold: a fresh runner loading streams from the log, against reading the same records raw.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from arena_runtime.config import load_settings
from arena_runtime.envelope import Codec, Command, Event, Schemas
from arena_runtime.eventlog import EventLog, OutgoingRecord, TopicSpec
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import envelope_pb2
from arena_runtime.streams import Decision, NewEvent, StreamRunner

WHEN = datetime(2026, 11, 30, tzinfo=UTC)


def _schemas() -> Schemas:
    schemas = Schemas()
    schemas.add_json("bench.Add")
    schemas.add_json("bench.Added")
    return schemas


CODEC = Codec(_schemas())


def _apply(state: int, event: Event) -> int:
    return state + int(event.payload["n"])


def _decide(state: int, command: Command) -> Decision:
    return [NewEvent("bench.Added", {"n": command.payload["n"]})]


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def _line(label: str, rate: float, baseline: float, unit: str) -> None:
    print(f"{label:<44} {rate:>12,.0f} {unit}/s   ratio {rate / baseline:5.2f}", flush=True)


def bench_codec(count: int) -> None:
    events = [
        Event(f"e{i}", f"s{i % 50}", i + 1, "bench.Added", {"n": i}, WHEN, "c", "r")
        for i in range(count)
    ]
    started = time.perf_counter()
    for event in events:
        CODEC.decode_event(CODEC.encode_event(event))
    typed = _rate(count, time.perf_counter() - started)

    raw = [envelope_pb2.Envelope.FromString(CODEC.encode_event(e)) for e in events]
    started = time.perf_counter()
    for message in raw:
        envelope_pb2.Envelope.FromString(message.SerializeToString())
    bare = _rate(count, time.perf_counter() - started)
    print(f"{'baseline: bare protobuf envelope round trip':<44} {bare:>12,.0f} events/s")
    _line("codec: typed event round trip", typed, bare, "events")


async def _open(directory: Path) -> EventLog:
    log = open_event_log(load_settings({"ARENA_DATA_DIR": str(directory)}))
    await log.start()
    return log


async def bench_log(count: int, streams: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = await _open(Path(tmp))
        try:
            await log.create_topics([TopicSpec("raw", 4), TopicSpec("events", 4)])
            record = CODEC.event_record(Event("e", "s", 1, "bench.Added", {"n": 1}, WHEN, "c", "r"))
            started = time.perf_counter()
            for i in range(count):
                await log.append("raw", [OutgoingRecord(record.value, f"s{i % streams}".encode())])
            raw_append = _rate(count, time.perf_counter() - started)

            runner: StreamRunner[int] = StreamRunner(
                log, "events", initial=lambda s: 0, apply=_apply, decide=_decide, codec=CODEC
            )
            started = time.perf_counter()
            for i in range(count):
                command = Command(f"c{i}", f"s{i % streams}", "bench.Add", {"n": 1}, WHEN)
                await runner.handle(command)
            handled = _rate(count, time.perf_counter() - started)
            print(f"{'baseline: one raw append per call':<44} {raw_append:>12,.0f} records/s")
            _line("commands: StreamRunner.handle", handled, raw_append, "commands")

            started = time.perf_counter()
            raw_read = 0
            ends = await log.end_offsets("events")
            for partition, end in ends.items():
                offset = 0
                while offset < end:
                    batch = await log.read("events", partition, offset)
                    raw_read += len(batch)
                    offset = batch[-1].offset + 1
            read_rate = _rate(raw_read, time.perf_counter() - started)

            fresh: StreamRunner[int] = StreamRunner(
                log, "events", initial=lambda s: 0, apply=_apply, decide=_decide, codec=CODEC
            )
            started = time.perf_counter()
            await fresh.catch_up()
            folded = _rate(count, time.perf_counter() - started)
            states = [(await fresh.load(f"s{i}")).state for i in range(streams)]
            assert sum(states) == count, "the fold lost or repeated events"
            print(f"{'baseline: raw read of the event topic':<44} {read_rate:>12,.0f} records/s")
            _line("fold: fresh runner catching up", folded, read_rate, "events")
        finally:
            await log.close()


def run(quick: bool = False) -> None:
    codec_events, commands = (5_000, 300) if quick else (50_000, 3_000)
    bench_codec(codec_events)
    asyncio.run(bench_log(commands, streams=100))


if __name__ == "__main__":
    run()
