"""`arena events export` on the embedded log and on Kafka: every event exported equals the event
in the log, a second export is identical, a stopped export resumes to the same files, Parquet
opens in pyarrow and DuckDB with the declared types, and no secret is ever exported."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from arena_cli.analytics.convert import ENVELOPE_COLUMNS, Rows, json_default, reading_schemas
from arena_cli.analytics.export import Exporter, ExportError, Range
from arena_runtime import privacy, topics
from arena_runtime.config import Settings
from arena_runtime.envelope import Codec, EnvelopeError
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.privacy import Pseudonymiser
from google.protobuf import json_format, symbol_database
from google.protobuf.message import Message

from tests.analytics import data
from tests.analytics.conftest import Simulated

KEY = "export-test-pseudonym-key-0123456789"


async def prepared(simulated: Simulated, settings: Settings) -> EventLog:
    """The log under test, started, holding the data set."""
    target = open_event_log(settings)
    await target.start()
    async with open_event_log(simulated.settings) as source:
        await data.copy_log(source, target, simulated.settings.partitions)
    await data.add_account(target)
    return target


async def log_events(log: EventLog) -> dict[tuple[str, int, int], Any]:
    """(topic, partition, offset) -> the decoded event, for every decodable event record."""
    codec = Codec(reading_schemas())
    found = {}
    for topic in topics.EVENTS:
        for partition, end in (await log.end_offsets(topic)).items():
            for record in await log.read(topic, partition, 0, end + 1):
                with contextlib.suppress(EnvelopeError):
                    found[(topic, partition, record.offset)] = codec.decode_event(record.value)
    return found


def without_secrets(message: Message) -> Message:
    copy = type(message)()
    copy.CopyFrom(message)
    _clear(copy)
    return copy


def _clear(message: Message) -> None:
    for field, value in message.ListFields():
        if field.name in privacy.SECRET_FIELDS:
            message.ClearField(field.name)
        elif (
            field.message_type is not None and field.message_type.full_name != "google.protobuf.Any"
        ):
            for item in value if field.is_repeated else [value]:
                _clear(item)


def carried_type(name: str) -> Message:
    message: Message = symbol_database.Default().GetSymbol(name)()
    return message


def as_json_payload(value: Any) -> Any:
    """A row's payload back in protobuf's JSON mapping: Any fields were JSON text, unset
    optional fields None."""
    if isinstance(value, dict):
        return {k: as_json_payload(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [as_json_payload(v) for v in value]
    if isinstance(value, str) and value.startswith('{"@type"'):
        return json.loads(value)
    return value


async def export(log: EventLog, out: Path, **options: Any) -> Any:
    range_ = options.pop("range_", Range())
    return await Exporter(log, out, **options).run(range_)


async def test_export_round_trips_and_repeats_identically(
    simulated: Simulated, log_settings: Settings, tmp_path: Path
) -> None:
    log = await prepared(simulated, log_settings)
    try:
        report = await export(log, tmp_path / "one")
        expected = await log_events(log)
        again = await export(log, tmp_path / "two")
    finally:
        await log.close()
    assert report.skipped == {"undecodable": 1}
    assert report.events == len(expected) == again.events
    assert data.tree(tmp_path / "one") == data.tree(tmp_path / "two")

    rows = data.jsonl_rows(tmp_path / "one")
    assert len(rows) == len(expected)
    schemas = reading_schemas()
    for row in rows:
        event = expected[(row["topic"], row["partition"], row["offset"])]
        assert row["type"] == event.type
        assert row["event_id"] == event.event_id and row["stream"] == event.stream
        assert row["sequence"] == event.sequence and row["batch_id"] == event.batch_id
        assert row["time"] == json_default(event.time)
        assert row["causation_id"] == event.causation_id
        payload = {k: v for k, v in row.items() if k not in ENVELOPE_COLUMNS and k != "type"}
        message = schemas.current(event.type).python_type()
        json_format.ParseDict(as_json_payload(payload), message)
        assert message == without_secrets(event.payload), row
    assert {r["type"] for r in rows} >= {
        "arena.v1.MatchOpened",
        "arena.v1.GameStarted",
        "arena.v1.MatchEnded",
        "arena.v1.MatchRated",
        "arena.v1.AccountRegistered",
    }

    # Parquet: one table per type, the declared types, the same rows as the JSON lines; and one
    # per type of message an event carries in an Any field, a row per message, under the
    # envelope of the event that carried it.
    declared = Rows(schemas)
    by_type: dict[str, list[dict[str, Any]]] = {}
    carried: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_type.setdefault(row["type"], []).append(row)
        for value in list(row.values()):
            if isinstance(value, str) and value.startswith('{"@type"'):
                inner = json.loads(value)
                type_ = inner.pop("@type").rsplit("/", 1)[1]
                envelope = {k: row[k] for k in ENVELOPE_COLUMNS}
                carried.setdefault(type_, []).append({**envelope, "inner": inner})
    assert {"arena.v1.GameEnded", "arena.v1.MathsWarriorsSettings"} <= set(carried), sorted(carried)
    root = tmp_path / "one" / "parquet"
    assert sorted(p.name for p in root.iterdir()) == sorted({*by_type, *carried})
    for type_, carried_rows in carried.items():
        table = ds.dataset(root / type_, format="parquet", partitioning="hive").to_table()
        got = sorted(table.to_pylist(), key=lambda r: (r["topic"], r["partition"], r["offset"]))
        want = sorted(carried_rows, key=lambda r: (r["topic"], r["partition"], r["offset"]))
        assert len(got) == len(want)
        for parquet_row, json_row in zip(got, want, strict=True):
            inner_json = json_row.pop("inner")
            normal = json.loads(json.dumps(parquet_row, default=json_default))
            assert {k: normal[k] for k in ENVELOPE_COLUMNS} == json_row
            found = json_format.ParseDict(
                as_json_payload({k: v for k, v in normal.items() if k not in json_row}),
                type(carried_type(type_))(),
                ignore_unknown_fields=True,  # the partition's game and day
            )
            assert found == json_format.ParseDict(inner_json, type(carried_type(type_))())
    for type_, typed_rows in by_type.items():
        for file in (root / type_).rglob("*.parquet"):
            assert pq.read_schema(file).remove_metadata() == declared.arrow_schema(type_)
        table = ds.dataset(root / type_, format="parquet", partitioning="hive").to_table()
        got = sorted(table.to_pylist(), key=lambda r: (r["topic"], r["partition"], r["offset"]))
        want = sorted(typed_rows, key=lambda r: (r["topic"], r["partition"], r["offset"]))
        assert len(got) == len(want)
        for parquet_row, json_row in zip(got, want, strict=True):
            assert str(parquet_row.pop("day"))[:10] == json_row["time"][:10]
            # The partition's game; a payload's own game field is the same value.
            game = parquet_row["game"] if "game" in json_row else parquet_row.pop("game")
            assert game in ("maths-warriors", "none")
            normal = json.loads(json.dumps(parquet_row, default=json_default))
            assert normal == {k: v for k, v in json_row.items() if k != "type"}
    described = {
        row[0]: row[1]
        for row in duckdb.sql(
            f"DESCRIBE SELECT * FROM read_parquet('{root}/arena.v1.MatchEnded/*/*/*.parquet', "
            "hive_partitioning = true)"
        ).fetchall()
    }
    assert described["time"] == "TIMESTAMP WITH TIME ZONE"
    assert described["offset"] == "BIGINT"
    assert described["seats"].startswith("STRUCT(seat UINTEGER, rank UINTEGER, score BIGINT)[]")
    assert described["game"] == "VARCHAR" and described["day"] == "DATE"


def exported_text(root: Path) -> str:
    """Everything an export holds, as text: the JSON lines and the Parquet tables' values."""
    parts = [p.read_text() for p in root.rglob("*.jsonl")]
    for file in root.rglob("*.parquet"):
        parts.append(repr(pq.read_table(file).to_pylist()))
        parts.append(repr(pq.read_schema(file)))
    return "\n".join(parts)


