"""Ghost stores (``ghosts-<game>``): the stream of each game that keeps its players' armies for
others to meet, found through the registry (``GameModule.ghosts``, docs/games.md).

Matchmaking keeps the stream and knows no game's store: the game's ``ghosts.store`` folds its
events and decides its commands, and its hooks make every command matchmaking sends there
(what a room's start and close file, what a duel draws, which match events are filed and how)
and what the store's draws become (an army for a match, a duel's armies). A game that keeps
armies is one more ``ghosts`` in the registry; a ``ghosts-`` stream no game keeps refuses
every command (``unknown_command``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from arena_games.contract import GameModule
from arena_games.registry import STANDARD, Registry
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_matchmaking.errors import LobbyErrorCode as Code

GHOSTS_PREFIX = "ghosts-"


@dataclass(frozen=True, slots=True)
class GhostLog:
    """A ghost store's stream: the game that keeps it (None: no game does) and the store's
    fold, as the game's ``ghosts.store`` makes it."""

    stream: str
    module: GameModule[Any] | None
    state: Any = None


def ghost_stream(game: str, registry: Registry = STANDARD) -> str:
    """The stream of ``game``'s ghost store (UnknownGameError, or ValueError if it keeps none)."""
    ghosts = registry.find(game).ghosts
    if ghosts is None:
        raise ValueError(f"{game} keeps no ghosts")
    return ghosts.stream


def initial_ghosts(stream: str, registry: Registry = STANDARD) -> GhostLog:
    module = registry.ghost_store(stream)
    if module is None or module.ghosts is None:
        return GhostLog(stream, None)
    return GhostLog(stream, module, module.ghosts.store.initial(stream))


def apply_ghosts(log: GhostLog, event: Message) -> GhostLog:
    if log.module is None or log.module.ghosts is None:
        return log
    return replace(log, state=log.module.ghosts.store.apply(log.state, event))


def decide_ghosts(log: GhostLog, command: Message, *, command_id: str) -> list[Message] | Rejection:
    if log.module is None or log.module.ghosts is None:
        return Rejection(Code.UNKNOWN_COMMAND, f"no ghost store {log.stream!r}")
    return log.module.ghosts.store.decide(log.state, command, command_id)


__all__ = [
    "GHOSTS_PREFIX",
    "GhostLog",
    "apply_ghosts",
    "decide_ghosts",
    "ghost_stream",
    "initial_ghosts",
]
