"""docs/asyncapi.yaml is a well-formed AsyncAPI 3 document and lists exactly the message types
the gateway reads and sends."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import jsonschema
import pytest
import yaml
from arena_games.pushes import Push
from arena_games.registry import STANDARD, Registry
from arena_gateway.asyncapi import document
from arena_gateway.protocol import CLIENT_TYPES, SERVER_TYPES

from tests.wire_schemas import PushMismatch, check_ack, check_push

DOC = Path(__file__).resolve().parents[3] / "docs" / "asyncapi.yaml"


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    loaded = yaml.safe_load(DOC.read_text())
    assert isinstance(loaded, dict)
    return loaded


def resolve(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = doc
    for part in ref[2:].split("/"):
        assert part in node, f"{ref} does not resolve"
        node = node[part]
    return node


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if "$ref" in node else []
        return found + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs(value)]
    return []


def test_the_document_has_the_asyncapi_3_shape(doc: dict[str, Any]) -> None:
    assert doc["asyncapi"].startswith("3.")
    assert doc["info"]["title"] and doc["info"]["version"]
    assert doc["channels"]["play"]["address"] == "/v1/ws"
    for name, operation in doc["operations"].items():
        assert operation["action"] in ("send", "receive"), name
        assert resolve(doc, operation["channel"]["$ref"]) is doc["channels"]["play"]
        for message in operation["messages"]:
            # AsyncAPI 3: an operation's messages are those of its channel.
            assert message["$ref"].startswith("#/channels/play/messages/")


def test_every_reference_resolves(doc: dict[str, Any]) -> None:
    for ref in refs(doc):
        resolve(doc, ref)


def test_every_payload_is_a_json_schema(doc: dict[str, Any]) -> None:
    for message in doc["components"]["messages"].values():
        jsonschema.Draft7Validator.check_schema(message["payload"])


def _types(doc: dict[str, Any], action: str) -> set[str]:
    operation = next(o for o in doc["operations"].values() if o["action"] == action)
    messages = [resolve(doc, resolve(doc, m["$ref"])["$ref"]) for m in operation["messages"]]
    return {m["payload"]["properties"]["type"]["const"] for m in messages}


def test_it_lists_exactly_what_the_gateway_reads_and_sends(doc: dict[str, Any]) -> None:
    assert _types(doc, "receive") == set(CLIENT_TYPES)
    assert _types(doc, "send") == set(SERVER_TYPES)


def test_a_sample_mind_message_validates_against_its_payload(doc: dict[str, Any]) -> None:
    schema = {
        **doc["components"]["messages"]["Mind"]["payload"],
        **{"components": doc["components"]},
    }
    sample = {"type": "mind", "id": "1", "target": "D8", "tokens": [{"die": "D4", "value": 2}, "+"]}
    jsonschema.Draft7Validator(schema).validate(sample)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate({**sample, "tokens": ["^"]})


def test_the_games_pushes_are_written_from_their_models() -> None:
    """The games' pushes in the document are their models' schemas (arena_gateway.asyncapi):
    the file is what `make asyncapi` writes from the registry now."""
    text = DOC.read_text()
    assert text == document(text), "docs/asyncapi.yaml is stale: run `make asyncapi`"


def test_every_game_push_the_pages_read_has_its_model(doc: dict[str, Any]) -> None:
    messages = doc["components"]["messages"]
    described = {
        m["payload"]["properties"]["type"]["const"]: m
        for m in messages.values()
        if "x-ack" not in m
    }
    for type_ in ("state", "welcome", "final", "order_accepted", "maze_match", "maze_view",
                  "maze_refused", "digits_game", "digits_combat_fought",
                  "digits_focus_answered", "digits_training_answered"):  # fmt: skip
        payload = described[type_]["payload"]
        assert "x-arena-game" in described[type_]
        fields = set(payload["properties"]) - {"type", "match_id"}
        assert fields or "oneOf" in payload, f"{type_}: described by no model"


def test_a_game_push_the_views_make_validates_and_a_broken_one_does_not() -> None:
    """The e2e client checks every game push it receives (tests/wire_schemas.py); here one of
    each game's as its views make it, and the same with a field broken."""
    maze_view = {"type": "maze_view", "v": 1, "seq": 0, "role": "1", "phase": "countdown",
                 "width": 5, "height": 5, "meetings": 0, "chunk": 0, "chunks": 1,
                 "status": {"cell": 3, "carrying": None, "vision": 0, "compass": None,
                            "exit": "closed", "result": None},
                 "cells": [[3, 6]], "objects": [["exit", 1, "E", 4]]}  # fmt: skip
    check_push(maze_view)
    for broken in ({**maze_view, "phase": "paused"}, {**maze_view, "cells": [[3]]},
                   {**maze_view, "surprise": 1}):  # fmt: skip
        with pytest.raises(PushMismatch):
            check_push(broken)
    answered = {"type": "digits_focus_answered", "match_id": "m", "right": True, "late": False}
    check_push({"type": "ack", "id": "1", "result": {"match_id": "m", "events": [answered]}})
    with pytest.raises(PushMismatch):
        check_push({"type": "ack", "id": "1", "result": {"events": [{**answered, "right": 1}]}})


