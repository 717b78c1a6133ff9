"""The catalogue of Arena's Kafka channels, an AsyncAPI 3 document made from the code's registry.

Which payloads go on which topic is what each schema module declares (``COMMANDS`` and ``EVENTS``
of ``arena_runtime.schemas.*``; each game's ``wire.events`` on the match events, everything else
its ``wire.register`` registers, commands, timers and other services' commands, on the match
commands);
a legacy type (written before the game seam, read as another) goes where the type it is read as
goes; ``arena.v1.CommandRejected`` is on every event topic. A registered type that lands on no
topic is an error here, so the document cannot leave one out. ``docs/asyncapi-events.yaml`` is
this document; the suite checks it is current and that every message the real services produce
is in it (tests/analytics/test_catalogue.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena_runtime import topics
from arena_runtime.envelope import (
    BATCH_HEADER,
    CE_SEQUENCE_DIGITS,
    CE_SOURCE_PREFIX,
    CE_SPECVERSION,
    COMMAND_CONTENT_TYPE,
    EVENT_CONTENT_TYPE,
    Schemas,
)
from arena_runtime.proto_gen.arena.v1 import envelope_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from arena_cli.analytics.convert import game_of_types, own_types, reading_schemas

DOCUMENT = "docs/asyncapi-events.yaml"
REJECTED = envelope_pb2.CommandRejected.DESCRIPTOR.full_name

#: The services' topics, in the order the document lists them: (topic, service, kind).
TOPICS = (
    (topics.MATCH_COMMANDS, "match", "commands"),
    (topics.MATCH_EVENTS, "match", "events"),
    (topics.MATCHMAKING_COMMANDS, "matchmaking", "commands"),
    (topics.MATCHMAKING_EVENTS, "matchmaking", "events"),
    (topics.RATING_COMMANDS, "rating", "commands"),
    (topics.RATING_EVENTS, "rating", "events"),
    (topics.ACCOUNTS_COMMANDS, "accounts", "commands"),
    (topics.ACCOUNTS_EVENTS, "accounts", "events"),
    (topics.MATCH_VIEWS, "match", "views"),
)
#: A views topic's records are this message itself, not an envelope (proto/arena/v1/views.proto).
VIEW_BATCH = "arena.v1.ViewBatch"
VIEWS_CONTENT_TYPE = f"application/x-protobuf; messageType={VIEW_BATCH}"


@dataclass
class Channel:
    topic: str
    service: str
    kind: str
    #: Payload types on this topic.
    types: set[str] = field(default_factory=set)


def _names(messages: tuple[type[Message], ...] | list[type[Message]]) -> set[str]:
    return {message.DESCRIPTOR.full_name for message in messages}


def channels(schemas: Schemas | None = None) -> list[Channel]:
    """Every topic and the payload types on it, from the registry."""
    from arena_games.registry import standard
    from arena_runtime.schemas import accounts, lobby, match, rating

    schemas = schemas or reading_schemas()
    by_topic = {topic: Channel(topic, service, kind) for topic, service, kind in TOPICS}
    for module, commands, events in (
        (match, topics.MATCH_COMMANDS, topics.MATCH_EVENTS),
        (lobby, topics.MATCHMAKING_COMMANDS, topics.MATCHMAKING_EVENTS),
        (rating, topics.RATING_COMMANDS, topics.RATING_EVENTS),
        (accounts, topics.ACCOUNTS_COMMANDS, topics.ACCOUNTS_EVENTS),
    ):
        by_topic[commands].types |= _names(module.COMMANDS)
        by_topic[events].types |= _names(module.EVENTS)
    for game in standard():
        wire = game.wire
        game_events = _names([*wire.events])
        by_topic[topics.MATCH_EVENTS].types |= game_events
        # Everything else a game registers is a command to its matches (a seat's, a timer's,
        # another service's), but a legacy type, which goes where the type it is read as goes.
        by_topic[topics.MATCH_COMMANDS].types |= {
            name for name in own_types(game) - game_events if schemas.reads_as(name) == name
        } | _names([*wire.commands, *wire.timers])
    for channel in by_topic.values():
        channel.types &= set(schemas.types())
        if channel.kind == "events":
            channel.types.add(REJECTED)
    by_topic[topics.MATCH_VIEWS].types = {VIEW_BATCH}
    placed = set().union(
        *(channel.types for channel in by_topic.values() if channel.kind != "views")
    )
    for type_ in schemas.types():
        if type_ in placed:
            continue
        into = schemas.reads_as(type_)
        homes = [channel for channel in by_topic.values() if into in channel.types]
        if not homes:
            raise LookupError(f"{type_} is registered but on no topic: name its topic")
        for channel in homes:
            channel.types.add(type_)
    return list(by_topic.values())


# -- the document ----------------------------------------------------------------------------

_SCALARS = {
    FieldDescriptor.CPPTYPE_INT32: ("integer", "int32"),
    FieldDescriptor.CPPTYPE_INT64: ("integer", "int64"),
    FieldDescriptor.CPPTYPE_UINT32: ("integer", "uint32"),
    FieldDescriptor.CPPTYPE_UINT64: ("integer", "uint64"),
    FieldDescriptor.CPPTYPE_FLOAT: ("number", "float"),
    FieldDescriptor.CPPTYPE_DOUBLE: ("number", "double"),
    FieldDescriptor.CPPTYPE_BOOL: ("boolean", ""),
}


def _field_schema(field: FieldDescriptor, seen: tuple[str, ...]) -> dict[str, Any]:
    schema: dict[str, Any]
    if field.message_type is not None:
        message = field.message_type
        if message.full_name == "google.protobuf.Any":
            schema = {
                "type": "object",
                "description": "google.protobuf.Any: a message named by its type URL",
                "x-protobuf-type": message.full_name,
            }
        elif message.full_name in seen:
            schema = {"type": "object", "x-protobuf-type": message.full_name}
        else:
            schema = _message_schema(message, (*seen, message.full_name))
    elif field.enum_type is not None:
        schema = {"type": "string", "enum": [value.name for value in field.enum_type.values]}
    elif field.type == FieldDescriptor.TYPE_STRING:
        schema = {"type": "string"}
    elif field.type == FieldDescriptor.TYPE_BYTES:
        schema = {"type": "string", "contentEncoding": "base64"}
    else:
        kind, fmt = _SCALARS[field.cpp_type]
        schema = {"type": kind, **({"format": fmt} if fmt else {})}
    schema["x-protobuf-field"] = field.number
    if field.is_repeated:
        return {"type": "array", "items": schema}
    if field.has_presence and field.message_type is None:
        schema["x-optional"] = True
    return schema


def _message_schema(descriptor: Descriptor, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "x-protobuf-type": descriptor.full_name,
        "properties": {
            field.name: _field_schema(field, seen or (descriptor.full_name,))
            for field in descriptor.fields
        },
    }


def _view_headers() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "Kafka record headers.",
        "properties": {"arena-type": {"type": "string", "const": VIEW_BATCH}},
        "required": ["arena-type"],
    }


def _view_channel(key: str, channel: Channel, pool: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The views topic: records of the moment (each a ViewBatch, no envelope), kept a day."""
    descriptor = pool.FindMessageTypeByName(VIEW_BATCH)
    message = {
        "name": VIEW_BATCH,
        "title": descriptor.name,
        "contentType": VIEWS_CONTENT_TYPE,
        "headers": {"$ref": "#/components/schemas/viewsHeaders"},
        "payload": _message_schema(descriptor),
        "bindings": {"kafka": {"key": {"type": "string", "description": "stream id"}}},
        "x-protobuf": {"message": VIEW_BATCH, "file": f"proto/{descriptor.file.name}"},
    }
    doc_channel = {
        "address": channel.topic,
        "title": "match views",
        "description": (
            "What each viewer of a match is shown, made by the match service after each append "
            "and relayed by the gateway (docs/games.md). Key: the stream id; value: one "
            "arena.v1.ViewBatch (no envelope). Transient: a lost batch is redrawn from a "
            "snapshot (docs/events.md)."
        ),
        "messages": {VIEW_BATCH: {"$ref": f"#/components/messages/views.{VIEW_BATCH}"}},
        "bindings": {
            "kafka": {
                "topic": channel.topic,
                "x-partitions": "ARENA_PARTITIONS (default 8); murmur2(key) mod partitions",
                "topicConfiguration": {
                    "cleanup.policy": ["delete"],
                    "retention.ms": topics.VIEWS_RETENTION_MS,
                },
            }
        },
        "x-arena-service": channel.service,
    }
    return message, doc_channel


