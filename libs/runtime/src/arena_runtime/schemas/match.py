"""The payloads of proto/arena/v1/match.proto: a match's life whatever its game.

Importing this module registers them with the envelope codec's registry
(:data:`arena_runtime.envelope.SCHEMAS`); :func:`register` adds them to any other registry. Each
game's own payloads are registered by its module (``arena_games``), never here.
"""

from __future__ import annotations

from google.protobuf.message import Message

from arena_runtime.envelope import SCHEMAS, Schemas
from arena_runtime.proto_gen.arena.v1 import match_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import views_pb2

#: A match's mode by name (what a game's ``modes`` list) and back; unspecified reads casual.
MODE_NAMES: dict[pb.MatchMode.ValueType, str] = {
    pb.MATCH_MODE_UNSPECIFIED: "casual",
    pb.MATCH_MODE_CASUAL: "casual",
    pb.MATCH_MODE_RANKED: "ranked",
    pb.MATCH_MODE_DAILY: "daily",
    pb.MATCH_MODE_ROOM: "room",
    pb.MATCH_MODE_DUEL: "duel",
    pb.MATCH_MODE_TUTORIAL: "tutorial",
    pb.MATCH_MODE_TRIAL: "trial",
}
MODES: dict[str, pb.MatchMode.ValueType] = {
    name: value for value, name in MODE_NAMES.items() if value != pb.MATCH_MODE_UNSPECIFIED
}

COMMANDS: tuple[type[Message], ...] = (
    pb.StartMatch,
    pb.Resign,
    pb.PlayerDisconnected,
    pb.PlayerReconnected,
    pb.ReconnectExpired,
    # Answered on arena.match.views, never in the match's events.
    views_pb2.ViewRequest,
    views_pb2.ClientRelay,
)
EVENTS: tuple[type[Message], ...] = (
    pb.MatchOpened,
    pb.MatchEnded,
    pb.PlayerDisconnected,
    pb.PlayerReconnected,
)


def register(schemas: Schemas = SCHEMAS) -> None:
    """Register every game-neutral match payload (once per registry)."""
    schemas.add_messages((*COMMANDS, *EVENTS))


register()
