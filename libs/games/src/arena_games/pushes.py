"""The games' pushes as JSON Schema, from the pydantic models each game's client names
(``client.push_models``): what ``docs/asyncapi.yaml`` says of them, so what the web client's wire
types are generated from (docs/client.md).

A game describes a push by adding a model to its ``push_models``; a push it names in ``pushes``
without one is described as an open object with its ``type`` (and ``match_id``). The models
forbid fields they do not name, so a view that pushes something new fails the suite's checks
(tests/services/gateway/test_asyncapi.py, the e2e client) until its model says so.

The schemas are draft 7 (the document's dialect): pydantic's ``$defs`` become the document's
``components/schemas``, each named after its game (``Maze`` + the model's name, unless it
starts with it already), and ``prefixItems`` become ``items`` lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from arena_games.contract import GameModule

REF = "#/components/schemas/"


class Push(BaseModel):
    """A push's model: every field it may carry is named (``extra`` forbidden)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Open(BaseModel):
    """A part of a push described by its owner elsewhere (a reference document, a proto
    message): any fields."""

    model_config = ConfigDict(extra="allow", frozen=True)


def absent() -> Any:
    """The default of a field a push may leave out (never sends as null): its schema does not
    require it, and its type (so the client's) has no null."""
    return Field(default=None)


def pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", name) if part)


def open_payload(type_: str) -> dict[str, Any]:
    """A push without a model: its type, its match, anything else."""
    return {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"const": type_}, "match_id": {"type": "string"}},
    }


def _draft7(node: Any, rename: Mapping[str, str]) -> Any:
    if isinstance(node, list):
        return [_draft7(n, rename) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref":
            out[key] = REF + rename[value.removeprefix("#/$defs/")]
        elif key == "prefixItems":
            out["items"] = _draft7(value, rename)
            out["minItems"] = out["maxItems"] = len(value)
        elif key == "items" and "prefixItems" in node:
            continue  # ``items: false`` after prefixItems: the maxItems above
        elif key == "discriminator":
            continue  # OpenAPI's; the union's members are told apart by their consts
        elif key == "default" and value is None:
            continue  # a field left out rather than null (beside a $ref, a new type in TS)
        elif key == "title" and isinstance(value, str):
            continue  # pydantic titles every field ("Seq"): each would become its own type
        else:
            out[key] = _draft7(value, rename)
    return out


def schema_of(model: Any) -> dict[str, Any]:
    """The JSON Schema (pydantic's, draft 2020-12) of a model or a type (a union)."""
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model.model_json_schema()
    return TypeAdapter(model).json_schema()


def push_schemas(
    modules: Iterable[GameModule[Any]], described: Iterable[str] = ()
) -> tuple[dict[str, tuple[str, dict[str, Any]]], dict[str, dict[str, Any]]]:
    """Every game's pushes but those ``described`` elsewhere (the gateway's document describes
    the pushes several games share, e.g. ``opponent_disconnected``): type -> (game, payload
    schema), and the schemas they refer to by name. Two games making one push, or naming two
    schemas alike, is an error."""
    skip = frozenset(described)
    payloads: dict[str, tuple[str, dict[str, Any]]] = {}
    shared: dict[str, dict[str, Any]] = {}
    for module in modules:
        prefix = pascal(module.name)
        models: Mapping[str, Any] = module.client.push_models
        unknown = set(models) - set(module.client.pushes - skip)
        if unknown:
            raise ValueError(f"{module.name}: models of pushes it never makes: {sorted(unknown)}")
        for type_ in sorted(module.client.pushes - skip):
            if type_ in payloads:
                raise ValueError(f"push {type_!r} of {payloads[type_][0]} and {module.name}")
            if type_ not in models:
                payloads[type_] = (module.name, open_payload(type_))
                continue
            schema = schema_of(models[type_])
            defs = schema.pop("$defs", {})
            rename = {n: n if n.startswith(prefix) else prefix + n for n in defs}
            for name, definition in defs.items():
                converted = _draft7(definition, rename)
                if shared.setdefault(rename[name], converted) != converted:
                    raise ValueError(f"{module.name}: two schemas named {rename[name]}")
            schema.pop("title", None)
            payload = _draft7(schema, rename)
            if "properties" not in payload:  # a union: its members' consts, said once more
                payload = {"type": "object", "required": ["type"],
                           "properties": {"type": {"const": type_}}, **payload}  # fmt: skip
            payloads[type_] = (module.name, payload)
    return payloads, shared
