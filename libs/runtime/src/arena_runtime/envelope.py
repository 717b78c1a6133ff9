"""Encode and decode the envelope of every record (proto/arena/v1/envelope.proto).

A record's value is an ``arena.v1.Envelope`` (events) or ``arena.v1.CommandEnvelope``
(commands) whose payload is opaque bytes named by ``type`` and ``schema_version``. A
:class:`Schemas` registry knows, per type, how to decode every version still found in the log
and how to upcast each one to the next, so a reader always gets the current shape of a payload
and old events are never rewritten (architecture rule 6). A legacy type may also be read as
another type altogether (:meth:`Schemas.add_legacy` with ``into``): the decoded event or command
then carries the new type, as if it had been written so.

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
from operator import attrgetter
from typing import Any, ClassVar

from google.protobuf.message import DecodeError, Message
from google.protobuf.timestamp_pb2 import Timestamp

from arena_runtime import telemetry
from arena_runtime.entropy import new_uuid
from arena_runtime.eventlog.base import OutgoingRecord, Record
from arena_runtime.proto_gen.arena.v1 import envelope_pb2

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

#: Record headers written beside the envelope, so tools can route and trace without decoding.
CONTENT_TYPE_HEADER = "content-type"
TYPE_HEADER = "arena-type"
TRACEPARENT_HEADER = telemetry.TRACEPARENT
TRACESTATE_HEADER = telemetry.TRACESTATE
EVENT_CONTENT_TYPE = f"{PROTOBUF}; messageType=arena.v1.Envelope"

#: CloudEvents 1.0 attributes, Kafka protocol binding, binary content mode: the record's value
#: is the event data (the envelope, ``content-type`` its datacontenttype) and each attribute is a
#: ``ce_`` header, so generic CloudEvents tools can route, dedupe and order Arena's records
#: without decoding them. Readers never need them (records written before them lack them).
CE_SPECVERSION_HEADER = "ce_specversion"
CE_ID_HEADER = "ce_id"
CE_SOURCE_HEADER = "ce_source"
CE_TYPE_HEADER = "ce_type"
CE_TIME_HEADER = "ce_time"
#: The Partitioning extension: the stream (equal to the record key).
CE_PARTITIONKEY_HEADER = "ce_partitionkey"
#: The Sequence extension: the event's sequence in its stream, as 20 zero-padded digits so that
#: the string order is the number order (events only).
CE_SEQUENCE_HEADER = "ce_sequence"
#: Events only: ``<batch_index>:<batch_id>``, so that with ``ce_sequence`` a reader can follow a
#: stream by the reading rule (:func:`~arena_runtime.streams.is_next`) without decoding events
#: it does nothing with (:func:`place_of`). Records written before it lack it.
BATCH_HEADER = "arena-batch"
CE_SPECVERSION = "1.0"
#: ``ce_source`` is this prefix and the stream: an id is unique within its stream's source.
CE_SOURCE_PREFIX = "/arena/streams/"
CE_SEQUENCE_DIGITS = 20
COMMAND_CONTENT_TYPE = f"{PROTOBUF}; messageType=arena.v1.CommandEnvelope"

Upcaster = Callable[[Any], Any]
#: An upcaster registered beside a type's own versions: it gets the payload and its record's
#: stream (a cross-type upcaster may need what only the envelope says, e.g. the match id).
LegacyUpcaster = Callable[[Any, str], Any]


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
    #: The type the record was written as, when it is read as another (a legacy type upcast
    #: ``into`` a newer one, :meth:`Schemas.add_legacy`); "" when it is read as written.
    written_type: str = ""


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


@dataclass(frozen=True, slots=True)
class _Legacy:
    """How an old version of a type becomes the next version, or another type's current one."""

    into: str
    upcast: LegacyUpcaster


