"""The payloads of proto/arena/v1/lobby.proto: rooms, quick-match queues, AI games, rematches.

Importing this module registers every matchmaking command and event with the envelope codec's
registry (:data:`arena_runtime.envelope.SCHEMAS`), and the match schemas it refers to
(``CreateMatch`` is what matchmaking sends to start a match).
"""

from __future__ import annotations

from google.protobuf.message import Message

from arena_runtime.envelope import SCHEMAS, Schemas
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.schemas import maths_warriors as _maths_warriors  # noqa: F401  (registers)

COMMANDS: tuple[type[Message], ...] = (
    pb.CreateRoom,
    pb.RetryRoomCode,
    pb.OpenRoom,
    pb.JoinRoom,
    pb.LeaveRoom,
    pb.RoomPresence,
    pb.RoomMatchEnded,
    pb.RematchRequest,
    pb.RematchAccept,
    pb.RematchDecline,
    pb.RoomTimer,
    pb.Enqueue,
    pb.Dequeue,
    pb.PlayAi,
)
EVENTS: tuple[type[Message], ...] = (
    pb.RoomRequested,
    pb.RoomRequestFailed,
    pb.RoomOpened,
    pb.RoomJoined,
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
)


def register(schemas: Schemas = SCHEMAS) -> None:
    """Add every lobby payload to ``schemas`` (idempotent: known types are skipped)."""
    schemas.add_messages((*COMMANDS, *EVENTS))


register()
