"""Envelope codec: round trips, record headers, upcasting, and typed errors for bad records."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
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
    UndecodableRecord,
    UnknownType,
    UnsupportedSchemaVersion,
    new_command,
)
from arena_runtime.proto_gen.arena.v1 import envelope_pb2
from google.protobuf.wrappers_pb2 import StringValue
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
    }


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
    from arena_runtime.schemas import maths_warriors

    schemas = Schemas()
    maths_warriors.register(schemas)
    registered = schemas.types()
    maths_warriors.register(schemas)  # importing twice, or in any order, must not raise
    assert schemas.types() == registered
    expected = {m.DESCRIPTOR.full_name for m in (*maths_warriors.COMMANDS, *maths_warriors.EVENTS)}
    # A fresh registry already knows the runtime's own payloads (CommandRejected).
    assert set(registered) == set(Schemas().types()) | expected
