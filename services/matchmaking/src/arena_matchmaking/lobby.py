"""The matchmaking streams behind one StreamRunner: a stream's kind is its id's prefix."""

from __future__ import annotations

from arena_runtime.envelope import Command, Event
from arena_runtime.streams import Decision, Rejection

from arena_matchmaking.context import LobbyContext
from arena_matchmaking.duels import DUEL_PREFIX, Duel, apply_duel, decide_duel, initial_duel
from arena_matchmaking.errors import LobbyErrorCode
from arena_matchmaking.ghosts import (
    GHOSTS_PREFIX,
    GhostLog,
    apply_ghosts,
    decide_ghosts,
    initial_ghosts,
)
from arena_matchmaking.players import PlayerLobby, apply_player, decide_player, initial_player
from arena_matchmaking.queues import Queue, apply_queue, decide_queue, initial_queue
from arena_matchmaking.rooms import Room, apply_room, decide_room, initial_room

ROOM_PREFIX = "room-"
PLAYER_PREFIX = "player-"
QUEUE_PREFIX = "queue-"


class UnknownStream:
    """A stream id no matchmaking stream has; every command to it is refused."""

    def __init__(self, stream: str) -> None:
        self.stream = stream


LobbyState = Room | PlayerLobby | Queue | GhostLog | Duel | UnknownStream


def initial(stream: str) -> LobbyState:
    if stream.startswith(ROOM_PREFIX):
        return initial_room(stream.removeprefix(ROOM_PREFIX))
    if stream.startswith(PLAYER_PREFIX):
        return initial_player(stream.removeprefix(PLAYER_PREFIX))
    if stream.startswith(QUEUE_PREFIX):
        return initial_queue(stream)
    if stream.startswith(GHOSTS_PREFIX):
        return initial_ghosts(stream)
    if stream.startswith(DUEL_PREFIX):
        return initial_duel(stream)
    return UnknownStream(stream)


def apply(state: LobbyState, event: Event) -> LobbyState:
    match state:
        case Room():
            return apply_room(state, event.payload)
        case PlayerLobby():
            return apply_player(state, event.payload)
        case Queue():
            return apply_queue(state, event.payload)
        case GhostLog():
            return apply_ghosts(state, event.payload)
        case Duel():
            return apply_duel(state, event.payload)
    return state


def decide(state: LobbyState, command: Command, context: LobbyContext) -> Decision:
    ids = {"command_id": command.command_id}
    match state:
        case Room():
            return decide_room(state, command.payload, context, stream=command.stream, **ids)
        case PlayerLobby():
            return decide_player(state, command.payload, context, stream=command.stream, **ids)
        case Queue():
            return decide_queue(state, command.payload, context, **ids)
        case GhostLog():
            return decide_ghosts(state, command.payload, **ids)
        case Duel():
            return decide_duel(state, command.payload, context, **ids)
    return Rejection(LobbyErrorCode.UNKNOWN_COMMAND, f"no matchmaking stream {command.stream!r}")
