"""Events as rows: the payload of every registered type as plain Python values, with privacy.

A :class:`Rows` compiles, once per protobuf message type, a function that turns a message into a
dict of plain values (enums by name, nested messages as dicts, ``google.protobuf.Any`` as the JSON
of the message inside, an unset optional field as None), leaving out the secret fields and
pseudonymising the identifiers on the way (:mod:`arena_runtime.privacy`): no pass over the result
afterwards. The same shapes give the Parquet columns' types (:meth:`Rows.arrow_schema`), so a row
and its table always agree.

Every reader here reads every era alike: the registry is the games' (``Registry.register_schemas``),
so records written before the game seam are read as what the services write since
(``GameEnded`` as ``MatchEnded``, and so on).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from arena_runtime import privacy
from arena_runtime.envelope import Codec, Event, Schemas
from google.protobuf import json_format, symbol_database
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

if TYPE_CHECKING:
    import pyarrow as pa

#: The envelope's columns, first in every row and table (the payload's fields follow).
ENVELOPE_COLUMNS = (
    "topic",
    "partition",
    "offset",
    "event_id",
    "stream",
    "sequence",
    "time",
    "schema_version",
    "causation_id",
    "correlation_id",
    "batch_id",
    "batch_index",
)
#: The game of events no game owns (accounts, a lobby's queue of no game).
NO_GAME = "none"
#: Nested messages deeper than this are kept as JSON text.
MAX_DEPTH = 6

_ANY = "google.protobuf.Any"
_TIMESTAMP = "google.protobuf.Timestamp"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def reading_schemas() -> Schemas:
    """Every payload Arena writes or wrote, read as the current code reads it."""
    from arena_games.registry import standard
    from arena_runtime.schemas import accounts, lobby, match, rating

    schemas = Schemas()
    for module in (match, lobby, rating, accounts):
        module.register(schemas)
    standard().register_schemas(schemas)
    return schemas


def _runtime_types() -> set[str]:
    from arena_runtime.schemas import accounts, lobby, match, rating

    schemas = Schemas()
    for module in (match, lobby, rating, accounts):
        module.register(schemas)
    return set(schemas.types())


def own_types(module: Any) -> set[str]:
    """Every payload type a game module registers beyond the runtime's own (its commands,
    timers, service commands, events and legacy types)."""
    schemas = Schemas()
    module.wire.register(schemas)
    return set(schemas.types()) - _runtime_types()


def game_of_types(schemas: Schemas) -> dict[str, str]:
    """Payload type -> the game whose module owns it (game-neutral types are not in it)."""
    from arena_games.registry import standard

    owned: dict[str, str] = {}
    for module in standard():
        wire = module.wire
        for message in (*wire.commands, *wire.timers, *wire.events, wire.settings):
            owned[message.DESCRIPTOR.full_name] = module.name
        for name in own_types(module):
            if schemas.reads_as(name) == name:  # a legacy type is read as a neutral one
                owned.setdefault(name, module.name)
    return {name: game for name, game in owned.items() if name in schemas.types()}


_SCALAR_ARROW = {
    FieldDescriptor.CPPTYPE_INT32: "int32",
    FieldDescriptor.CPPTYPE_INT64: "int64",
    FieldDescriptor.CPPTYPE_UINT32: "uint32",
    FieldDescriptor.CPPTYPE_UINT64: "uint64",
    FieldDescriptor.CPPTYPE_FLOAT: "float32",
    FieldDescriptor.CPPTYPE_DOUBLE: "float64",
    FieldDescriptor.CPPTYPE_BOOL: "bool_",
}


def _repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


class Rows:
    """Converters from payload messages to rows, and the Arrow types of those rows."""

    def __init__(self, schemas: Schemas, pseudonym: privacy.Pseudonymiser | None = None) -> None:
        self.schemas = schemas
        self.codec = Codec(schemas)
        self.pseudonym = pseudonym
        self._converters: dict[str, Callable[[Message], dict[str, Any]]] = {}
        self._names: dict[str, tuple[str, ...]] = {}
        self._any_fields: dict[str, tuple[str, ...]] = {}

    # -- which fields a row keeps ---------------------------------------------------------------

    def _kept(self, descriptor: Descriptor) -> list[FieldDescriptor]:
        hide = privacy.SECRET_FIELDS
        if self.pseudonym is not None:
            hide = hide | privacy.FREE_TEXT_FIELDS
        return [field for field in descriptor.fields if field.name not in hide]

    def _identifier(self, field: FieldDescriptor) -> bool:
        return (
            self.pseudonym is not None
            and field.name in privacy.IDENTIFIER_FIELDS
            and field.type == FieldDescriptor.TYPE_STRING
        )

    def _as_json(self, descriptor: Descriptor, depth: int) -> bool:
        return depth > MAX_DEPTH or not self._kept(descriptor)

    # -- rows ---------------------------------------------------------------------------------

    def converter(
        self, descriptor: Descriptor, depth: int = 0
    ) -> Callable[[Message], dict[str, Any]]:
        """The function message -> row dict of ``descriptor``, compiled once."""
        key = f"{descriptor.full_name}@{depth}"
        found = self._converters.get(key)
        if found is None:
            found = self._converters[key] = self._compile(descriptor, depth, as_tuple=False)
        return found

    def values(self, descriptor: Descriptor) -> Callable[[Message], tuple[Any, ...]]:
        """The function message -> its row's payload values, in :meth:`names` order (what the
        export's columns are built from: a tuple per row, transposed at once)."""
        key = f"{descriptor.full_name}@tuple"
        found = self._converters.get(key)
        if found is None:
            found = self._converters[key] = self._compile(descriptor, 0, as_tuple=True)
        return found  # type: ignore[return-value]

    def names(self, descriptor: Descriptor) -> tuple[str, ...]:
        """The payload columns of a message type, in order."""
        return tuple(field.name for field in self._kept(descriptor))

    def _compile(self, descriptor: Descriptor, depth: int, *, as_tuple: bool) -> Callable[..., Any]:
        # Generated source: a display of attribute reads, the fastest way CPython has.
        env: dict[str, Any] = {}
        items = []
        for index, field in enumerate(self._kept(descriptor)):
            read = f"m.{field.name}"
            convert = self._value_converter(field, depth)
            if convert is not None:
                env[f"c{index}"] = convert
                value = (
                    f"[c{index}(v) for v in {read}]" if _repeated(field) else f"c{index}({read})"
                )
            else:
                value = f"list({read})" if _repeated(field) else read
            if field.has_presence and not _repeated(field):
                value = f"({value} if m.HasField({field.name!r}) else None)"
            items.append(value if as_tuple else f"{field.name!r}: {value}")
        if as_tuple:
            body = "(" + "".join(f"{item}, " for item in items) + ")"
        else:
            body = "{" + ", ".join(items) + "}"
        source = f"def convert(m):\n    return {body}\n"
        exec(compile(source, f"<rows {descriptor.full_name}>", "exec"), env)
        function: Callable[..., Any] = env["convert"]
        return function

    def _value_converter(self, field: FieldDescriptor, depth: int) -> Callable[[Any], Any] | None:
        if field.message_type is not None:
            message = field.message_type
            if message.full_name == _ANY:
                return self._any_json
            if message.full_name == _TIMESTAMP:
                return _timestamp
            if message.GetOptions().map_entry:
                return None  # maps are not in Arena's payloads; kept as JSON below if they come
            if self._as_json(message, depth + 1):
                return self._message_json
            return self.converter(message, depth + 1)
        if field.enum_type is not None:
            names = {value.number: value.name for value in field.enum_type.values}
            return lambda number: names.get(number, str(number))
        if self._identifier(field):
            return self.pseudonym
        return None

    def _any_json(self, packed: Message) -> str | None:
        if not packed.ByteSize():
            return None
        return self._message_json(packed)

    def _message_json(self, message: Message) -> str:
        as_dict = json_format.MessageToDict(message, preserving_proto_field_name=True)
        return json.dumps(privacy.scrub(as_dict, self.pseudonym), sort_keys=True)

    def payload(self, type: str, payload: Any) -> dict[str, Any]:
        """A decoded payload as a row's payload fields."""
        if isinstance(payload, Message):
            descriptor: Descriptor = payload.DESCRIPTOR  # type: ignore[assignment]
            return self.converter(descriptor)(payload)
        if isinstance(payload, dict):
            return privacy.scrub(payload, self.pseudonym)
        return {"value": payload}

    def payload_values(self, payload: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """A decoded payload as (column names, values): a protobuf message's kept fields, or a
        JSON payload as the JSON text of its one column ``value``."""
        if isinstance(payload, Message):
            descriptor: Descriptor = payload.DESCRIPTOR  # type: ignore[assignment]
            names = self._names.get(descriptor.full_name)
            if names is None:
                names = self._names[descriptor.full_name] = self.names(descriptor)
            return names, self.values(descriptor)(payload)
        scrubbed = privacy.scrub(payload, self.pseudonym) if isinstance(payload, dict) else payload
        return ("value",), (json.dumps(scrubbed, sort_keys=True),)

    def embedded(self, payload: Any) -> list[tuple[Descriptor, tuple[str, ...], tuple[Any, ...]]]:
        """The messages a payload carries in its ``google.protobuf.Any`` fields (a match's final
        event in ``MatchEnded.detail``, its settings in ``MatchOpened.settings``), each as
        (its type, column names, values): a row of its own table, typed as any payload is. An
        inner type this process does not know is left out (its JSON stays in the field)."""
        if not isinstance(payload, Message):
            return []
        descriptor: Descriptor = payload.DESCRIPTOR  # type: ignore[assignment]
        fields = self._any_fields.get(descriptor.full_name)
        if fields is None:
            fields = self._any_fields[descriptor.full_name] = tuple(
                field.name
                for field in self._kept(descriptor)
                if field.message_type is not None
                and field.message_type.full_name == _ANY
                and not _repeated(field)
            )
        out = []
        for name in fields:
            packed = getattr(payload, name)
            if not packed.ByteSize():
                continue
            try:
                inner = symbol_database.Default().GetSymbol(packed.TypeName())()
            except KeyError:
                continue
            packed.Unpack(inner)
            inner_descriptor: Descriptor = inner.DESCRIPTOR  # type: ignore[assignment]
            names = self._names.get(inner_descriptor.full_name)
            if names is None:
                names = self._names[inner_descriptor.full_name] = self.names(inner_descriptor)
            out.append((inner_descriptor, names, self.values(inner_descriptor)(inner)))
        return out

    def envelope_values(
        self, topic: str, partition: int, offset: int, event: Event
    ) -> tuple[Any, ...]:
        """The envelope's columns of a row (:data:`ENVELOPE_COLUMNS` order)."""
        pseudonym = self.pseudonym
        stream, causation, correlation = event.stream, event.causation_id, event.correlation_id
        if pseudonym is not None:
            stream = pseudonym.stream(stream)
            causation, correlation = pseudonym(causation), pseudonym(correlation)
        return (
            topic,
            partition,
            offset,
            event.event_id,
            stream,
            event.sequence,
            event.time,
            event.schema_version,
            causation,
            correlation,
            event.batch_id,
            event.batch_index,
        )

    def envelope(self, topic: str, partition: int, offset: int, event: Event) -> dict[str, Any]:
        pseudonym = self.pseudonym
        stream, causation, correlation = event.stream, event.causation_id, event.correlation_id
        if pseudonym is not None:
            stream = pseudonym.stream(stream)
            causation, correlation = pseudonym(causation), pseudonym(correlation)
        return {
            "topic": topic,
            "partition": partition,
            "offset": offset,
            "event_id": event.event_id,
            "stream": stream,
            "sequence": event.sequence,
            "time": event.time,
            "schema_version": event.schema_version,
            "causation_id": causation,
            "correlation_id": correlation,
            "batch_id": event.batch_id,
            "batch_index": event.batch_index,
        }

    # -- Arrow ----------------------------------------------------------------------------------

    def arrow_schema(self, type: str) -> pa.Schema:
        """The table of one event type: the envelope's columns, then the payload's fields."""
        import pyarrow as pa

        schema = self.schemas.current(type)
        if schema.python_type is None:
            return pa.schema([*_envelope_fields(), pa.field("value", pa.string())])
        return self.arrow_schema_of(schema.python_type.DESCRIPTOR)  # type: ignore[attr-defined]

    def arrow_schema_of(self, descriptor: Descriptor) -> pa.Schema:
        """The table of a message type: the envelope's columns, then the message's fields."""
        import pyarrow as pa

        fields = _envelope_fields()
        type = descriptor.full_name
        taken = {field.name for field in fields}
        for field in self._arrow_fields(descriptor, 0):
            if field.name in taken:
                raise ValueError(f"{type}: payload field {field.name!r} shadows an envelope column")
            fields.append(field)
        return pa.schema(fields)

    def _arrow_fields(self, descriptor: Descriptor, depth: int) -> list[pa.Field]:
        import pyarrow as pa

        out = []
        for field in self._kept(descriptor):
            kind = self._arrow_type(field, depth)
            if _repeated(field):
                kind = pa.list_(kind)
            out.append(pa.field(field.name, kind))
        return out

    def _arrow_type(self, field: FieldDescriptor, depth: int) -> pa.DataType:
        import pyarrow as pa

        if field.message_type is not None:
            message = field.message_type
            if message.full_name == _TIMESTAMP:
                return pa.timestamp("us", tz="UTC")
            if (
                message.full_name == _ANY
                or message.GetOptions().map_entry
                or self._as_json(message, depth + 1)
            ):
                return pa.string()
            return pa.struct(self._arrow_fields(message, depth + 1))
        if field.enum_type is not None or field.type == FieldDescriptor.TYPE_STRING:
            return pa.string()
        if field.type == FieldDescriptor.TYPE_BYTES:
            return pa.binary()
        kind: pa.DataType = getattr(pa, _SCALAR_ARROW[field.cpp_type])()
        return kind


def _envelope_fields() -> list[pa.Field]:
    import pyarrow as pa

    return [
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("event_id", pa.string()),
        pa.field("stream", pa.string()),
        pa.field("sequence", pa.int64()),
        pa.field("time", pa.timestamp("us", tz="UTC")),
        pa.field("schema_version", pa.int32()),
        pa.field("causation_id", pa.string()),
        pa.field("correlation_id", pa.string()),
        pa.field("batch_id", pa.string()),
        pa.field("batch_index", pa.int32()),
    ]


def _timestamp(stamp: Message) -> datetime:
    from datetime import timedelta

    seconds: int = stamp.seconds  # type: ignore[attr-defined]
    nanos: int = stamp.nanos  # type: ignore[attr-defined]
    return _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)


