"""JSON-ready dicts for Digits commands and events, and back.

The shape is ``{"type": ClassName, field: value, ...}`` with slates as lists of 8 entries (null or
``{"kind", "level"}``), questions and settings as objects. Decoding is strict: an unknown type or
field is a CodecError, so a bad record never turns into a half-read event.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from . import commands, events
from .errors import DigitsError
from .questions import Question
from .settings import DigitsSettings
from .slate import Digit, SlateError, slate_from_json


class CodecError(DigitsError):
    """A dict that is not a Digits command or event (unknown type or field, bad value)."""


def _classes(module: Any) -> dict[str, type]:
    return {
        name: cls
        for name, cls in vars(module).items()
        if isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == module.__name__
    }


EVENT_TYPES = _classes(events)
COMMAND_TYPES = {k: v for k, v in _classes(commands).items() if k not in ("Context", "Rejection")}

_SLATE_FIELDS = frozenset({"saved", "opponent"})


def _plain(value: Any) -> Any:
    if isinstance(value, Digit):
        return {"kind": value.kind, "level": value.level}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def to_dict(message: Any) -> dict[str, Any]:
    """A command or an event as a JSON-ready dict."""
    name = type(message).__name__
    if name not in EVENT_TYPES and name not in COMMAND_TYPES:
        raise CodecError("unknown_type")
    body = _plain(message)
    assert isinstance(body, dict)
    return {"type": name, **body}


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _field(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name == "settings":
        known = {f.name for f in dataclasses.fields(DigitsSettings)}
        if not isinstance(value, dict) or not set(value) <= known:
            raise CodecError("bad_settings")
        return DigitsSettings(**{k: _tuples(v) for k, v in value.items()})
    if name == "question":
        return Question(int(value["stage"]), str(value["text"]), int(value["answer"]))
    if name in _SLATE_FIELDS:
        return slate_from_json(value)
    if name == "offers":
        return tuple(value)
    return value


def _from(message: dict[str, Any], types: dict[str, type]) -> Any:
    cls = types.get(str(message.get("type")))
    if cls is None:
        raise CodecError("unknown_type")
    names = {f.name for f in dataclasses.fields(cls)}
    extra = set(message) - names - {"type"}
    if extra:
        raise CodecError("unknown_field")
    try:
        return cls(**{k: _field(k, v) for k, v in message.items() if k != "type"})
    except (TypeError, KeyError, ValueError, SlateError) as exc:
        raise CodecError("bad_field") from exc


def event_to_dict(event: events.Event) -> dict[str, Any]:
    """An event as a JSON-ready dict (`to_dict`, typed for events)."""
    return to_dict(event)


def event_from_dict(message: dict[str, Any]) -> events.Event:
    event: events.Event = _from(message, EVENT_TYPES)
    return event


def command_from_dict(message: dict[str, Any]) -> commands.Command:
    command: commands.Command = _from(message, COMMAND_TYPES)
    return command