def test_the_mazes_acks_and_seats_are_described_field_by_field() -> None:
    """maze_move's and maze_drop's acks are ``{match_id, events, seq}`` (accepted: no events and
    the view's seq; refused: the maze_refused push and null), a seat's kind one of three."""
    refused = {"type": "maze_refused", "match_id": "m", "command_seq": 4, "code": "wall", "t": 9}
    for type_ in ("maze_move", "maze_drop"):
        check_ack(type_, {"match_id": "m", "events": [], "seq": 3})
        check_ack(type_, {"match_id": "m", "events": [refused], "seq": None})
        for broken in ({"match_id": "m", "events": []}, {"match_id": "m", "events": [{}], "seq": 1},
                       {"match_id": "m", "events": [], "seq": 1, "extra": 0}):  # fmt: skip
            with pytest.raises(PushMismatch):
                check_ack(type_, broken)
    seat = {"seat": 1, "player_id": "p_1", "name": "Ann", "kind": "human", "connected": False,
            "reconnect_deadline_ms": None}  # fmt: skip
    match = {"type": "maze_match", "match_id": "m", "room_code": "", "mode": "casual",
             "sequence": 1, "role": "1", "seats": [seat], "settings": {"mode": "casual"},
             "started_at_ms": 1, "countdown_end_ms": 2, "ends_at_ms": None,
             "server_time_ms": 3}  # fmt: skip
    check_push(match)
    with pytest.raises(PushMismatch):
        check_push({**match, "seats": [{**seat, "kind": "guest"}]})


class _Scored(Push):
    type: Literal["maze_scored"]
    match_id: str
    score: int


def _with_pushes(pushes: frozenset[str], models: dict[str, Any]) -> Registry:
    maze = STANDARD.find("maze")
    client = SimpleNamespace(
        messages=maze.client.messages,
        relayed=maze.client.relayed,
        command=maze.client.command,
        pushes=maze.client.pushes | pushes,
        push_models={**maze.client.push_models, **models},
    )
    registry = Registry()
    registry.register(dataclasses.replace(maze, client=client))  # type: ignore[arg-type]
    return registry


def test_a_game_adds_a_push_to_the_document_by_adding_its_model() -> None:
    written = yaml.safe_load(
        document(
            DOC.read_text(), _with_pushes(frozenset({"maze_scored"}), {"maze_scored": _Scored})
        )
    )
    scored = written["components"]["messages"]["MazeScored"]
    assert scored["x-arena-game"] == "maze"
    assert scored["payload"]["properties"]["score"] == {"type": "integer"}
    assert scored["payload"]["additionalProperties"] is False
    pushes = written["operations"]["serverPushes"]["messages"]
    assert {"$ref": "#/channels/play/messages/MazeScored"} in pushes
    # The games no longer registered lose theirs; the gateway's own messages stay.
    assert "DigitsGame" not in written["components"]["messages"]
    assert "Snapshot" in written["components"]["messages"]


def test_a_model_of_a_push_the_game_never_makes_is_refused() -> None:
    with pytest.raises(ValueError, match="never makes"):
        document(DOC.read_text(), _with_pushes(frozenset(), {"maze_scored": _Scored}))