def json_default(value: Any) -> Any:
    """JSON of what rows hold besides JSON's own types: times (RFC 3339) and bytes (base64)."""
    if isinstance(value, datetime):
        # Always to the microsecond: isoformat() drops a zero fraction, and "…:05Z" would then
        # sort after "…:05.250000Z" as text, which is how analysts compare these.
        return value.isoformat(timespec="microseconds").replace("+00:00", "Z")
    if isinstance(value, bytes):
        import base64

        return base64.b64encode(value).decode()
    raise TypeError(f"not JSON: {value!r}")


def json_line(row: dict[str, Any]) -> str:
    return json.dumps(row, default=json_default, ensure_ascii=False, separators=(",", ":"))


class GameOf:
    """The game an event belongs to: its type's game, or the ``game`` its payload (or its
    settings) names, or the one earlier events of its stream named; :data:`NO_GAME` else."""

    def __init__(self, schemas: Schemas, known: dict[str, str] | None = None) -> None:
        self.by_type = game_of_types(schemas)
        #: stream -> game, as far as the events read so far tell (kept in an export's state).
        self.streams: dict[str, str] = known if known is not None else {}

    def __call__(self, stream: str, type: str, payload: Any) -> str:
        game = self.by_type.get(type) or _named_game(payload)
        if game:
            self.streams[stream] = game
            return game
        return self.streams.get(stream, NO_GAME)


def _named_game(payload: Any) -> str:
    if not isinstance(payload, Message):
        return ""
    fields = payload.DESCRIPTOR.fields_by_name
    if "game" in fields and fields["game"].type == FieldDescriptor.TYPE_STRING:
        return str(payload.game)  # type: ignore[attr-defined]
    if "settings" in fields and fields["settings"].message_type is not None:
        settings = payload.settings  # type: ignore[attr-defined]
        inner = settings.DESCRIPTOR.fields_by_name.get("game")
        if inner is not None and inner.type == FieldDescriptor.TYPE_STRING:
            return str(settings.game)
    return ""