async def test_no_secret_is_exported_and_pseudonyms_hide_players(
    simulated: Simulated, log_settings: Settings, tmp_path: Path
) -> None:
    log = await prepared(simulated, log_settings)
    try:
        await export(log, tmp_path / "plain")
        await export(log, tmp_path / "hidden", pseudonym=Pseudonymiser(KEY))
    finally:
        await log.close()
    plain, hidden = exported_text(tmp_path / "plain"), exported_text(tmp_path / "hidden")
    assert data.USERNAME in plain and data.PLAYER_ID in plain  # the operators' own copy
    for text in (plain, hidden):
        assert data.PASSWORD_HASH not in text and data.TOKEN_HASH not in text
        assert "password_hash" not in text and "token_hash" not in text
    for identifier in (data.USERNAME, data.PLAYER_ID, data.SESSION_ID):
        assert identifier not in hidden, identifier
    # The simulated players' ids (sim-<12 hex digits>; the match ids, sim-<game>-…, stay).
    assert re.search(r"sim-[0-9a-f]{12}(?![0-9a-f])", plain)
    assert not re.search(r"sim-[0-9a-f]{12}(?![0-9a-f])", hidden)
    pseudonym = Pseudonymiser(KEY)
    assert pseudonym(data.PLAYER_ID) in hidden
    assert "account-" + pseudonym(data.USERNAME.lower()) in hidden
    # Still joinable: a player's pseudonym is the same in the match and in the ladder.
    rated = [r for r in data.jsonl_rows(tmp_path / "hidden") if r["type"] == "arena.v1.MatchRated"]
    opened = [
        r for r in data.jsonl_rows(tmp_path / "hidden") if r["type"] == "arena.v1.MatchOpened"
    ]
    in_matches = {seat["player_id"] for r in opened for seat in r["seats"]}
    assert rated and {s["player"]["player_id"] for r in rated for s in r["seats"]} <= in_matches