def _headers(kind: str) -> dict[str, Any]:
    content_type = EVENT_CONTENT_TYPE if kind == "events" else COMMAND_CONTENT_TYPE
    properties: dict[str, Any] = {
        "content-type": {"type": "string", "const": content_type},
        "arena-type": {"type": "string", "description": "the payload type"},
        "traceparent": {"type": "string", "description": "W3C trace context of the write"},
        "tracestate": {"type": "string", "description": "W3C trace state"},
        "ce_specversion": {"type": "string", "const": CE_SPECVERSION},
        "ce_id": {
            "type": "string",
            "description": "the envelope's event_id" if kind == "events" else "its command_id",
        },
        "ce_source": {"type": "string", "description": f"{CE_SOURCE_PREFIX}<stream>"},
        "ce_type": {"type": "string", "description": "the payload type, as arena-type"},
        "ce_time": {"type": "string", "format": "date-time"},
        "ce_partitionkey": {"type": "string", "description": "the stream (the record key)"},
    }
    if kind == "events":
        properties["ce_sequence"] = {
            "type": "string",
            "pattern": f"^[0-9]{{{CE_SEQUENCE_DIGITS}}}$",
            "description": "the event's sequence in its stream, zero-padded",
        }
        properties[BATCH_HEADER] = {
            "type": "string",
            "pattern": "^[0-9]+:",
            "description": "<batch_index>:<batch_id>, the envelope's (the reading rule's place "
            "of the event, with ce_sequence); records written before it lack it",
        }
    return {
        "type": "object",
        "description": "Kafka record headers (CloudEvents Kafka binding, binary mode). Records "
        "written before the ce_ headers lack them.",
        "properties": properties,
        "required": ["content-type", "arena-type"],
    }


