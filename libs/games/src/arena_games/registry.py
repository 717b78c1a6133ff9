"""Every game, found by name: the registry the services dispatch through (docs/games.md).

:func:`standard` builds the registry of every shipped game by explicit registration, one line
per game; nothing registers itself by being imported. A name no game has raises
:class:`UnknownGameError`, whose ``code`` a service records in its refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from arena_runtime.envelope import Codec, Schemas
from arena_runtime.schemas import accounts, rating

from arena_games.contract import GameError, GameModule

UNKNOWN_GAME = "unknown_game"


class UnknownGameError(GameError, LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(UNKNOWN_GAME, f"no game {name!r}")
        self.name = name


class Registry:
    """Game modules by name."""

    def __init__(self) -> None:
        self._games: dict[str, GameModule[Any]] = {}

    def register(self, module: GameModule[Any]) -> None:
        if module.name in self._games:
            raise ValueError(f"game {module.name!r} is registered already")
        self._games[module.name] = module

    def find(self, name: str) -> GameModule[Any]:
        found = self._games.get(name)
        if found is None:
            raise UnknownGameError(name)
        return found

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._games))

    def __iter__(self) -> Iterator[GameModule[Any]]:
        return iter(self._games[name] for name in self.names())

    def __contains__(self, name: object) -> bool:
        return name in self._games

    def ghost_games(self) -> tuple[str, ...]:
        """The games that keep their players' armies for others to meet (``ghosts`` set), by
        name, the first the default: the one answer the gateway's ``ghost_sharing``, the read
        API's ghost-sharing route and matchmaking's ghost stores share."""
        return tuple(module.name for module in self if module.ghosts is not None)

    def ghost_store(self, stream: str) -> GameModule[Any] | None:
        """The game whose ghost store is ``stream`` (``ghosts-<game>``), or None."""
        for module in self:
            if module.ghosts is not None and module.ghosts.stream == stream:
                return module
        return None

    def register_schemas(self, schemas: Schemas) -> None:
        """Every registered game's payloads and legacy upcasters, into ``schemas``."""
        for module in self:
            module.wire.register(schemas)


def standard() -> Registry:
    """The registry of every game Arena ships."""
    from arena_games import digits, maths_warriors, matrix_games, maze

    registry = Registry()
    registry.register(maths_warriors.MODULE)
    registry.register(maze.MODULE)
    registry.register(matrix_games.MODULE)
    registry.register(digits.MODULE)
    return registry


#: The shipped games, for callers that need no registry of their own.
STANDARD = standard()


def ladder_tier(game: str, rating: int) -> str:
    """The tier shown beside a rating on a game's ladder ("" for a game without one)."""
    if game not in STANDARD:
        return ""
    return STANDARD.find(game).ratings.tier(rating)


def reading_schemas(registry: Registry = STANDARD) -> Schemas:
    """A registry of payloads that reads every record through the seam: the runtime's own
    payloads and every game's, legacy types upcast (a pre-seam ``GameEnded`` reads as the
    ``MatchEnded`` carrying it, ``MatchCreated`` as ``MatchOpened``).

    The readers of results (rating, matchmaking's rooms, the read models) decode the match
    events with it, so they read ``MatchOpened`` and ``MatchEnded`` only, whichever shape the
    log holds (the process-wide registry reads the same since the match service writes the
    seam's types itself: every process registers every game there, explicitly)."""
    schemas = Schemas()
    accounts.register(schemas)
    rating.register(schemas)
    registry.register_schemas(schemas)
    return schemas


#: The codec of :func:`reading_schemas` for the shipped games.
READING = Codec(reading_schemas())