async def test_a_stopped_export_resumes_to_the_same_files(
    simulated: Simulated, log_settings: Settings, tmp_path: Path
) -> None:
    class Stop(Exception):
        pass

    calls = 0

    def crash_on_the_third_chunk(line: str) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise Stop

    log = await prepared(simulated, log_settings)
    try:
        await export(log, tmp_path / "whole", chunk=17)
        with pytest.raises(Stop):
            await export(log, tmp_path / "stopped", chunk=17, progress=crash_on_the_third_chunk)
        state = json.loads((tmp_path / "stopped" / "export-state.json").read_text())
        assert sum(sum(p.values()) for p in state["next"].values()) > 0
        resumed = await export(log, tmp_path / "stopped", chunk=17)
        assert resumed.resumed
        finished = await export(log, tmp_path / "stopped", chunk=17)
        with pytest.raises(ExportError):  # another range into the same directory
            await export(log, tmp_path / "stopped", chunk=17, range_=Range(start_offset=5))
    finally:
        await log.close()
    assert data.tree(tmp_path / "stopped") == data.tree(tmp_path / "whole")
    assert finished.events == resumed.events


async def test_time_and_offset_ranges(simulated: Simulated, tmp_path: Path) -> None:
    async with open_event_log(simulated.settings) as log:
        events = await log_events(log)
        times = sorted(e.time for e in events.values())
        middle = times[len(times) // 2]
        report = await export(log, tmp_path / "early", range_=Range(until=middle))
        offsets = await export(
            log, tmp_path / "offsets", range_=Range(start_offset=2, end_offset=5)
        )
    assert report.events == sum(t < middle for t in times) and report.outside > 0
    assert all(row["time"] < json_default(middle) for row in data.jsonl_rows(tmp_path / "early"))
    kept = data.jsonl_rows(tmp_path / "offsets")
    assert kept and {row["offset"] for row in kept} <= {2, 3, 4}
    assert offsets.events == sum(1 for (_, _, o) in events if 2 <= o < 5)


def test_times_in_json_sort_as_they_happened() -> None:
    """A whole second keeps its fraction, so the text compares as the times do (a zero fraction
    dropped made "…:05Z" sort after "…:05.250000Z", which failed the range test now and then)."""
    from datetime import UTC, datetime

    from arena_cli.analytics.convert import json_default

    whole = datetime(2026, 12, 2, 3, 30, 5, tzinfo=UTC)
    later = whole.replace(microsecond=250_000)
    assert json_default(whole) == "2026-12-02T03:30:05.000000Z"
    assert json_default(whole) < json_default(later)