def document(schemas: Schemas | None = None) -> dict[str, Any]:
    """The AsyncAPI 3.0 document of every Kafka channel."""
    from google.protobuf import symbol_database

    schemas = schemas or reading_schemas()
    pool = symbol_database.Default().pool  # type: ignore[attr-defined]
    games = game_of_types(schemas)
    listed = channels(schemas)
    messages: dict[str, Any] = {}
    doc_channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    for channel in listed:
        key = channel.topic
        if channel.kind == "views":
            messages[f"views.{VIEW_BATCH}"], doc_channels[key] = _view_channel(key, channel, pool)
            operations[f"consume-{key}"] = {
                "action": "receive",
                "channel": {"$ref": f"#/channels/{key}"},
                "messages": [{"$ref": f"#/channels/{key}/messages/{VIEW_BATCH}"}],
            }
            continue
        refs = {}
        for type_ in sorted(channel.types):
            message_key = f"{channel.kind}.{type_}"
            refs[type_] = {"$ref": f"#/components/messages/{message_key}"}
            descriptor = pool.FindMessageTypeByName(type_)
            entry: dict[str, Any] = {
                "name": type_,
                "title": descriptor.name,
                "contentType": (
                    EVENT_CONTENT_TYPE if channel.kind == "events" else COMMAND_CONTENT_TYPE
                ),
                "headers": {"$ref": f"#/components/schemas/{channel.kind}Headers"},
                "payload": _message_schema(descriptor),
                "bindings": {"kafka": {"key": {"type": "string", "description": "stream id"}}},
                "x-protobuf": {
                    "message": type_,
                    "file": f"proto/{descriptor.file.name}",
                    "schemaVersions": list(schemas.versions(type_)),
                },
            }
            into = schemas.reads_as(type_)
            if into != type_:
                entry["x-arena-read-as"] = into
            if type_ in games:
                entry["x-arena-game"] = games[type_]
            messages[message_key] = entry
        doc_channels[key] = {
            "address": channel.topic,
            "title": f"{channel.service} {channel.kind}",
            "description": (
                f"{'Events of' if channel.kind == 'events' else 'Commands to'} the "
                f"{channel.service} service. Key: the stream id (UTF-8); every record of one "
                "stream is on one partition, in order. Value: one arena.v1."
                f"{'Envelope' if channel.kind == 'events' else 'CommandEnvelope'} whose payload "
                "is the message named by its type (docs/events.md)."
            ),
            "messages": refs,
            "bindings": {
                "kafka": {
                    "topic": channel.topic,
                    "x-partitions": "ARENA_PARTITIONS (default 8); murmur2(key) mod partitions",
                    "topicConfiguration": {"cleanup.policy": ["delete"], "retention.ms": -1},
                }
            },
            "x-arena-service": channel.service,
        }
        operations[f"{'consume' if channel.kind == 'events' else 'send'}-{key}"] = {
            "action": "receive" if channel.kind == "events" else "send",
            "channel": {"$ref": f"#/channels/{key}"},
            "messages": [
                {"$ref": f"#/channels/{key}/messages/{type_}"} for type_ in sorted(channel.types)
            ],
        }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Arena event log",
            "version": "1.0.0",
            "description": "Arena's Kafka topics, generated by `arena events catalogue` from the "
            "code's registry (do not edit; the suite checks it). Topic names get "
            "ARENA_TOPIC_PREFIX in front. The WebSocket protocol is docs/asyncapi.yaml.",
        },
        "defaultContentType": EVENT_CONTENT_TYPE,
        "channels": doc_channels,
        "operations": operations,
        "components": {
            "schemas": {
                "eventsHeaders": _headers("events"),
                "commandsHeaders": _headers("commands"),
                "viewsHeaders": _view_headers(),
            },
            "messages": messages,
        },
    }


def render(schemas: Schemas | None = None) -> str:
    """The document as YAML, in a stable order (the file under docs/)."""
    import yaml

    return yaml.safe_dump(document(schemas), sort_keys=False, allow_unicode=True, width=100)


def types_by_topic(text: str) -> dict[str, set[str]]:
    """Topic -> payload types, read back from a rendered document."""
    import yaml

    parsed = yaml.safe_load(text)
    return {channel["address"]: set(channel["messages"]) for channel in parsed["channels"].values()}
