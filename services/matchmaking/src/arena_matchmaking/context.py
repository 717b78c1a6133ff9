"""What a lobby decision may look at besides its own stream: the time and the lobby directory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb

#: CreateRoom gives up after this many codes were found taken (``no_free_code``).
MAX_CODE_ATTEMPTS = 32


@dataclass(frozen=True, slots=True)
class Player:
    """A player as the lobby knows them (hashable, unlike the protobuf message)."""

    player_id: str
    display_name: str = ""
    #: Guest or account (ranked play needs accounts).
    kind: pb.PlayerKind.ValueType = pb.PLAYER_KIND_UNSPECIFIED

    @classmethod
    def from_proto(cls, message: pb.LobbyPlayer) -> Player:
        return cls(message.player_id, message.display_name, message.kind)

    def to_proto(self) -> pb.LobbyPlayer:
        return pb.LobbyPlayer(
            player_id=self.player_id, display_name=self.display_name, kind=self.kind
        )


@dataclass(frozen=True, slots=True)
class LobbyContext:
    """The inputs of a decision that are not in its stream.

    ``open_rooms`` and ``player_rooms`` come from the lobby directory, which reads every
    partition of the matchmaking events; the decision that used them is recorded, so replaying
    the log never needs them again.
    """

    now_ms: int
    room_cap: int = 10_000
    waiting_ms: int = 300_000
    idle_ms: int = 120_000
    #: Rooms open (waiting, playing or finished) plus CreateRoom requests still looking for a code.
    open_rooms: int = 0
    #: Player id -> code of the waiting or playing room they sit in.
    player_rooms: Mapping[str, str] = field(default_factory=dict)
    #: Player id -> the queue stream they wait in.
    player_queues: Mapping[str, str] = field(default_factory=dict)
    max_code_attempts: int = MAX_CODE_ATTEMPTS
