"""A player stream (``player-<id>``): the player's lobby requests. Pure decide and apply.

A CreateRoom picks a code from its command id and an attempt number and records it
(``RoomRequested``); the service then asks that code's room stream to open. A taken code comes
back as ``RetryRoomCode`` with the next attempt, until a code is free or the attempts run out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_matchmaking.context import LobbyContext
from arena_matchmaking.errors import LobbyError
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.ids import match_id, room_code
from arena_matchmaking.ranked import check_ranked, refuse_ranked
from arena_matchmaking.room_settings import checked_settings

NO_FREE_CODE = "no_free_code"


@dataclass(frozen=True)
class RoomRequest:
    """The latest attempt of one CreateRoom."""

    request_id: str
    attempt: int
    code: str
    host: pb.LobbyPlayer
    settings: pb.RoomSettings
    failed: bool = False


#: Room requests a player stream remembers: a request matters only while its code is retried,
#: right after it was made, and a player holds one room at a time; without a bound every room a
#: player ever opened stayed in memory and was copied at each new one.
KEPT_REQUESTS = 8


@dataclass(frozen=True)
class PlayerLobby:
    player_id: str
    #: CreateRoom command id -> its request: the latest KEPT_REQUESTS, oldest first.
    requests: Mapping[str, RoomRequest] = field(default_factory=dict)


def initial_player(player_id: str) -> PlayerLobby:
    return PlayerLobby(player_id)


def apply_player(lobby: PlayerLobby, event: Message) -> PlayerLobby:
    match event:
        case pb.RoomRequested():
            request = RoomRequest(
                event.request_id, event.attempt, event.code, event.host, event.settings
            )
            requests = {**lobby.requests, event.create_command_id: request}
            if len(requests) > KEPT_REQUESTS:  # one more at most: forget the oldest
                del requests[next(iter(requests))]
            return replace(lobby, requests=requests)
        case pb.RoomRequestFailed():
            failed = lobby.requests.get(event.create_command_id)
            if failed is None:
                return lobby
            requests = {**lobby.requests, event.create_command_id: replace(failed, failed=True)}
            return replace(lobby, requests=requests)
    return lobby


def decide_player(
    lobby: PlayerLobby, command: Message, context: LobbyContext, *, stream: str, command_id: str
) -> list[Message] | Rejection:
    try:
        return _decide(lobby, command, context, stream, command_id)
    except LobbyError as exc:
        return exc.rejection()


def _decide(
    lobby: PlayerLobby, command: Message, context: LobbyContext, stream: str, command_id: str
) -> list[Message]:
    match command:
        case pb.CreateRoom():
            _check_sender(lobby, command.host.player_id)
            settings = checked_settings(command.settings)
            check_ranked(settings.mode, command.host)
            room = context.player_rooms.get(lobby.player_id)
            if room is not None:
                raise LobbyError(Code.ALREADY_IN_ROOM, f"already in room {room}")
            queue = context.player_queues.get(lobby.player_id)
            if queue is not None:
                raise LobbyError(Code.ALREADY_QUEUED, f"waiting in {queue}")
            if context.open_rooms >= context.room_cap:
                raise LobbyError(Code.ROOM_CAP_REACHED, f"{context.room_cap} rooms are open")
            return [
                pb.RoomRequested(
                    request_id=command.request_id,
                    create_command_id=command_id,
                    attempt=0,
                    code=room_code(command_id, 0),
                    host=command.host,
                    settings=settings,
                )
            ]
        case pb.RetryRoomCode():
            request = lobby.requests.get(command.create_command_id)
            if request is None:
                raise LobbyError(Code.UNKNOWN_REQUEST, "no such CreateRoom")
            if request.failed or command.attempt != request.attempt + 1:
                return []  # a repeat of an attempt already made
            if command.attempt >= context.max_code_attempts:
                return [
                    pb.RoomRequestFailed(
                        request_id=request.request_id,
                        create_command_id=command.create_command_id,
                        reason=NO_FREE_CODE,
                    )
                ]
            return [
                pb.RoomRequested(
                    request_id=request.request_id,
                    create_command_id=command.create_command_id,
                    attempt=command.attempt,
                    code=room_code(command.create_command_id, command.attempt),
                    host=request.host,
                    settings=request.settings,
                )
            ]
        case pb.PlayAi():
            _check_sender(lobby, command.player.player_id)
            if command.level not in AI_LEVELS:
                raise LobbyError(Code.INVALID_AI_LEVEL, f"no AI level {command.level}")
            refuse_ranked(command.settings.mode)
            return [
                pb.AiMatchRequested(
                    request_id=command.request_id,
                    match_id=match_id(stream, command_id),
                    player=command.player,
                    level=command.level,
                    settings=checked_settings(command.settings),
                )
            ]
    raise LobbyError(
        Code.UNKNOWN_COMMAND, f"a player stream does not take {type(command).__name__}"
    )


AI_LEVELS = frozenset(
    {mw.AI_LEVEL_EASY, mw.AI_LEVEL_MEDIUM, mw.AI_LEVEL_HARD, mw.AI_LEVEL_IMPOSSIBLE}
)


def _check_sender(lobby: PlayerLobby, player_id: str) -> None:
    if not player_id or player_id != lobby.player_id:
        raise LobbyError(Code.INVALID_PLAYER, "a player's requests go to their own stream")
