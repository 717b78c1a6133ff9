"""Envelope codec: round trips, record headers, upcasting, and typed errors for bad records."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from arena_runtime.envelope import (
    COMMAND_CONTENT_TYPE,
    EVENT_CONTENT_TYPE,
    JSON,
    PROTOBUF,
    Codec,
    Command,
    EnvelopeError,
    Event,
    Schemas,
    TypeFilter,
    UndecodableRecord,
    UnknownType,
    UnsupportedSchemaVersion,
    ce_time,
    new_command,
    place_of,
)
from arena_runtime.eventlog import Record
from arena_runtime.proto_gen.arena.v1 import envelope_pb2
from google.protobuf.wrappers_pb2 import BoolValue, Int64Value, StringValue
from hypothesis import given
from hypothesis import strategies as st

WHEN = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def _v2(old: dict[str, Any]) -> dict[str, Any]:
    return {"points": old["points"], "bonus": 0}


def _v3(old: dict[str, Any]) -> StringValue:
    return StringValue(value=f"{old['points']}+{old['bonus']}")


def schemas(upto: int = 3) -> Schemas:
    """test.Score: JSON in v1 and v2, a protobuf message from v3 on."""
    registry = Schemas()
    registry.add_json("test.Score", version=1)
    if upto >= 2:
        registry.add_json("test.Score", version=2, upcast=_v2)
    if upto >= 3:
        registry.add_message(StringValue, type="test.Score", version=3, upcast=_v3)
    registry.add_json("test.Note")
    return registry


def event(**changes: Any) -> Event:
    fields: dict[str, Any] = {
        "event_id": "e-1",
        "stream": "match-1",
        "sequence": 1,
        "type": "test.Note",
        "payload": {"text": "héllo", "n": [1, 2]},
        "time": WHEN,
        "causation_id": "c-1",
        "correlation_id": "r-1",
        "traceparent": TRACEPARENT,
        "tracestate": "arena=1",
    }
    fields.update(changes)
    return Event(**fields)


def raw_envelope(**fields: Any) -> bytes:
    base: dict[str, Any] = {
        "event_id": "e-1",
        "stream": "s",
        "sequence": 1,
        "type": "test.Note",
        "schema_version": 1,
        "payload": b"{}",
        "payload_content_type": JSON,
    }
    base.update(fields)
    return envelope_pb2.Envelope(**base).SerializeToString()


def test_event_round_trip() -> None:
    codec = Codec(schemas())
    original = event()
    assert codec.decode_event(codec.encode_event(original)) == original


def test_protobuf_payload_round_trip_and_type_inference() -> None:
    registry = schemas()
    codec = Codec(registry)
    payload = StringValue(value="7+1")
    assert registry.type_of(payload) == "test.Score"
    decoded = codec.decode_event(codec.encode_event(event(type="test.Score", payload=payload)))
    assert decoded.payload == payload and decoded.schema_version == 3


def test_command_round_trip_and_record() -> None:
    codec = Codec(schemas())
    command = Command(
        command_id="cmd-1",
        stream="match-1",
        type="test.Note",
        payload={"move": "e4"},
        time=WHEN,
        correlation_id="r-1",
        traceparent=TRACEPARENT,
    )
    record = codec.command_record(command)
    assert codec.decode_command(record.value) == command
    assert record.key == b"match-1"
    assert dict(record.headers) == {
        "content-type": COMMAND_CONTENT_TYPE.encode(),
        "arena-type": b"test.Note",
        "traceparent": TRACEPARENT.encode(),
        "ce_specversion": b"1.0",
        "ce_id": b"cmd-1",
        "ce_source": b"/arena/streams/match-1",
        "ce_type": b"test.Note",
        "ce_time": b"2026-11-30T12:00:00.123456Z",
        "ce_partitionkey": b"match-1",
    }


def test_event_records_carry_the_cloudevents_binary_mode_attributes() -> None:
    """CloudEvents' Kafka binding, binary mode: each attribute a ``ce_`` header, the value the
    data; the sequence zero-padded so that the strings sort as the numbers do."""
    codec = Codec(schemas())
    headers = [dict(codec.event_record(event(sequence=n)).headers) for n in (9, 10, 11)]
    first = headers[0]
    assert first["ce_specversion"] == b"1.0"
    assert first["ce_id"] == b"e-1"
    assert first["ce_source"] == b"/arena/streams/match-1"
    assert first["ce_type"] == b"test.Note"
    assert first["ce_partitionkey"] == b"match-1"
    assert datetime.fromisoformat(first["ce_time"].decode()) == WHEN
    assert [h["ce_sequence"] for h in headers] == sorted(h["ce_sequence"] for h in headers)
    assert [int(h["ce_sequence"]) for h in headers] == [9, 10, 11]
    # The reading rule's place of each, without decoding it.
    placed = codec.event_record(event(sequence=4, batch_id="b-7", batch_index=2))
    assert dict(placed.headers)["arena-batch"] == b"2:b-7"
    assert place_of(_as_read(placed)) == (4, 2, "b-7")
    # Every name is a valid CloudEvents attribute name behind the binding's prefix.
    for name in first:
        if name.startswith("ce_"):
            assert name[3:].isalnum() and name[3:].islower()


def test_ce_time_is_utc_whatever_the_time_zone_of_the_time() -> None:
    paris = timezone(timedelta(hours=1))
    for moment in (WHEN, WHEN.astimezone(paris), datetime(2026, 12, 7, 23, 30, tzinfo=paris)):
        expected = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert ce_time(moment) == expected


def test_what_is_written_follows_what_is_registered_since() -> None:
    registry = Schemas()
    registry.add_json("test.Tally")
    codec = Codec(registry)
    assert codec.decode_event(codec.encode_event(event(type="test.Tally"))).schema_version == 1
    registry.add_json("test.Tally", version=2, upcast=dict)
    assert codec.decode_event(codec.encode_event(event(type="test.Tally"))).schema_version == 2


def test_event_record_is_keyed_by_stream_with_trace_headers() -> None:
    record = Codec(schemas()).event_record(event())
    assert record.key == b"match-1" and record.partition is None
    headers = dict(record.headers)
    assert headers["content-type"] == EVENT_CONTENT_TYPE.encode()
    assert headers["arena-type"] == b"test.Note"
    assert headers["traceparent"] == TRACEPARENT.encode()
    assert headers["tracestate"] == b"arena=1"


def test_encoding_is_deterministic() -> None:
    codec = Codec(schemas())
    one = event(payload={"b": 1, "a": 2})
    two = event(payload={"a": 2, "b": 1})
    assert codec.encode_event(one) == codec.encode_event(two)


def test_old_versions_are_upcast_when_read() -> None:
    old_writer = Codec(schemas(upto=1))
    stored = old_writer.encode_event(event(type="test.Score", payload={"points": 7}))
    assert Codec(schemas(upto=2)).decode_event(stored).payload == {"points": 7, "bonus": 0}
    newest = Codec(schemas(upto=3)).decode_event(stored)
    assert newest.payload == StringValue(value="7+0")
    assert newest.schema_version == 1  # as written: the log is never rewritten


def test_a_newer_version_than_the_reader_knows_is_unsupported() -> None:
    stored = Codec(schemas(upto=3)).encode_event(
        event(type="test.Score", payload=StringValue(value="1"))
    )
    with pytest.raises(UnsupportedSchemaVersion, match=r"v3 is not readable here \(v1, v2\)"):
        Codec(schemas(upto=2)).decode_event(stored)


def test_a_missing_upcaster_is_unsupported() -> None:
    registry = Schemas()
    registry.add_json("test.Gap", version=1)
    registry.add_json("test.Gap", version=3, upcast=lambda p: p)  # no v2 registered
    with pytest.raises(UnsupportedSchemaVersion, match="no upcaster from v1"):
        registry.decode("test.Gap", 1, JSON, b"{}")


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        (b"\xff\xff\xff", UndecodableRecord, "not an arena.v1.Envelope"),
        (b"", UndecodableRecord, "without event_id"),
        (raw_envelope(stream=""), UndecodableRecord, "without stream"),
        (raw_envelope(sequence=0), UndecodableRecord, "without sequence"),
        (raw_envelope(schema_version=0), UndecodableRecord, "without schema_version"),
        (raw_envelope(type="test.Nope"), UnknownType, "test.Nope"),
        (raw_envelope(schema_version=2), UnsupportedSchemaVersion, "test.Note v2"),
        (raw_envelope(payload=b"{not json"), UndecodableRecord, "payload"),
        (raw_envelope(payload=b"\xc3\x28"), UndecodableRecord, "payload"),
        (raw_envelope(payload_content_type="text/plain"), UndecodableRecord, "text/plain"),
        (
            raw_envelope(type="test.Score", schema_version=1, payload=b'{"pts": 1}'),
            UndecodableRecord,
            "upcast to v2 failed",
        ),
        (
            raw_envelope(
                type="test.Score",
                schema_version=3,
                payload=b"\x0a\x05ab",
                payload_content_type=PROTOBUF,
            ),
            UndecodableRecord,
            "payload",
        ),
        (
            raw_envelope(type="test.Score", schema_version=3, payload_content_type=JSON),
            UndecodableRecord,
            "application/x-protobuf",
        ),
    ],
    ids=[
        "garbage",
        "empty",
        "no-stream",
        "no-sequence",
        "no-version",
        "unknown-type",
        "future-version",
        "bad-json",
        "bad-utf8",
        "content-type-mismatch",
        "upcast-fails",
        "truncated-protobuf",
        "wrong-content-type",
    ],
)
def test_bad_records_raise_typed_errors(
    data: bytes, error: type[EnvelopeError], message: str
) -> None:
    with pytest.raises(error, match=message):
        Codec(schemas()).decode_event(data)


def test_error_reasons_are_metric_labels() -> None:
    assert (UndecodableRecord.reason, UnknownType.reason, UnsupportedSchemaVersion.reason) == (
        "undecodable",
        "unknown_type",
        "unsupported_schema_version",
    )


def test_a_command_is_not_an_event() -> None:
    codec = Codec(schemas())
    command = Command("cmd-1", "s", "test.Note", {}, WHEN)
    with pytest.raises(UndecodableRecord):
        codec.decode_event(codec.encode_command(command))


@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_an_envelope_error(data: bytes) -> None:
    codec = Codec(schemas())
    for decode in (codec.decode_event, codec.decode_command):
        with contextlib.suppress(EnvelopeError):
            decode(data)


def test_registry_refuses_inconsistent_schemas() -> None:
    registry = schemas(upto=1)
    with pytest.raises(ValueError, match="already registered"):
        registry.add_json("test.Score", version=1)
    with pytest.raises(ValueError, match="needs an upcaster"):
        registry.add_json("test.Score", version=2)
    with pytest.raises(ValueError, match="start at 1"):
        registry.add_json("test.Zero", version=0)


def test_writing_needs_a_registered_type_of_the_right_shape() -> None:
    codec = Codec(schemas())
    with pytest.raises(UnknownType):
        codec.encode_event(event(type="test.Nope"))
    with pytest.raises(TypeError, match="expects StringValue"):
        codec.encode_event(event(type="test.Score", payload={"points": 1}))
    with pytest.raises(ValueError, match="timezone-aware"):
        codec.encode_event(event(time=datetime(2026, 1, 1)))


def test_every_registry_reads_command_rejections() -> None:
    rejected = envelope_pb2.CommandRejected(command_id="c", code="not_your_turn")
    codec = Codec(Schemas())
    stored = codec.encode_event(event(type="arena.v1.CommandRejected", payload=rejected))
    assert codec.decode_event(stored).payload == rejected


def test_the_decoding_recipe_in_the_docs_works() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text()
    section = docs.split("## Envelope", 1)[1].split("\n## ", 1)[0]
    snippet = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(snippet, namespace)
    record = Codec(schemas()).event_record(event(sequence=4))
    assert dict(record.headers)["content-type"].decode() in section
    assert namespace["decode_event"](record.value) == {
        "stream": "match-1",
        "sequence": 4,
        "type": "test.Note",
        "schema_version": 1,
        "time": "2026-11-30T12:00:00.123456Z",
        "causation_id": "c-1",
        "payload": {"text": "héllo", "n": [1, 2]},
    }


@given(st.datetimes(timezones=st.just(UTC)))
def test_times_round_trip_to_the_microsecond(moment: datetime) -> None:
    codec = Codec(schemas())
    assert codec.decode_event(codec.encode_event(event(time=moment))).time == moment


def test_new_command_fills_type_id_time_and_trace() -> None:
    registry = schemas()
    command = new_command("match-1", StringValue(value="1"), schemas=registry, clock=lambda: WHEN)
    assert command.type == "test.Score" and command.time == WHEN
    assert len(command.command_id) == 36 and command.traceparent == ""  # no span here
    again = new_command("match-1", {"x": 1}, type="test.Note", command_id="client-7")
    assert again.command_id == "client-7" and again.type == "test.Note"
    with pytest.raises(UnknownType):
        new_command("match-1", {"x": 1}, schemas=registry)


def test_add_messages_registers_each_message_once_in_any_registry() -> None:
    from arena_runtime.schemas import accounts

    schemas = Schemas()
    accounts.register(schemas)
    registered = schemas.types()
    accounts.register(schemas)  # importing twice, or in any order, must not raise
    assert schemas.types() == registered
    expected = {m.DESCRIPTOR.full_name for m in (*accounts.COMMANDS, *accounts.EVENTS)}
    # A fresh registry already knows the runtime's own payloads (CommandRejected).
    assert set(registered) == set(Schemas().types()) | expected


# -- legacy records: read in a newer shape, never rewritten --------------------------------------


def _legacy_score(old: StringValue, stream: str) -> Int64Value:
    return Int64Value(value=len(old.value))


def _renamed(old: StringValue, stream: str) -> BoolValue:
    return BoolValue(value=old.value == stream)


def legacy_schemas() -> Schemas:
    """google.protobuf.StringValue v1 reads as v2 by an upcaster another party registered;
    test.Old (never written any more) reads as google.protobuf.BoolValue."""
    registry = Schemas()
    registry.add_message(Int64Value, type="test.Count", version=2)
    registry.add_legacy(StringValue, type="test.Count", version=1, upcast=_legacy_score)
    registry.add_message(BoolValue)
    registry.add_legacy(
        StringValue,
        type="test.Old",
        version=1,
        upcast=_renamed,
        into=BoolValue.DESCRIPTOR.full_name,
    )
    return registry


def _written(type_: str, payload: Any, version: int = 1, **changes: Any) -> bytes:
    """An event as an older writer stored it."""
    writer = Schemas()
    writer.add_message(type(payload), type=type_, version=1)
    stored = Codec(writer).decode_event(
        Codec(writer).encode_event(event(type=type_, payload=payload, **changes))
    )
    message = envelope_pb2.Envelope.FromString(Codec(writer).encode_event(stored))
    message.schema_version = version
    return message.SerializeToString()


def test_a_version_upcaster_from_another_party_reads_the_old_version() -> None:
    decoded = Codec(legacy_schemas()).decode_event(_written("test.Count", StringValue(value="abc")))
    assert decoded.type == "test.Count" and decoded.payload == Int64Value(value=3)
    assert decoded.schema_version == 1


def test_a_legacy_type_reads_as_another_type_with_its_stream() -> None:
    codec = Codec(legacy_schemas())
    decoded = codec.decode_event(_written("test.Old", StringValue(value="match-1")))
    assert decoded.type == "google.protobuf.BoolValue" and decoded.payload == BoolValue(value=True)
    assert decoded.schema_version == 1 and decoded.stream == "match-1"
    command = Command("c-1", "match-2", "test.Old", StringValue(value="match-1"), WHEN)
    writer = Schemas()
    writer.add_message(StringValue, type="test.Old")
    read = codec.decode_command(Codec(writer).encode_command(command))
    assert read.type == "google.protobuf.BoolValue" and read.payload == BoolValue(value=False)


def test_a_legacy_type_is_never_written() -> None:
    registry = legacy_schemas()
    with pytest.raises(UnknownType):
        Codec(registry).encode_event(event(type="test.Old", payload=StringValue(value="x")))
    assert "test.Old" in registry.types() and registry.has("test.Old", 1)


def test_a_failing_legacy_upcaster_is_an_undecodable_record() -> None:
    registry = Schemas()
    registry.add_message(BoolValue)
    registry.add_legacy(
        StringValue,
        type="test.Old",
        version=1,
        upcast=lambda p, s: 1 / 0,
        into=BoolValue.DESCRIPTOR.full_name,
    )
    with pytest.raises(UndecodableRecord, match=r"upcast to google\.protobuf\.BoolValue failed"):
        Codec(registry).decode_event(_written("test.Old", StringValue(value="x")))


def test_a_legacy_upcaster_is_registered_once() -> None:
    registry = legacy_schemas()
    with pytest.raises(ValueError, match="already has a legacy upcaster"):
        registry.add_legacy(StringValue, type="test.Count", version=1, upcast=_legacy_score)


# -- leaving records unread by their type header ------------------------------------------------


def typed(type_: str | None) -> Record:
    """A record whose ce_type header says ``type_`` (None: written before the header)."""
    headers = () if type_ is None else (("content-type", b"x"), ("ce_type", type_.encode()))
    return Record("t", 0, 0, b"k", b"not decoded", headers)


def test_a_type_filter_skips_only_types_read_as_nothing_wanted() -> None:
    skips = TypeFilter(legacy_schemas(), ["google.protobuf.BoolValue"])
    assert skips(typed("test.Count"))  # read only as itself, not wanted
    assert not skips(typed("google.protobuf.BoolValue"))
    assert not skips(typed("test.Old"))  # a legacy type read as a wanted one
    # Unknown here (decoding reports it as malformed), or no header: decoded as before.
    assert not skips(typed("test.Unknown"))
    assert not skips(typed(None))
    assert not skips(Record("t", 0, 0, b"k", b"x", (("ce_typ", b"test.Count"),)))


def test_a_type_filter_follows_what_is_registered_after_it() -> None:
    registry = Schemas()
    registry.add_message(BoolValue)
    skips = TypeFilter.for_payloads(registry, [BoolValue, Int64Value])  # Int64Value: unknown
    assert not skips(typed("test.Old"))
    registry.add_message(StringValue)
    assert skips(typed("google.protobuf.StringValue"))
    registry.add_legacy(
        StringValue, type="test.Old", version=1, upcast=_renamed, into="google.protobuf.BoolValue"
    )
    assert not skips(typed("test.Old"))
    registry.add_message(StringValue, type="test.Old", version=2, upcast=lambda p: p)
    assert not skips(typed("test.Old"))  # v1 is still read as a wanted type


def _as_read(outgoing: Any, headers: Any = None) -> Record:
    return Record(
        "t", 0, 0, outgoing.key, outgoing.value, outgoing.headers if headers is None else headers
    )


@pytest.mark.parametrize(
    "headers",
    [
        (),
        (("ce_sequence", b"00000000000000000004"),),
        (("arena-batch", b"0:b"),),
        (("ce_sequence", b"x"), ("arena-batch", b"0:b")),
        (("ce_sequence", b"4"), ("arena-batch", b"zero:b")),
    ],
)
def test_a_record_without_a_readable_place_has_none(headers: Any) -> None:
    """Written before the headers (or not by us): the reader decodes it instead."""
    record = Codec(schemas()).event_record(event())
    assert place_of(_as_read(record, headers)) is None
