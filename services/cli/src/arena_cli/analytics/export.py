"""`arena events export`: a range of the event topics to JSON Lines and Parquet.

Layout under the output directory (Hive-style partitions, so DuckDB, pyarrow and Spark read the
game and the day from the path)::

    parquet/<type>/game=<game>/day=<YYYY-MM-DD>/<topic>-p<partition>-<first offset>.parquet
    jsonl/game=<game>/day=<YYYY-MM-DD>/<topic>-p<partition>-<first offset>.jsonl
    export-state.json

One Parquet table per event type, its columns typed from the protobuf schema
(:meth:`arena_cli.analytics.convert.Rows.arrow_schema`), and one per type of message an event
carries in an ``Any`` field (a match's final event, its settings: :meth:`Rows.embedded`), under
the carrier's envelope; a JSON line per event, with its type (the carried message in place).

The range is fixed when an export starts (the end offsets then, unless given) and kept in
``export-state.json`` with, per partition, the next offset to export. Each chunk's files are
written (to a temporary name, then renamed) before the state moves past them, and a chunk's file
names are its first offset, so an export that stopped (a crash, Ctrl-C) and is run again with
the same arguments writes every file once: it goes on from the state and rewrites at most the
chunk it was in, byte for byte. Running a finished export again changes nothing.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from arena_runtime import topics
from arena_runtime.envelope import EnvelopeError, Schemas
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.privacy import Pseudonymiser

from arena_cli.analytics.convert import (
    ENVELOPE_COLUMNS,
    GameOf,
    Rows,
    json_line,
    reading_schemas,
)

STATE_FILE = "export-state.json"
STATE_VERSION = 1
FORMATS = ("jsonl", "parquet")
#: Records read, decoded and written at a time: memory is bounded by one chunk.
DEFAULT_CHUNK = 20_000


class ExportError(Exception):
    """An export that cannot be done as asked; nothing was written."""


@dataclass(frozen=True)
class Range:
    """What to export: topics, an offset window per partition, a time window."""

    topics: tuple[str, ...] = topics.EVENTS
    start_offset: int = 0
    #: Exclusive; None: the end of each partition when the export starts.
    end_offset: int | None = None
    since: datetime | None = None
    until: datetime | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "topics": list(self.topics),
            "start_offset": self.start_offset,
            "end_offset": self.end_offset,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
        }


@dataclass
class Report:
    events: int = 0
    #: Records skipped: outside the time window.
    outside: int = 0
    #: Records that could not be decoded (malformed, unknown type or version), by reason.
    skipped: dict[str, int] = field(default_factory=dict)
    files: int = 0
    resumed: bool = False
    seconds: float = 0.0


Progress = Callable[[str], None]


def stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Exporter:
    def __init__(
        self,
        log: EventLog,
        out: Path,
        *,
        formats: Sequence[str] = FORMATS,
        pseudonym: Pseudonymiser | None = None,
        chunk: int = DEFAULT_CHUNK,
        progress: Progress | None = None,
        schemas: Schemas | None = None,
    ) -> None:
        unknown = set(formats) - set(FORMATS)
        if unknown or not formats:
            raise ExportError(f"formats are {', '.join(FORMATS)}; not {sorted(unknown)}")
        if chunk < 1:
            raise ExportError("the chunk must be at least one record")
        self.log = log
        self.out = out
        self.formats = tuple(f for f in FORMATS if f in formats)
        self.pseudonym = pseudonym
        self.chunk = chunk
        self.progress = progress
        self.schemas = schemas or reading_schemas()
        self.rows = Rows(self.schemas, pseudonym)
        #: Per type, its Arrow schema (made once).
        self._arrow: dict[str, Any] = {}
        #: Date ordinal -> its day partition's name.
        self._days: dict[int, str] = {}
        #: The types of the messages carried in Any fields that have a table of their own.
        self._embedded: dict[str, Any] = {}

    # -- the state ------------------------------------------------------------------------------

    def _settings(self, range_: Range) -> dict[str, Any]:
        return {
            "range": range_.describe(),
            "formats": list(self.formats),
            "pseudonymised": self.pseudonym is not None,
        }

    async def _load_state(self, range_: Range) -> tuple[dict[str, Any], bool]:
        path = self.out / STATE_FILE
        settings = self._settings(range_)
        if path.exists():
            state: dict[str, Any] = json.loads(path.read_text())
            if state.get("version") != STATE_VERSION or state.get("settings") != settings:
                raise ExportError(
                    f"{self.out} holds another export ({state.get('settings')}); "
                    "give another --out, or the same arguments to resume it"
                )
            return state, True
        if self.out.exists() and any(self.out.iterdir()):
            raise ExportError(f"{self.out} is not empty and holds no export to resume")
        ends: dict[str, dict[str, int]] = {}
        for topic in range_.topics:
            partitions = await self.log.end_offsets(topic)
            ends[topic] = {
                str(p): end if range_.end_offset is None else min(end, range_.end_offset)
                for p, end in sorted(partitions.items())
            }
        state = {
            "version": STATE_VERSION,
            "settings": settings,
            "ends": ends,
            "next": {
                topic: {p: min(range_.start_offset, end) for p, end in per.items()}
                for topic, per in ends.items()
            },
            "games": {},
            "counts": {"events": 0, "outside": 0, "skipped": {}, "files": 0},
        }
        self.out.mkdir(parents=True, exist_ok=True)
        self._save_state(state)
        return state, False

    def _save_state(self, state: dict[str, Any]) -> None:
        path = self.out / STATE_FILE
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(state, sort_keys=True, indent=1))
        os.replace(temporary, path)

    # -- the export -----------------------------------------------------------------------------

    async def run(self, range_: Range) -> Report:
        started = time.monotonic()
        state, resumed = await self._load_state(range_)
        games = GameOf(self.schemas, state["games"])
        total = sum(end for per in state["ends"].values() for end in per.values()) - sum(
            min(range_.start_offset, end) for per in state["ends"].values() for end in per.values()
        )
        done = sum(
            state["next"][t][p] - min(range_.start_offset, end)
            for t, per in state["ends"].items()
            for p, end in per.items()
        )
        for topic, per in state["ends"].items():
            for partition, end in per.items():
                while state["next"][topic][partition] < end:
                    offset = state["next"][topic][partition]
                    read = await self._chunk(
                        topic, int(partition), offset, end, range_, games, state
                    )
                    done += read
                    state["next"][topic][partition] = offset + read
                    self._save_state(state)
                    if self.progress is not None:
                        elapsed = time.monotonic() - started
                        self.progress(
                            f"{topic} p{partition}: offset {offset + read}/{end}; "
                            f"{done:,}/{total:,} records ({100 * done / max(total, 1):.0f}%), "
                            f"{state['counts']['events']:,} events exported, {elapsed:.1f} s"
                        )
        counts = state["counts"]
        return Report(
            events=counts["events"],
            outside=counts["outside"],
            skipped=dict(counts["skipped"]),
            files=counts["files"],
            resumed=resumed,
            seconds=time.monotonic() - started,
        )

    async def _chunk(
        self,
        topic: str,
        partition: int,
        offset: int,
        end: int,
        range_: Range,
        games: GameOf,
        state: dict[str, Any],
    ) -> int:
        """Export records [offset, offset + chunk) of a partition (below end); how many were
        read."""
        records: list[Record] = []
        cursor = offset
        limit = min(end, offset + self.chunk)
        while cursor < limit:
            batch = await self.log.read(topic, partition, cursor, min(limit - cursor, 5000))
            if not batch:
                break
            records.extend(r for r in batch if r.offset < limit)
            cursor = batch[-1].offset + 1
        if not records:
            # Kafka may have compacted or deleted nothing here; an empty read ends the range.
            return limit - offset
        counts = state["counts"]
        decode = self.rows.codec.decode_event
        values = self.rows.payload_values
        envelope = self.rows.envelope_values
        since, until = range_.since, range_.until
        days = self._days
        # (type, game, day) -> the rows, each a tuple of the type's columns
        groups: dict[tuple[str, str, str], list[tuple[Any, ...]]] = defaultdict(list)
        # the same for the messages events carry in their Any fields (Parquet only: a JSON line
        # holds them in place)
        carried: dict[tuple[str, str, str], list[tuple[Any, ...]]] = defaultdict(list)
        embedded = self.rows.embedded
        names: dict[str, tuple[str, ...]] = {}
        for record in records:
            try:
                event = decode(record.value)
            except EnvelopeError as exc:
                counts["skipped"][exc.reason] = counts["skipped"].get(exc.reason, 0) + 1
                continue
            game = games(event.stream, event.type, event.payload)
            moment = event.time
            if (since is not None and moment < since) or (until is not None and moment >= until):
                counts["outside"] += 1
                continue
            columns, row = values(event.payload)
            if event.type not in names:
                names[event.type] = ENVELOPE_COLUMNS + columns
            ordinal = moment.toordinal()
            day = days.get(ordinal)
            if day is None:
                day = days[ordinal] = moment.strftime("%Y-%m-%d")
            head = envelope(topic, partition, record.offset, event)
            groups[(event.type, game, day)].append(head + row)
            counts["events"] += 1
            for descriptor, inner_columns, inner_row in embedded(event.payload):
                inner_type = descriptor.full_name
                self._embedded[inner_type] = descriptor
                names[inner_type] = ENVELOPE_COLUMNS + inner_columns
                carried[(inner_type, game, day)].append(head + inner_row)
        name = f"{topic}-p{partition}-{offset:012d}"
        if "jsonl" in self.formats:
            by_place: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
            for (type_, game, day), rows in groups.items():
                keys = names[type_]
                for row in rows:
                    line = json_line({"type": type_, **dict(zip(keys, row, strict=True))})
                    by_place[(game, day)].append((row[2], line))
            for (game, day), lines in sorted(by_place.items()):
                lines.sort()
                path = self.out / "jsonl" / f"game={game}" / f"day={day}" / f"{name}.jsonl"
                text = "".join(f"{line}\n" for _, line in lines)
                _write_atomically(path, text.encode())
                counts["files"] += 1
        if "parquet" in self.formats:
            for key, rows in carried.items():
                groups[key].extend(rows)
            for (type_, game, day), rows in sorted(groups.items()):
                path = (
                    self.out / "parquet" / type_ / f"game={game}" / f"day={day}" / f"{name}.parquet"
                )
                self._write_parquet(path, type_, names[type_], rows)
                counts["files"] += 1
        return cursor - offset

    def _write_parquet(
        self, path: Path, type_: str, names: tuple[str, ...], rows: list[tuple[Any, ...]]
    ) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = self._arrow.get(type_)
        if schema is None:
            carried = self._embedded.get(type_)
            schema = self._arrow[type_] = (
                self.rows.arrow_schema(type_)
                if carried is None
                else self.rows.arrow_schema_of(carried)
            )
            if tuple(schema.names) != names:
                raise ExportError(f"{type_}: the rows' columns are not the table's")
        columns = [
            pa.array(column, type=field.type)
            for column, field in zip(zip(*rows, strict=True), schema, strict=True)
        ]
        table = pa.Table.from_arrays(columns, schema=schema)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        pq.write_table(table, temporary, compression="zstd")
        os.replace(temporary, path)


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
