"""Encode and decode the envelope of every record (proto/arena/v1/envelope.proto).

A record's value is an ``arena.v1.Envelope`` (events) or ``arena.v1.CommandEnvelope``
(commands) whose payload is opaque bytes named by ``type`` and ``schema_version``. A
:class:`Schemas` registry knows, per type, how to decode every version still found in the log
and how to upcast each one to the next, so a reader always gets the current shape of a payload
and old events are never rewritten (DESIGN.md, rule 6).

Decoding fails only with an :class:`EnvelopeError`: :class:`UndecodableRecord`,
:class:`UnknownType` or :class:`UnsupportedSchemaVersion`. Consumers log, count and skip those
(arena_runtime.malformed); any other exception is a bug.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from google.protobuf.message import DecodeError, Message
from google.protobuf.timestamp_pb2 import Timestamp

from arena_runtime import telemetry
from arena_runtime.entropy import new_uuid
from arena_runtime.eventlog.base import OutgoingRecord
from arena_runtime.proto_gen.arena.v1 import envelope_pb2

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

#: Record headers written beside the envelope, so tools can route and trace without decoding.
CONTENT_TYPE_HEADER = "content-type"
TYPE_HEADER = "arena-type"
TRACEPARENT_HEADER = telemetry.TRACEPARENT
TRACESTATE_HEADER = telemetry.TRACESTATE
EVENT_CONTENT_TYPE = f"{PROTOBUF}; messageType=arena.v1.Envelope"
COMMAND_CONTENT_TYPE = f"{PROTOBUF}; messageType=arena.v1.CommandEnvelope"

Upcaster = Callable[[Any], Any]


class EnvelopeError(Exception):
    """A record that cannot be read. ``reason`` is the metric label of the failure kind."""

    reason: ClassVar[str] = "malformed"


class UndecodableRecord(EnvelopeError):
    """The bytes are not an envelope, a required field is missing, or the payload is corrupt."""

    reason = "undecodable"


class UnknownType(EnvelopeError):
    """The payload type is not registered with this reader."""

    reason = "unknown_type"


class UnsupportedSchemaVersion(EnvelopeError):
    """The payload's schema version is unknown here (newer than this reader, or never upcast)."""

    reason = "unsupported_schema_version"


@dataclass(frozen=True, slots=True)
class Event:
    """One decoded event; ``payload`` is at the current schema version of ``type``."""

    event_id: str
    stream: str
    sequence: int
    type: str
    payload: Any
    time: datetime
    causation_id: str = ""
    correlation_id: str = ""
    traceparent: str = ""
    tracestate: str = ""
    #: The version the event was written with (before upcasting).
    schema_version: int = 1
    #: The write this event was appended in ("" for a batch of one), and its place in it.
    batch_id: str = ""
    batch_index: int = 0


@dataclass(frozen=True, slots=True)
class Command:
    """One decoded command; ``payload`` is at the current schema version of ``type``."""

    command_id: str
    stream: str
    type: str
    payload: Any
    time: datetime
    causation_id: str = ""
    correlation_id: str = ""
    traceparent: str = ""
    tracestate: str = ""
    schema_version: int = 1


@dataclass(frozen=True, slots=True)
class PayloadSchema:
    """How to read (and, for the current version, write) one version of one payload type."""

    type: str
    version: int
    content_type: str
    decode: Callable[[bytes], Any]
    encode: Callable[[Any], bytes]
    #: Turns a payload of ``version - 1`` into this version; None for version 1.
    upcast: Upcaster | None = None
    #: Python class of payloads of this version (protobuf schemas), to infer ``type``.
    python_type: builtins.type | None = None


