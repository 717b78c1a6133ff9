"""The games' payloads, registered where an `arena` process starts (docs/games.md): each game's
``wire.register`` is called explicitly, never by importing a module."""

from __future__ import annotations


def install() -> None:
    """Every shipped game's payloads and legacy upcasters in the process-wide registry."""
    from arena_games.registry import STANDARD
    from arena_runtime.envelope import SCHEMAS

    STANDARD.register_schemas(SCHEMAS)