@dataclass
class Schemas:
    """Registry of payload types and their versions."""

    _versions: dict[str, dict[int, PayloadSchema]] = field(default_factory=dict)
    _type_of_class: dict[type, str] = field(default_factory=dict)
    #: (type, version) -> its legacy upcaster, registered by another party than the type's owner.
    _legacy: dict[tuple[str, int], _Legacy] = field(default_factory=dict)
    #: Bumped at every registration, so that what is derived from the registry is made again.
    generation: int = 0
    #: The generation it was made at, and type -> the version written now (:meth:`current`).
    _current_of: tuple[int, dict[str, PayloadSchema]] = field(
        default=(-1, {}), repr=False, compare=False
    )
    #: (type, version) of each type's latest version when it is read as written, no upcaster
    #: on the way: what :meth:`read` returns as soon as it is decoded.
    _as_written: set[tuple[str, int]] = field(default_factory=set, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The runtime's own payloads, so every registry can read what a stream runner writes.
        self.add_message(envelope_pb2.CommandRejected)

    def add(self, schema: PayloadSchema) -> None:
        if schema.version < 1:
            raise ValueError(f"{schema.type}: schema versions start at 1")
        versions = self._versions.setdefault(schema.type, {})
        if schema.version in versions:
            raise ValueError(f"{schema.type} v{schema.version} is already registered")
        if (
            schema.version > 1
            and schema.upcast is None
            and schema.version - 1 in versions
            and (schema.type, schema.version - 1) not in self._legacy
        ):
            raise ValueError(f"{schema.type} v{schema.version} needs an upcaster from v1")
        versions[schema.version] = schema
        self._registered(schema.type)
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

    def add_legacy(
        self,
        message_class: type[Message],
        *,
        version: int,
        upcast: LegacyUpcaster,
        type: str | None = None,
        into: str | None = None,
    ) -> None:
        """Read ``version`` of a protobuf type written before its current shape.

        Without ``into``, ``upcast(payload, stream)`` turns it into the next version of the same
        type (which is registered, or will be, by the type's owner: the lobby's settings were a
        game's until the game seam, so the game upcasts them). With ``into``, a record of this
        type and version is read as a payload of type ``into`` at its current version, and the
        decoded event or command says ``into``: a legacy type that the new code no longer
        writes. Either way the log is not rewritten; ``schema_version`` says what was written.
        """
        name = type or message_class.DESCRIPTOR.full_name
        key = (name, version)
        if key in self._legacy:
            raise ValueError(f"{name} v{version} already has a legacy upcaster")
        versions = self._versions.setdefault(name, {})
        if version not in versions:
            versions[version] = PayloadSchema(
                type=name,
                version=version,
                content_type=PROTOBUF,
                decode=message_class.FromString,
                encode=_not_written(name, version),
            )
        self._legacy[key] = _Legacy(into or name, upcast)
        self._registered(name)

    def _registered(self, type: str) -> None:
        """After every registration of ``type``."""
        self.generation += 1
        versions = self._versions[type]
        self._as_written -= {(type, version) for version in versions}
        latest = max(versions)
        if (type, latest) not in self._legacy:
            self._as_written.add((type, latest))

    def add_json(self, type: str, *, version: int = 1, upcast: Upcaster | None = None) -> None:
        """Register a JSON payload type (any JSON value, written with sorted keys)."""
        self.add(PayloadSchema(type, version, JSON, _decode_json, _encode_json, upcast))

    def has(self, type: str, version: int) -> bool:
        """Whether ``version`` of ``type`` is readable here."""
        return version in self._versions.get(type, {})

    def types(self) -> list[str]:
        """Every type this registry writes or reads (legacy types read as another included)."""
        return sorted(self._versions)

    def reads_as(self, type: str) -> str:
        """The type a record of ``type`` is read as: itself, or for a legacy type that is only
        read as another, that one (the catalogue of topics lists both)."""
        if self._read_as_other(type):
            return next(
                legacy.into
                for (name, _), legacy in sorted(self._legacy.items())
                if name == type and legacy.into != type
            )
        return type

    def read_as(self, type: str) -> frozenset[str]:
        """Every type a record of ``type`` may be read as, whatever its version (itself, or
        what a legacy version is read as); empty for a type not readable here."""
        return frozenset(
            legacy.into if (legacy := self._legacy.get((type, version))) is not None else type
            for version in self._versions.get(type, {})
        )

    def type_of_class(self, payload_class: builtins.type) -> str | None:
        """The registered type of a protobuf payload class (None if it has none here)."""
        return self._type_of_class.get(payload_class)

    def versions(self, type: str) -> tuple[int, ...]:
        """The schema versions of ``type`` readable here, oldest first."""
        return tuple(sorted(self._versions.get(type, {})))

    def current(self, type: str) -> PayloadSchema:
        """The version of ``type`` written now (kept per type: every encode asks)."""
        if self._current_of[0] != self.generation:
            self._current_of = (self.generation, {})
        schema = self._current_of[1].get(type)
        if schema is None:
            versions = self._versions.get(type)
            if not versions or self._read_as_other(type):
                raise UnknownType(f"unknown payload type {type!r}")
            schema = self._current_of[1][type] = versions[max(versions)]
        return schema

    def _read_as_other(self, type: str) -> bool:
        """True for a type that is only read, as another type (never written any more)."""
        versions = self._versions.get(type, {})
        return bool(versions) and all(
            (legacy := self._legacy.get((type, v))) is not None and legacy.into != type
            for v in versions
        )

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
        """The payload upcast to the current version of its type (or the type it is read as)."""
        return self.read(type, version, content_type, data)[1]

    def read(
        self, type: str, version: int, content_type: str, data: bytes, stream: str = ""
    ) -> tuple[str, Any]:
        """(type, payload): the payload upcast to the current version of its type, or, for a
        legacy type read as another, that type and its payload."""
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
        if (type, version) in self._as_written:  # the usual record: nothing to upcast
            return type, payload
        legacy = self._legacy.get((type, version))
        if legacy is not None and legacy.into != type:
            if legacy.into not in self._versions:
                raise UnknownType(f"{type} v{version} reads as {legacy.into}, not registered")
            try:
                return legacy.into, legacy.upcast(payload, stream)
            except Exception as exc:
                raise UndecodableRecord(f"{type}: upcast to {legacy.into} failed: {exc!r}") from exc
        for target in range(version + 1, max(versions) + 1):
            step = versions.get(target)
            legacy = self._legacy.get((type, target - 1))
            try:
                if legacy is not None:
                    payload = legacy.upcast(payload, stream)
                elif step is not None and step.upcast is not None:
                    payload = step.upcast(payload)
                else:
                    raise UnsupportedSchemaVersion(f"{type}: no upcaster from v{target - 1}")
            except UnsupportedSchemaVersion:
                raise
            except Exception as exc:
                raise UndecodableRecord(f"{type}: upcast to v{target} failed: {exc!r}") from exc
        return type, payload


#: Header values a TypeFilter remembers its answer for (a few dozen types are written).
_TYPES_KEPT = 1024


class TypeFilter:
    """Which records a reader may leave unread, told from their ``ce_type`` header alone: those
    whose type the registry reads only as types the reader does nothing with.

    Called with a record, True means skip it: decoding it would only have produced a payload the
    reader passes over. A record without the header (written before it), or of a type the
    registry does not know (which decoding reports as malformed), is never skipped, and neither
    is one whose type may be read, in some version, as a wanted type (a legacy type read as one).
    A skipped record is not decoded, so a corrupt one of an unwanted type goes unnoticed by this
    reader (its other readers still decode it).
    """

    __slots__ = ("_generation", "_schemas", "_skips", "_wanted")

    def __init__(self, schemas: Schemas, wanted: Iterable[str]) -> None:
        self._schemas = schemas
        self._wanted = frozenset(wanted)
        #: The header's bytes -> whether to skip a record carrying them (made as met).
        self._skips: dict[bytes, bool] = {}
        self._generation = schemas.generation

    @classmethod
    def for_payloads(cls, schemas: Schemas, payload_classes: Iterable[builtins.type]) -> TypeFilter:
        """A filter keeping the records read as payloads of these classes (a reader's
        ``isinstance`` checks); a class not registered here is never read, so it adds nothing."""
        types = (schemas.type_of_class(c) for c in payload_classes)
        return cls(schemas, (t for t in types if t is not None))

    def __call__(self, record: Record) -> bool:
        for name, value in record.headers:
            if name == CE_TYPE_HEADER:
                if self._generation != self._schemas.generation:
                    self._skips.clear()  # registered since: what is read as what may have changed
                    self._generation = self._schemas.generation
                skip = self._skips.get(value)
                if skip is None:
                    read_as = self._schemas.read_as(value.decode("utf-8", "replace"))
                    skip = bool(read_as) and read_as.isdisjoint(self._wanted)
                    if len(self._skips) >= _TYPES_KEPT:
                        self._skips.clear()
                    self._skips[value] = skip
                return skip
        return False


def place_of(record: Record) -> tuple[int, int, str] | None:
    """An event record's (sequence, batch_index, batch_id) from its ``ce_sequence`` and
    ``arena-batch`` headers, what :func:`~arena_runtime.streams.is_next` reads; None if it lacks
    either (written before them: decode it) or they do not read as numbers."""
    sequence = batch = None
    for name, value in record.headers:
        if name == CE_SEQUENCE_HEADER:
            sequence = value
        elif name == BATCH_HEADER:
            batch = value
    if sequence is None or batch is None:
        return None
    index, _, batch_id = batch.partition(b":")
    try:
        return int(sequence), int(index), batch_id.decode()
    except ValueError:
        return None


def _not_written(type: str, version: int) -> Callable[[Any], bytes]:
    def refuse(payload: Any) -> bytes:
        raise TypeError(f"{type} v{version} is only read, never written")

    return refuse


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
#: Each of those field lists read at once (one C call, not a getattr a field).
_FIELDS_OF: dict[tuple[str, ...], attrgetter[Any]] = {
    fields: attrgetter(*fields) for fields in (_EVENT_FIELDS, _COMMAND_FIELDS)
}

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
        type_, payload = self._parse(message, data, _EVENT_FIELDS, "event")
        return Event(
            event_id=message.event_id,
            sequence=message.sequence,
            type=type_,
            payload=payload,
            batch_id=message.batch_id,
            batch_index=message.batch_index,
            written_type=message.type if message.type != type_ else "",
            **_decoded_fields(message),
        )

    def event_record(self, event: Event) -> OutgoingRecord:
        """The record to append: keyed by stream, with routing and trace headers."""
        return _record(self.encode_event(event), _EVENT_CONTENT_TYPE, event)

    # -- commands -------------------------------------------------------------------------

    def encode_command(self, command: Command) -> bytes:
        message = envelope_pb2.CommandEnvelope(
            command_id=command.command_id, **self._shared_fields(command)
        )
        return message.SerializeToString(deterministic=True)

    def decode_command(self, data: bytes) -> Command:
        message = envelope_pb2.CommandEnvelope()
        type_, payload = self._parse(message, data, _COMMAND_FIELDS, "command")
        return Command(
            command_id=message.command_id, type=type_, payload=payload, **_decoded_fields(message)
        )

    def command_record(self, command: Command) -> OutgoingRecord:
        """The record to send: keyed by stream, with routing and trace headers."""
        return _record(self.encode_command(command), _COMMAND_CONTENT_TYPE, command)

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
    ) -> tuple[str, Any]:
        """Fill ``message`` from ``data``; returns its (type, payload) upcast to the current
        version, or to the type a legacy type is read as."""
        try:
            message.ParseFromString(data)
        except (DecodeError, ValueError) as exc:
            raise UndecodableRecord(f"not an {message.DESCRIPTOR.full_name}: {exc}") from exc
        if not all(_FIELDS_OF[required](message)):
            for name in required:
                if not getattr(message, name):
                    raise UndecodableRecord(f"{what} without {name}")
        return self.schemas.read(
            message.type,
            message.schema_version,
            message.payload_content_type,
            message.payload,
            message.stream,
        )