def _decode_json(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


def _encode_json(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


@dataclass
class Schemas:
    """Registry of payload types and their versions."""

    _versions: dict[str, dict[int, PayloadSchema]] = field(default_factory=dict)
    _type_of_class: dict[type, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The runtime's own payloads, so every registry can read what a stream runner writes.
        self.add_message(envelope_pb2.CommandRejected)

    def add(self, schema: PayloadSchema) -> None:
        if schema.version < 1:
            raise ValueError(f"{schema.type}: schema versions start at 1")
        versions = self._versions.setdefault(schema.type, {})
        if schema.version in versions:
            raise ValueError(f"{schema.type} v{schema.version} is already registered")
        if schema.version > 1 and schema.upcast is None and schema.version - 1 in versions:
            raise ValueError(f"{schema.type} v{schema.version} needs an upcaster from v1")
        versions[schema.version] = schema
        if schema.python_type is not None and schema.version == max(versions):
            self._type_of_class[schema.python_type] = schema.type

    def add_message(
        self,
        message_class: type[Message],
        *,
        type: str | None = None,
        version: int = 1,
        upcast: Upcaster | None = None,
    ) -> None:
        """Register a protobuf message; ``type`` defaults to its full name (``arena.x.v1.Y``)."""
        name = type or message_class.DESCRIPTOR.full_name
        self.add(
            PayloadSchema(
                type=name,
                version=version,
                content_type=PROTOBUF,
                decode=message_class.FromString,
                encode=lambda payload: payload.SerializeToString(deterministic=True),
                upcast=upcast,
                python_type=message_class,
            )
        )

    def add_messages(self, message_classes: Iterable[type[Message]]) -> None:
        """Register version 1 of each protobuf message not registered yet.

        Idempotent, so every module of a proto file can register its payloads on import into any
        registry, whatever else was imported first.
        """
        for message_class in message_classes:
            if message_class.DESCRIPTOR.full_name not in self._versions:
                self.add_message(message_class)

    def add_json(self, type: str, *, version: int = 1, upcast: Upcaster | None = None) -> None:
        """Register a JSON payload type (any JSON value, written with sorted keys)."""
        self.add(PayloadSchema(type, version, JSON, _decode_json, _encode_json, upcast))

    def types(self) -> list[str]:
        return sorted(self._versions)

    def current(self, type: str) -> PayloadSchema:
        versions = self._versions.get(type)
        if not versions:
            raise UnknownType(f"unknown payload type {type!r}")
        return versions[max(versions)]

    def type_of(self, payload: Any) -> str:
        """The registered type of a protobuf payload (JSON payloads must name their type)."""
        name = self._type_of_class.get(payload.__class__)
        if name is None:
            raise UnknownType(f"no payload type registered for {payload.__class__.__name__}")
        return name

    def encode(self, type: str, payload: Any) -> tuple[bytes, int, str]:
        """Payload bytes at the current version: (bytes, schema_version, content_type)."""
        schema = self.current(type)
        if schema.python_type is not None and not isinstance(payload, schema.python_type):
            raise TypeError(f"{type} expects {schema.python_type.__name__}, got {payload!r}")
        return schema.encode(payload), schema.version, schema.content_type

    def decode(self, type: str, version: int, content_type: str, data: bytes) -> Any:
        """The payload upcast to the current version of its type."""
        versions = self._versions.get(type)
        if not versions:
            raise UnknownType(f"unknown payload type {type!r}")
        schema = versions.get(version)
        if schema is None:
            known = ", ".join(f"v{v}" for v in sorted(versions))
            raise UnsupportedSchemaVersion(f"{type} v{version} is not readable here ({known})")
        if content_type != schema.content_type:
            raise UndecodableRecord(
                f"{type} v{version} is {schema.content_type}, the record says {content_type!r}"
            )
        try:
            payload = schema.decode(data)
        except (DecodeError, UnicodeDecodeError, ValueError) as exc:
            raise UndecodableRecord(f"{type} v{version} payload: {exc}") from exc
        for target in range(version + 1, max(versions) + 1):
            step = versions.get(target)
            if step is None or step.upcast is None:
                raise UnsupportedSchemaVersion(f"{type}: no upcaster from v{target - 1}")
            try:
                payload = step.upcast(payload)
            except Exception as exc:
                raise UndecodableRecord(f"{type}: upcast to v{target} failed: {exc!r}") from exc
        return payload


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# Plain arithmetic: several times faster than Timestamp.FromDatetime / ToDatetime.
def _timestamp(moment: datetime) -> Timestamp:
    if moment.tzinfo is None:
        raise ValueError("envelope times must be timezone-aware")
    seconds, micros = divmod((moment - _EPOCH) // timedelta(microseconds=1), 1_000_000)
    return Timestamp(seconds=seconds, nanos=micros * 1000)


def _datetime(stamp: Timestamp) -> datetime:
    return _EPOCH + timedelta(seconds=stamp.seconds, microseconds=stamp.nanos // 1000)


def new_id() -> str:
    return new_uuid()


#: The envelope fields every event and command must carry (proto3 cannot say "required").
_EVENT_FIELDS = ("event_id", "stream", "type", "sequence", "schema_version")
_COMMAND_FIELDS = ("command_id", "stream", "type", "schema_version")

_EnvelopeMessage = envelope_pb2.Envelope | envelope_pb2.CommandEnvelope


class Codec:
    """Envelope <-> bytes (and log records) for one registry of payload schemas.

    Events and commands share every envelope field but their ids (and an event's sequence and
    batch), so both go through the same helpers below.
    """

    def __init__(self, schemas: Schemas) -> None:
        self.schemas = schemas

    # -- events ---------------------------------------------------------------------------

    def encode_event(self, event: Event) -> bytes:
        message = envelope_pb2.Envelope(
            event_id=event.event_id,
            sequence=event.sequence,
            batch_id=event.batch_id,
            batch_index=event.batch_index,
            **self._shared_fields(event),
        )
        return message.SerializeToString(deterministic=True)

    def decode_event(self, data: bytes) -> Event:
        message = envelope_pb2.Envelope()
        payload = self._parse(message, data, _EVENT_FIELDS, "event")
        return Event(
            event_id=message.event_id,
            sequence=message.sequence,
            payload=payload,
            batch_id=message.batch_id,
            batch_index=message.batch_index,
            **_decoded_fields(message),
        )

    def event_record(self, event: Event) -> OutgoingRecord:
        """The record to append: keyed by stream, with routing and trace headers."""
        return _record(self.encode_event(event), EVENT_CONTENT_TYPE, event)

    # -- commands -------------------------------------------------------------------------

    def encode_command(self, command: Command) -> bytes:
        message = envelope_pb2.CommandEnvelope(
            command_id=command.command_id, **self._shared_fields(command)
        )
        return message.SerializeToString(deterministic=True)

    def decode_command(self, data: bytes) -> Command:
        message = envelope_pb2.CommandEnvelope()
        payload = self._parse(message, data, _COMMAND_FIELDS, "command")
        return Command(command_id=message.command_id, payload=payload, **_decoded_fields(message))

    def command_record(self, command: Command) -> OutgoingRecord:
        """The record to send: keyed by stream, with routing and trace headers."""
        return _record(self.encode_command(command), COMMAND_CONTENT_TYPE, command)

    # -- shared by both -------------------------------------------------------------------

    def _shared_fields(self, item: Event | Command) -> dict[str, Any]:
        """The envelope fields events and commands have in common, payload encoded."""
        payload, version, content_type = self.schemas.encode(item.type, item.payload)
        return {
            "stream": item.stream,
            "type": item.type,
            "schema_version": version,
            "time": _timestamp(item.time),
            "causation_id": item.causation_id,
            "correlation_id": item.correlation_id,
            "trace": envelope_pb2.TraceContext(
                traceparent=item.traceparent, tracestate=item.tracestate
            ),
            "payload": payload,
            "payload_content_type": content_type,
        }

    def _parse(
        self, message: _EnvelopeMessage, data: bytes, required: tuple[str, ...], what: str
    ) -> Any:
        """Fill ``message`` from ``data``; returns its payload upcast to the current version."""
        try:
            message.ParseFromString(data)
        except (DecodeError, ValueError) as exc:
            raise UndecodableRecord(f"not an {message.DESCRIPTOR.full_name}: {exc}") from exc
        for name in required:
            if not getattr(message, name):
                raise UndecodableRecord(f"{what} without {name}")
        return self.schemas.decode(
            message.type, message.schema_version, message.payload_content_type, message.payload
        )


def _decoded_fields(message: _EnvelopeMessage) -> dict[str, Any]:
    """The fields of Event and Command read the same way from either envelope."""
    return {
        "stream": message.stream,
        "type": message.type,
        "time": _datetime(message.time),
        "causation_id": message.causation_id,
        "correlation_id": message.correlation_id,
        "traceparent": message.trace.traceparent,
        "tracestate": message.trace.tracestate,
        "schema_version": message.schema_version,
    }


def _record(value: bytes, content_type: str, item: Event | Command) -> OutgoingRecord:
    """Keyed by stream, so a stream's records share a partition; headers route without decoding."""
    headers = [(CONTENT_TYPE_HEADER, content_type.encode()), (TYPE_HEADER, item.type.encode())]
    if item.traceparent:
        headers.append((TRACEPARENT_HEADER, item.traceparent.encode()))
    if item.tracestate:
        headers.append((TRACESTATE_HEADER, item.tracestate.encode()))
    return OutgoingRecord(value=value, key=item.stream.encode(), headers=tuple(headers))


#: The process-wide registry; services add their payload types (``SCHEMAS.add_message(...)``).
SCHEMAS = Schemas()

#: Codec over SCHEMAS, used by default by the stream runner and the consumer loop.
CODEC = Codec(SCHEMAS)


def now() -> datetime:
    return datetime.now(UTC)


def new_command(
    stream: str,
    payload: Any,
    *,
    type: str | None = None,
    command_id: str | None = None,
    correlation_id: str = "",
    causation_id: str = "",
    schemas: Schemas = SCHEMAS,
    clock: Callable[[], datetime] = now,
) -> Command:
    """A command to send, carrying the current trace context (the caller's span).

    ``type`` defaults to the registered type of a protobuf payload; ``command_id`` to a new id
    (pass the client's own id so a retried request is the same command).
    """
    traceparent, tracestate = telemetry.current_trace()
    return Command(
        command_id=command_id or new_id(),
        stream=stream,
        type=type or schemas.type_of(payload),
        payload=payload,
        time=clock(),
        causation_id=causation_id,
        correlation_id=correlation_id,
        traceparent=traceparent,
        tracestate=tracestate,
    )
