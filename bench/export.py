"""`arena events export` to Parquet: throughput beside a raw read of the same log, and peak memory.

A data set is played first by the real match and rating services (`arena events simulate`'s
Simulation, Maths Warriors, on the embedded log), then its event records are appended again and
again into a second embedded log until it holds N events (1,000,000; 50,000 with --quick). On
that log, in the same run:

- the baseline: every record read and its envelope and payload decoded (Codec.decode_event), the
  least any reader of the log does;
- the export of the whole log to Parquet (one table per type, typed columns), events per second,
  and the ratio to the baseline (target: at least 0.3);
- the peak resident memory of a separate process exporting the whole log (target: under 300 MB).
"""

from __future__ import annotations

import asyncio
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena_runtime import topics
from arena_runtime.config import load_settings
from arena_runtime.eventlog import OutgoingRecord
from arena_runtime.eventlog.embedded import EmbeddedEventLog
from arena_runtime.eventlog.factory import open_event_log

from bench.targets import target_line

TARGET_RATIO = 0.3
TARGET_PEAK_MB = 300.0
EVENTS = 1_000_000
QUICK_EVENTS = 50_000
PARTITIONS = 8


async def _simulate(data_dir: Path, matches: int) -> None:
    from arena_cli.analytics.simulate import Simulation, wait_for_ratings
    from arena_games.registry import STANDARD
    from arena_match.service import build_service as match_service
    from arena_rating.service import build_service as rating_service
    from arena_runtime.host import open_runtime

    settings = load_settings({"ARENA_DATA_DIR": str(data_dir), "ARENA_PARTITIONS": str(PARTITIONS)})
    async with open_runtime(settings) as runtime:
        services = [await match_service(runtime), await rating_service(runtime)]
        for service in services:
            await service.start()
        try:
            simulation = Simulation(
                runtime.log, STANDARD.find("maths-warriors"), seed=1, partitions=PARTITIONS
            )
            report = await simulation.run(matches, 16, 8)
            await wait_for_ratings(runtime.log, report.matches)
        finally:
            for service in reversed(services):
                await service.stop()


async def _grow(source_dir: Path, target: Path, events: int) -> int:
    """Append the source's event records into ``target`` until it holds ``events``."""
    source = EmbeddedEventLog(source_dir / "events.db")
    await source.start()
    records: list[tuple[str, int, OutgoingRecord]] = []
    for topic in topics.EVENTS:
        for partition, end in (await source.end_offsets(topic)).items():
            for record in await source.read(topic, partition, 0, end + 1):
                records.append(
                    (
                        topic,
                        partition,
                        OutgoingRecord(record.value, record.key, record.headers, partition),
                    )
                )
    await source.close()
    log = EmbeddedEventLog(target / "events.db")
    await log.start()
    await topics.ensure_topics(log, PARTITIONS)
    written = 0
    while written < events:
        by_topic: dict[str, list[OutgoingRecord]] = {}
        for topic, _, outgoing in records[: events - written]:
            by_topic.setdefault(topic, []).append(outgoing)
        for topic, batch in by_topic.items():
            for start in range(0, len(batch), 5000):
                await log.append(topic, batch[start : start + 5000])
            written += len(batch)
    await log.close()
    return written


async def _raw_decode(data_dir: Path) -> tuple[int, float]:
    from arena_cli.analytics.convert import reading_schemas
    from arena_runtime.envelope import Codec

    codec = Codec(reading_schemas())
    decode = codec.decode_event
    settings = load_settings({"ARENA_DATA_DIR": str(data_dir)})
    async with open_event_log(settings) as log:
        started = time.perf_counter()
        count = 0
        for topic in topics.EVENTS:
            for partition, end in (await log.end_offsets(topic)).items():
                offset = 0
                while offset < end:
                    batch = await log.read(topic, partition, offset, 5000)
                    if not batch:
                        break
                    for record in batch:
                        decode(record.value)
                    count += len(batch)
                    offset = batch[-1].offset + 1
        return count, time.perf_counter() - started


async def _export(data_dir: Path, out: Path) -> tuple[int, float]:
    from arena_cli.analytics.export import Exporter, Range

    settings = load_settings({"ARENA_DATA_DIR": str(data_dir)})
    async with open_event_log(settings) as log:
        started = time.perf_counter()
        report = await Exporter(log, out, formats=("parquet",)).run(Range())
        return report.events, time.perf_counter() - started


def _child_peak_mb(data_dir: Path, out: Path) -> float:
    """Peak RSS of a separate process exporting the log (ru_maxrss of the waited child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(
        [sys.executable, "-m", "bench.export", "--child", str(data_dir), str(out)], check=True
    )
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kb <= before:
        raise RuntimeError("the child's peak is hidden by an earlier, larger child")
    return peak_kb / 1024


def run(quick: bool = False) -> None:
    events = QUICK_EVENTS if quick else EVENTS
    root = Path(tempfile.mkdtemp(prefix="arena-bench-export-"))
    try:
        started = time.perf_counter()
        asyncio.run(_simulate(root / "played", 12 if quick else 40))
        written = asyncio.run(_grow(root / "played", root / "big", events))
        print(f"data set: {written:,} events ({time.perf_counter() - started:.0f} s to make)")
        raw_count, raw_seconds = asyncio.run(_raw_decode(root / "big"))
        raw_rate = raw_count / raw_seconds
        print(f"raw read + decode: {raw_count:,} events in {raw_seconds:.1f} s, {raw_rate:,.0f}/s")
        exported, export_seconds = asyncio.run(_export(root / "big", root / "out"))
        export_rate = exported / export_seconds
        ratio = export_rate / raw_rate
        print(
            f"export to Parquet: {exported:,} events in {export_seconds:.1f} s, "
            f"{export_rate:,.0f}/s; ratio to the raw read {ratio:.2f}; "
            f"{target_line(ratio, '>=', TARGET_RATIO, what='ratio')}"
        )
        shutil.rmtree(root / "out")
        peak = _child_peak_mb(root / "big", root / "out")
        print(
            f"peak memory exporting {exported:,} events: {peak:.0f} MB; "
            f"{target_line(peak, '<', TARGET_PEAK_MB, f'{TARGET_PEAK_MB:.0f} MB', 'peak')}"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _child(data_dir: str, out: str) -> None:
    asyncio.run(_export(Path(data_dir), Path(out)))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
    else:
        run(quick="--quick" in sys.argv)
