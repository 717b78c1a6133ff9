"""What a lobby decision may look at besides its own stream: the time and the lobby directory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb

from arena_matchmaking.errors import LobbyError, LobbyErrorCode

#: CreateRoom gives up after this many codes were found taken (``no_free_code``).
MAX_CODE_ATTEMPTS = 32


@dataclass(frozen=True, slots=True)
class Player:
    """A player as the lobby knows them (hashable, unlike the protobuf message)."""

    player_id: str
    display_name: str = ""
    #: Guest or account (ranked play needs accounts).
    kind: pb.PlayerKind.ValueType = pb.PLAYER_KIND_UNSPECIFIED
    #: A seat the host (or the start) filled: the AI level or scripted policy; "" for a person.
    policy: str = ""

    @property
    def person(self) -> bool:
        return not self.policy

    @classmethod
    def from_proto(cls, message: pb.LobbyPlayer) -> Player:
        return cls(message.player_id, message.display_name, message.kind, message.policy)

    def to_proto(self) -> pb.LobbyPlayer:
        return pb.LobbyPlayer(
            player_id=self.player_id,
            display_name=self.display_name,
            kind=self.kind,
            policy=self.policy,
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
    #: Player id -> their live match that no room plays (an AI game, a quick match) and when
    #: it started (ms); it counts for ``live_match_ms`` after that at most.
    player_matches: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    live_match_ms: int = 7_200_000
    max_code_attempts: int = MAX_CODE_ATTEMPTS


def check_free(context: LobbyContext, player_id: str, room: str = "") -> None:
    """One live match per player (docs/online-play.md): refuse a player who sits in another
    waiting or playing room than ``room``, waits in a queue, or plays an AI game or quick match.
    A player's moves name no match, so a second live match would take the moves of the first."""
    elsewhere = context.player_rooms.get(player_id)
    if elsewhere is not None and elsewhere != room:
        raise LobbyError(LobbyErrorCode.ALREADY_IN_ROOM, f"already in room {elsewhere}")
    queue = context.player_queues.get(player_id)
    if queue is not None:
        raise LobbyError(LobbyErrorCode.ALREADY_QUEUED, f"waiting in {queue}")
    match = live_match(context, player_id)
    if match is not None:
        raise LobbyError(LobbyErrorCode.ALREADY_IN_MATCH, f"playing match {match}")


def live_match(context: LobbyContext, player_id: str) -> str | None:
    found = context.player_matches.get(player_id)
    if found is None or context.now_ms - found[1] >= context.live_match_ms:
        return None
    return found[0]
