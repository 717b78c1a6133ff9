"""The games' pushes checked against docs/asyncapi.yaml as they arrive (the e2e client's hook):
each push a game describes (``x-arena-game``) must validate against its payload there, which
is written from the game's own models (arena_gateway.asyncapi), so the document, the web
client's generated types and what the views really push cannot drift apart."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

DOC = Path(__file__).resolve().parents[1] / "docs" / "asyncapi.yaml"


class PushMismatch(AssertionError):
    """A push that is not what the protocol's document says it is."""


@cache
def validators() -> dict[str, jsonschema.Draft7Validator]:
    doc = yaml.safe_load(DOC.read_text())
    components = doc["components"]
    return {
        message["payload"]["properties"]["type"]["const"]: jsonschema.Draft7Validator(
            {**message["payload"], "components": components}
        )
        for message in components["messages"].values()
        if "x-arena-game" in message and "x-ack" not in message
    }


@cache
def ack_validators() -> dict[str, jsonschema.Draft7Validator]:
    """The acks the document describes field by field (``x-ack`` with ``properties``)."""
    doc = yaml.safe_load(DOC.read_text())
    components = doc["components"]
    return {
        message["payload"]["properties"]["type"]["const"]: jsonschema.Draft7Validator(
            {**message["x-ack"], "components": components}
        )
        for message in components["messages"].values()
        if "properties" in message.get("x-ack", {})
    }


def check_ack(type_: str, result: Any) -> None:
    """Raise PushMismatch if the ``result`` of the ack of a ``type_`` message is not what the
    document says (an ack it describes field by field: ``watch_match``'s, the lobby's, …)."""
    validator = ack_validators().get(type_)
    if validator is None:
        return
    errors = list(validator.iter_errors(result))
    if errors:
        error = _in_its_branch(max(errors, key=jsonschema.exceptions.relevance))
        path = "/".join(str(p) for p in error.absolute_path)
        raise PushMismatch(f"the ack of {type_} at /{path}: {error.message}")


def check_push(message: dict[str, Any]) -> None:
    """Raise PushMismatch if ``message`` is a game's push its schema refuses (an ack's
    ``result.events``, the sender's own pushes, are checked alike)."""
    pushes = [message]
    result = message.get("result")
    if message.get("type") == "ack" and isinstance(result, dict):
        pushes = [e for e in result.get("events", ()) if isinstance(e, dict)]
    for push in pushes:
        validator = validators().get(str(push.get("type")))
        if validator is None:
            continue
        errors = list(validator.iter_errors(push))
        if errors:
            error = _in_its_branch(max(errors, key=jsonschema.exceptions.relevance))
            path = "/".join(str(p) for p in error.absolute_path)
            raise PushMismatch(f"{push['type']} at /{path}: {error.message}")


def _in_its_branch(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """A union's error (Matrix Games' ``state``) told in the member the push claims to be: the
    one whose consts (``protocol``) it matches, with the fewest errors."""
    if error.validator != "oneOf" or not error.context:
        return jsonschema.exceptions.best_match([error]) or error
    branches: dict[Any, list[jsonschema.ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.schema_path[0], []).append(sub)
    best = min(branches.values(), key=lambda es: (any(e.validator == "const" for e in es), len(es)))
    return _in_its_branch(best[0])
