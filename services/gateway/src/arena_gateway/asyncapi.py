"""``docs/asyncapi.yaml``'s game pushes, written from the games' own models.

The gateway's own messages are described by hand in the document; the pushes each game's views
make are not: their payloads are the JSON Schemas of the models the game's client names
(``client.push_models``, :mod:`arena_games.pushes`), their shared parts in ``components/schemas``,
each marked ``x-arena-game``. :func:`document` is the document with those parts made again from
the registry; ``python -m arena_gateway.asyncapi`` (``make asyncapi``) writes it, and the suite
fails while the file differs from it (tests/services/gateway/test_asyncapi.py). A new game adds
its pushes by adding its models: nothing here names a game.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from arena_games.pushes import pascal, push_schemas
from arena_games.registry import STANDARD, Registry

PATH = Path(__file__).resolve().parents[4] / "docs" / "asyncapi.yaml"
HEADER = (
    "# AsyncAPI 3 description of the gateway's WebSocket protocol (docs/protocol.md).\n"
    "# Checked by tests/services/gateway/test_asyncapi.py against the code's message types.\n"
    "# The games' pushes (x-arena-game, in serverPushes) and their schemas are written from the\n"
    "# games' models by `make asyncapi` (arena_gateway.asyncapi): edit those, not them.\n"
)
GAME = "x-arena-game"
CHANNEL = "#/channels/play/messages/"
MESSAGE = "#/components/messages/"


def _pushes(doc: dict[str, Any]) -> list[str]:
    return [m["$ref"].removeprefix(CHANNEL) for m in doc["operations"]["serverPushes"]["messages"]]


def document(text: str, registry: Registry = STANDARD) -> str:
    """The document ``text`` with its games' pushes written again from ``registry``."""
    doc = yaml.safe_load(text)
    components = doc["components"]
    messages: dict[str, Any] = components["messages"]
    pushes = _pushes(doc)
    generated = [name for name in pushes if GAME in messages[name]]
    by_hand = [name for name in pushes if GAME not in messages[name]]
    described = {messages[n]["payload"]["properties"]["type"]["const"] for n in by_hand}
    for name in generated:
        del messages[name]
        del doc["channels"]["play"]["messages"][name]
    components["schemas"] = {
        name: schema for name, schema in components["schemas"].items() if GAME not in schema
    }
    payloads, shared = push_schemas(registry, described)
    for name, schema in sorted(shared.items()):
        if name in components["schemas"]:
            raise ValueError(f"schema {name} is the document's own already")
        components["schemas"][name] = {**schema, GAME: _game_of(name, registry)}
    made = []
    for type_, (game, payload) in payloads.items():
        name = pascal(type_)
        if name in messages or name in components["schemas"]:
            raise ValueError(f"{game}: push {type_} would be named {name}, which is taken")
        summary = payload.pop("description", "a push the game's views make (docs/protocol.md).")
        messages[name] = {
            "name": type_,
            "title": type_,
            "summary": f"{game}: {' '.join(summary.split())}",
            GAME: game,
            "payload": payload,
        }
        made.append(name)
    made.sort()
    for name in made:
        doc["channels"]["play"]["messages"][name] = {"$ref": MESSAGE + name}
    doc["operations"]["serverPushes"]["messages"] = [
        {"$ref": CHANNEL + name} for name in (*by_hand, *made)
    ]
    return HEADER + yaml.safe_dump(doc, sort_keys=False, width=100, allow_unicode=True)


def _game_of(schema: str, registry: Registry) -> str:
    return max((m.name for m in registry if schema.startswith(pascal(m.name))), key=len)


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else PATH
    path.write_text(document(path.read_text()))


if __name__ == "__main__":
    main()