def _decoded_fields(message: _EnvelopeMessage) -> dict[str, Any]:
    """The fields of Event and Command read the same way from either envelope."""
    return {
        "stream": message.stream,
        "time": _datetime(message.time),
        "causation_id": message.causation_id,
        "correlation_id": message.correlation_id,
        "traceparent": message.trace.traceparent,
        "tracestate": message.trace.tracestate,
        "schema_version": message.schema_version,
    }


def ce_time(moment: datetime) -> str:
    """An RFC 3339 time in UTC to the microsecond, as ``ce_time`` carries it."""
    # isoformat is several times faster than strftime, to the same text.
    if moment.tzinfo is UTC:  # the clock's own times: "+00:00" already, one call
        return moment.isoformat(timespec="microseconds")[:-6] + "Z"
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


#: The constant header values, as bytes once.
_EVENT_CONTENT_TYPE = EVENT_CONTENT_TYPE.encode()
_COMMAND_CONTENT_TYPE = COMMAND_CONTENT_TYPE.encode()
_CE_SPECVERSION = CE_SPECVERSION.encode()
_CE_SOURCE_PREFIX = CE_SOURCE_PREFIX.encode()


def _record(value: bytes, content_type: bytes, item: Event | Command) -> OutgoingRecord:
    """Keyed by stream, so a stream's records share a partition; headers route without decoding
    (Arena's own, then the CloudEvents binary-mode attributes)."""
    stream = item.stream.encode()
    type_ = item.type.encode()
    if isinstance(item, Event):
        item_id = item.event_id
        sequence: bytes | None = f"{item.sequence:0{CE_SEQUENCE_DIGITS}d}".encode()
        batch = f"{item.batch_index}:{item.batch_id}".encode()
    else:
        item_id, sequence = item.command_id, None
    headers = [
        (CONTENT_TYPE_HEADER, content_type),
        (TYPE_HEADER, type_),
        (CE_SPECVERSION_HEADER, _CE_SPECVERSION),
        (CE_ID_HEADER, item_id.encode()),
        (CE_SOURCE_HEADER, _CE_SOURCE_PREFIX + stream),
        (CE_TYPE_HEADER, type_),
        (CE_TIME_HEADER, ce_time(item.time).encode()),
        (CE_PARTITIONKEY_HEADER, stream),
    ]
    if sequence is not None:
        headers.append((CE_SEQUENCE_HEADER, sequence))
        headers.append((BATCH_HEADER, batch))
    if item.traceparent:
        headers.append((TRACEPARENT_HEADER, item.traceparent.encode()))
    if item.tracestate:
        headers.append((TRACESTATE_HEADER, item.tracestate.encode()))
    return OutgoingRecord(value=value, key=stream, headers=tuple(headers))


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
