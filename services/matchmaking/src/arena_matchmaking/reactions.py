"""What the service sends after a command is answered: pure, from the command and its answer.

Every follow-up command has an id derived from what caused it, so sending it again (after a
crash between appending the events and committing the command's offset, the command is
redelivered, answered again from the log, and its follow-ups are sent again) changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena_runtime import topics
from arena_runtime.envelope import Command
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime.streams import Answer
from google.protobuf.message import Message

from arena_matchmaking.errors import LobbyErrorCode
from arena_matchmaking.ids import match_stream, player_stream, room_stream
from arena_matchmaking.room_settings import default_settings

AI_NAMES = {
    mw.AI_LEVEL_EASY: "easy",
    mw.AI_LEVEL_MEDIUM: "medium",
    mw.AI_LEVEL_HARD: "hard",
    mw.AI_LEVEL_IMPOSSIBLE: "impossible",
}


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A command to send: its topic, stream, id and payload."""

    topic: str
    stream: str
    command_id: str
    payload: Message


def follow_ups(command: Command, answer: Answer) -> list[FollowUp]:
    if answer.rejection is not None:
        return _after_rejection(command, answer.rejection.code)
    sent: list[FollowUp] = []
    for event in answer.events:
        sent.extend(_after_event(event.payload, command.stream))
    return sent


def _after_rejection(command: Command, code: str) -> list[FollowUp]:
    payload = command.payload
    if isinstance(payload, pb.OpenRoom) and code == LobbyErrorCode.CODE_TAKEN:
        attempt = payload.attempt + 1
        return [
            FollowUp(
                topics.MATCHMAKING_COMMANDS,
                player_stream(payload.host.player_id),
                f"{payload.create_command_id}:retry:{attempt}",
                pb.RetryRoomCode(create_command_id=payload.create_command_id, attempt=attempt),
            )
        ]
    return []


def _after_event(event: Message, stream: str) -> list[FollowUp]:
    match event:
        case pb.RoomRequested():
            return [
                FollowUp(
                    topics.MATCHMAKING_COMMANDS,
                    room_stream(event.code),
                    f"{event.create_command_id}:open:{event.attempt}",
                    pb.OpenRoom(
                        request_id=event.request_id,
                        host=event.host,
                        settings=event.settings,
                        create_command_id=event.create_command_id,
                        attempt=event.attempt,
                    ),
                )
            ]
        case pb.RoomMatchStarted():
            seats = [_human(p) for p in event.seats]
            return [_create_match(event.match_id, seats, event.settings, event.code)]
        case pb.PlayersPaired():
            seats = [_human(p) for p in event.players]
            settings = default_settings()
            if stream.endswith("-ranked"):  # queue-<game>-ranked (ids.queue_stream)
                settings.mode = mw.MATCH_MODE_RANKED
            return [_create_match(event.match_id, seats, settings, "")]
        case pb.AiMatchRequested():
            level = AI_NAMES.get(event.level, "ai")
            ai = mw.MatchSeat(
                player_id=f"ai-{level}",
                display_name=f"AI ({level})",
                kind=mw.SEAT_KIND_AI,
                ai_level=event.level,
            )
            return [_create_match(event.match_id, [_human(event.player), ai], event.settings, "")]
    return []


def _human(player: pb.LobbyPlayer) -> mw.MatchSeat:
    return mw.MatchSeat(
        player_id=player.player_id, display_name=player.display_name, kind=mw.SEAT_KIND_HUMAN
    )


def _create_match(
    match: str, seats: list[mw.MatchSeat], settings: pb.RoomSettings, code: str
) -> FollowUp:
    create = mw.CreateMatch(
        match_id=match,
        seats=seats,
        ruleset=settings.ruleset,
        game_seconds=settings.game_seconds,
        move_seconds=settings.move_seconds,
        preview=settings.preview,
        mode=settings.mode or mw.MATCH_MODE_CASUAL,
        room_code=code,
    )
    return FollowUp(topics.MATCH_COMMANDS, match_stream(match), f"create:{match}", create)
