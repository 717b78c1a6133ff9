"""A player stream (``player-<id>``): the player's lobby requests. Pure decide and apply.

A CreateRoom picks a code from its command id and an attempt number and records it
(``RoomRequested``); the service then asks that code's room stream to open. A taken code comes
back as ``RetryRoomCode`` with the next attempt, until a code is free or the attempts run out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from arena_games.contract import pack
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_matchmaking.context import LobbyContext, check_free
from arena_matchmaking.errors import LobbyError
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.ids import match_id, room_code
from arena_matchmaking.ranked import check_ranked, refuse_ranked
from arena_matchmaking.room_settings import MODES, checked_settings, exclusive, game_of, with_seed

#: The policy an AI seat plays by when the request names none: its level's name.
AI_LEVEL_NAMES = {
    match_pb2.AI_LEVEL_EASY: "easy",
    match_pb2.AI_LEVEL_MEDIUM: "medium",
    match_pb2.AI_LEVEL_HARD: "hard",
    match_pb2.AI_LEVEL_IMPOSSIBLE: "impossible",
}
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
    #: Game -> the Paris day of the player's counted daily game of it (the latest).
    daily: Mapping[str, str] = field(default_factory=dict)


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
        case pb.SoloMatchRequested() if event.counted:
            return replace(lobby, daily={**lobby.daily, event.settings.game: event.day})
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
            settings = with_seed(checked_settings(command.settings), command_id)
            check_ranked(settings.mode, command.host)
            if exclusive(settings):
                check_free(context, lobby.player_id)
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
            check_free(context, lobby.player_id)
            return [
                pb.AiMatchRequested(
                    request_id=command.request_id,
                    match_id=match_id(stream, command_id),
                    player=command.player,
                    level=command.level,
                    settings=checked_settings(command.settings),
                    policy=command.policy or AI_LEVEL_NAMES.get(command.level, ""),
                )
            ]
        case pb.PlaySolo():
            _check_sender(lobby, command.player.player_id)
            return [_solo(lobby, command, context, match_id(stream, command_id))]
        case pb.EndPlayerMatch():
            _check_sender(lobby, command.player_id)
            return [pb.PlayerMatchEnded(player_id=command.player_id, match_id=command.match_id)]
    raise LobbyError(
        Code.UNKNOWN_COMMAND, f"a player stream does not take {type(command).__name__}"
    )


#: Modes a one-seat game is started in alone; rooms and duels have their own paths.
SOLO_MODES = ("ranked", "casual", "daily", "tutorial", "trial")
DAILY = "daily"


def _solo(
    lobby: PlayerLobby, command: pb.PlaySolo, context: LobbyContext, match: str
) -> pb.SoloMatchRequested:
    """A one-seat game alone. A daily game is the counted one of the player's Paris day (the
    first started) with the day's shared seeds; a second that day is played casual."""
    settings = checked_settings(command.settings)
    game = game_of(settings)
    if game.seats.seats != 1:
        raise LobbyError(Code.INVALID_SEATS, f"{game.name} is not played alone")
    mode = MODES.get(settings.mode, "")
    if mode not in SOLO_MODES:
        raise LobbyError(Code.MODE_NOT_AVAILABLE, f"a {mode} game is not started alone")
    check_ranked(settings.mode, command.player)
    if exclusive(settings):
        check_free(context, lobby.player_id)
    day, counted = "", False
    day_of = getattr(game.lobby, "day_of", None)
    if mode == DAILY and day_of is None:
        raise LobbyError(Code.MODE_NOT_AVAILABLE, f"{game.name} has no daily calendar")
    if mode == DAILY and day_of is not None:
        day = day_of(context.now_ms)
        counted = lobby.daily.get(game.name) != day
        if counted:
            settings = _with_day_seeds(settings, day)
        else:
            settings.mode = match_pb2.MATCH_MODE_CASUAL
    return pb.SoloMatchRequested(
        request_id=command.request_id,
        match_id=match,
        player=command.player,
        settings=settings,
        day=day,
        counted=counted,
    )


def _with_day_seeds(settings: pb.RoomSettings, day: str) -> pb.RoomSettings:
    """The game's daily seed fields (``lobby.shared_seeds``) drawn from the game and the day:
    every player of that day gets the same."""
    game = game_of(settings)
    names = getattr(game.lobby, "shared_seeds", {}).get(DAILY, ())
    played = game.wire.settings()
    settings.settings.Unpack(played)
    for name in names:
        digest = hashlib.sha256(f"{game.name}:daily:{day}:{name}".encode()).digest()
        setattr(played, name, int.from_bytes(digest[:8], "big") >> 1)
    settings.settings.CopyFrom(pack(game.lobby.check(played)))
    return settings


AI_LEVELS = frozenset(
    {
        match_pb2.AI_LEVEL_EASY,
        match_pb2.AI_LEVEL_MEDIUM,
        match_pb2.AI_LEVEL_HARD,
        match_pb2.AI_LEVEL_IMPOSSIBLE,
    }
)


def _check_sender(lobby: PlayerLobby, player_id: str) -> None:
    if not player_id or player_id != lobby.player_id:
        raise LobbyError(Code.INVALID_PLAYER, "a player's requests go to their own stream")
