"""The payloads of proto/arena/v1/lobby.proto: rooms, quick-match queues, AI games, rematches.

Importing this module registers every matchmaking command and event with the envelope codec's
registry (:data:`arena_runtime.envelope.SCHEMAS`). The messages holding a ``RoomSettings`` are at
version 2 (game-neutral settings: a game, its seats, the game's own settings as typed bytes);
version 1 held Maths Warriors' settings, and that game registers how to read it
(``arena_games.maths_warriors.wire``): the runtime knows no game.
"""

from __future__ import annotations

import uuid

from google.protobuf.message import Message

from arena_runtime.envelope import SCHEMAS, Schemas
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb

COMMANDS: tuple[type[Message], ...] = (
    pb.CreateRoom,
    pb.RetryRoomCode,
    pb.OpenRoom,
    pb.JoinRoom,
    pb.LeaveRoom,
    pb.FillSeat,
    pb.StartRoom,
    pb.RoomPresence,
    pb.RoomMatchEnded,
    pb.RematchRequest,
    pb.RematchAccept,
    pb.RematchDecline,
    pb.RoomTimer,
    pb.Enqueue,
    pb.Dequeue,
    pb.PlayAi,
    pb.PlaySolo,
    pb.ChallengeDuel,
    pb.AcceptDuel,
    pb.DeclineDuel,
    pb.StartDuel,
    pb.DuelGameEnded,
    pb.DuelStakeAnswer,
    pb.EndPlayerMatch,
)
EVENTS: tuple[type[Message], ...] = (
    pb.RoomRequested,
    pb.RoomRequestFailed,
    pb.RoomOpened,
    pb.RoomJoined,
    pb.RoomSeatFilled,
    pb.RoomLeft,
    pb.RoomMatchStarted,
    pb.RoomMatchFinished,
    pb.RoomPresenceChanged,
    pb.RoomIdle,
    pb.RematchRequested,
    pb.RematchAccepted,
    pb.RematchDeclined,
    pb.RoomClosed,
    pb.PlayerQueued,
    pb.PlayerDequeued,
    pb.PlayersPaired,
    pb.AiMatchRequested,
    pb.SoloMatchRequested,
    pb.RoomGameEnded,
    pb.RoomGameStarted,
    pb.DuelOffered,
    pb.DuelAccepted,
    pb.DuelDeclined,
    pb.DuelStakeHeld,
    pb.DuelStarted,
    pb.DuelGameRecorded,
    pb.DuelSettled,
    pb.PlayerMatchEnded,
)


#: The messages holding a RoomSettings, whose current version is 2.
WITH_SETTINGS: tuple[type[Message], ...] = (
    pb.CreateRoom,
    pb.OpenRoom,
    pb.RoomRequested,
    pb.RoomOpened,
    pb.RoomMatchStarted,
    pb.PlayAi,
    pb.AiMatchRequested,
)
SETTINGS_VERSION = 2


def register(schemas: Schemas = SCHEMAS) -> None:
    """Add every lobby payload to ``schemas`` (idempotent: known types are skipped)."""
    for message in WITH_SETTINGS:
        if not schemas.has(message.DESCRIPTOR.full_name, SETTINGS_VERSION):
            schemas.add_message(message, version=SETTINGS_VERSION)
    schemas.add_messages(m for m in (*COMMANDS, *EVENTS) if m not in WITH_SETTINGS)


register()


_DUEL_GAMES = uuid.UUID("5f0b7a52-92a4-4c4e-8f1e-6c2b1f9d7e31")


def duel_game(duel_id: str, player_id: str) -> str:
    """The match id of a player's game in a duel (``duel-<duel_id>``): matchmaking starts it
    under this id, and the read API finds a duel's games by it."""
    return uuid.uuid5(_DUEL_GAMES, f"{duel_id}\x00{player_id}").hex
