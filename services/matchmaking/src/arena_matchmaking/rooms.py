"""A room stream (``room-<CODE>``): pure decide and apply.

One stream per code holds the code's rooms over time: a room opens, waits for a second player,
plays a match, is finished, maybe plays rematches, and closes; then the code is free for the next
room. A finished room with no rematch pending and nobody connected is *idle*: the event that made
it so is followed by ``RoomIdle{deadline_ms}``, and any later event that ends the idleness
clears the deadline. Timers carry the deadline they were armed for; another one changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_matchmaking.context import LobbyContext, Player
from arena_matchmaking.errors import LobbyError
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.ids import match_id
from arena_matchmaking.ranked import check_ranked


class RoomStatus(StrEnum):
    #: Never opened, or closed: the code is free.
    FREE = "free"
    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"


class CloseReason(StrEnum):
    EXPIRED = "expired"
    IDLE = "idle"
    HOST_LEFT = "host_left"
    PLAYER_LEFT = "player_left"


@dataclass(frozen=True)
class Room:
    code: str
    status: RoomStatus = RoomStatus.FREE
    host: Player | None = None
    guest: Player | None = None
    settings: pb.RoomSettings | None = None
    request_id: str = ""
    waiting_deadline_ms: int | None = None
    #: The room's current (or last) match and its seats, seat 1 first.
    match_id: str = ""
    seats: tuple[Player, ...] = ()
    matches: int = 0
    #: Player id of a pending rematch request.
    rematch_from: str = ""
    connected: frozenset[str] = frozenset()
    idle_deadline_ms: int | None = None
    #: How many rooms this code has held and closed.
    closed: int = 0

    @property
    def is_open(self) -> bool:
        return self.status is not RoomStatus.FREE

    @property
    def players(self) -> tuple[Player, ...]:
        return tuple(p for p in (self.host, self.guest) if p is not None)

    def has_player(self, player_id: str) -> bool:
        return any(p.player_id == player_id for p in self.players)

    @property
    def idle(self) -> bool:
        return self.status is RoomStatus.FINISHED and not self.rematch_from and not self.connected

    def deadline(self) -> tuple[str, int] | None:
        """The timer this room waits for: ("waiting" | "idle", deadline_ms), or None."""
        if self.status is RoomStatus.WAITING and self.waiting_deadline_ms is not None:
            return "waiting", self.waiting_deadline_ms
        if self.status is RoomStatus.FINISHED and self.idle_deadline_ms is not None:
            return "idle", self.idle_deadline_ms
        return None


def initial_room(code: str) -> Room:
    return Room(code)


# -- apply ----------------------------------------------------------------------------------


def apply_room(room: Room, event: Message) -> Room:
    """Fold one event payload of a room stream."""
    match event:
        case pb.RoomOpened():
            host = Player.from_proto(event.host)
            room = Room(
                code=room.code,
                status=RoomStatus.WAITING,
                host=host,
                settings=event.settings,
                request_id=event.request_id,
                waiting_deadline_ms=event.waiting_deadline_ms,
                connected=frozenset({host.player_id}),
                closed=room.closed,
            )
        case pb.RoomJoined():
            guest = Player.from_proto(event.player)
            room = replace(
                room,
                guest=guest,
                waiting_deadline_ms=None,
                connected=room.connected | {guest.player_id},
            )
        case pb.RoomMatchStarted():
            room = replace(
                room,
                status=RoomStatus.PLAYING,
                match_id=event.match_id,
                seats=tuple(Player.from_proto(p) for p in event.seats),
                matches=event.number,
                rematch_from="",
            )
        case pb.RoomMatchFinished():
            room = replace(room, status=RoomStatus.FINISHED)
        case pb.RoomPresenceChanged():
            connected = (
                room.connected | {event.player_id}
                if event.connected
                else room.connected - {event.player_id}
            )
            room = replace(room, connected=connected)
        case pb.RoomIdle():
            return replace(room, idle_deadline_ms=event.deadline_ms)
        case pb.RematchRequested():
            room = replace(room, rematch_from=event.player_id)
        case pb.RematchAccepted():
            pass  # RoomMatchStarted follows in the same batch
        case pb.RematchDeclined():
            room = replace(room, rematch_from="")
        case pb.RoomClosed():
            return Room(room.code, closed=room.closed + 1)
        case _:
            return room
    return room if room.idle else replace(room, idle_deadline_ms=None)


def apply_all(room: Room, events: Sequence[Message]) -> Room:
    for event in events:
        room = apply_room(room, event)
    return room


# -- decide ---------------------------------------------------------------------------------


def decide_room(
    room: Room, command: Message, context: LobbyContext, *, stream: str, command_id: str
) -> list[Message] | Rejection:
    """The events of ``command`` on ``room``, or its rejection. Pure."""
    try:
        events = _decide(room, command, context, stream, command_id)
    except LobbyError as exc:
        return exc.rejection()
    after = apply_all(room, events)
    if events and after.idle and after.idle_deadline_ms is None:
        events.append(pb.RoomIdle(deadline_ms=context.now_ms + context.idle_ms))
    return events


def _decide(
    room: Room, command: Message, context: LobbyContext, stream: str, command_id: str
) -> list[Message]:
    match command:
        case pb.OpenRoom():
            if room.is_open:
                raise LobbyError(Code.CODE_TAKEN, f"room {room.code} is open")
            _check_player(command.host.player_id)
            return [
                pb.RoomOpened(
                    code=room.code,
                    host=command.host,
                    settings=command.settings,
                    request_id=command.request_id,
                    waiting_deadline_ms=context.now_ms + context.waiting_ms,
                    create_command_id=command.create_command_id,
                )
            ]
        case pb.JoinRoom():
            return _join(room, Player.from_proto(command.player), context, stream, command_id)
        case pb.LeaveRoom():
            _seated(room, command.player_id)
            if room.status is RoomStatus.WAITING:
                return [pb.RoomClosed(reason=CloseReason.HOST_LEFT)]
            if room.status is RoomStatus.PLAYING:
                raise LobbyError(Code.MATCH_IN_PROGRESS, "the match decides how a player leaves")
            return [pb.RoomClosed(reason=CloseReason.PLAYER_LEFT)]
        case pb.RoomPresence():
            _seated(room, command.player_id)
            if (command.player_id in room.connected) == command.connected:
                return []
            return [
                pb.RoomPresenceChanged(player_id=command.player_id, connected=command.connected)
            ]
        case pb.RoomMatchEnded():
            # Match events are read at least once: a repeat, or the end of a match this code's
            # earlier room played, changes nothing.
            if room.status is not RoomStatus.PLAYING or command.match_id != room.match_id:
                return []
            return [
                pb.RoomMatchFinished(
                    match_id=command.match_id,
                    winner=command.winner,
                    reason=command.reason,
                    winner_player_id=command.winner_player_id,
                )
            ]
        case pb.RematchRequest():
            _rematchable(room, command.player_id)
            if room.rematch_from:
                raise LobbyError(Code.REMATCH_ALREADY_REQUESTED, "a rematch is already asked for")
            return [pb.RematchRequested(player_id=command.player_id)]
        case pb.RematchAccept():
            _answerable(room, command.player_id)
            return [
                pb.RematchAccepted(player_id=command.player_id),
                _match_started(room, tuple(reversed(room.seats)), stream, command_id),
            ]
        case pb.RematchDecline():
            _answerable(room, command.player_id)
            return [pb.RematchDeclined(player_id=command.player_id)]
        case pb.RoomTimer():
            if room.deadline() == (_TIMER_KINDS.get(command.kind), command.deadline_ms):
                reason = (
                    CloseReason.EXPIRED if room.status is RoomStatus.WAITING else CloseReason.IDLE
                )
                return [pb.RoomClosed(reason=reason)]
            return []  # stale: the room moved on since the timer was armed
    raise LobbyError(Code.UNKNOWN_COMMAND, f"a room does not take {type(command).__name__}")


_TIMER_KINDS = {pb.ROOM_TIMER_KIND_WAITING: "waiting", pb.ROOM_TIMER_KIND_IDLE: "idle"}


def _join(
    room: Room, player: Player, context: LobbyContext, stream: str, command_id: str
) -> list[Message]:
    _check_player(player.player_id)
    if not room.is_open:
        raise LobbyError(Code.ROOM_NOT_FOUND, f"no open room {room.code}")
    if room.host is not None and room.settings is not None and room.status is RoomStatus.WAITING:
        check_ranked(room.settings.mode, room.host.to_proto(), player.to_proto())
    if room.host is not None and room.host.player_id == player.player_id:
        raise LobbyError(Code.CANNOT_JOIN_OWN_ROOM, "the host already sits in this room")
    if room.status is not RoomStatus.WAITING:
        if room.has_player(player.player_id):
            raise LobbyError(Code.ALREADY_IN_ROOM, "already seated in this room")
        raise LobbyError(Code.ROOM_FULL, f"room {room.code} has two players")
    elsewhere = context.player_rooms.get(player.player_id)
    if elsewhere is not None and elsewhere != room.code:
        raise LobbyError(Code.ALREADY_IN_ROOM, f"already in room {elsewhere}")
    queue = context.player_queues.get(player.player_id)
    if queue is not None:
        raise LobbyError(Code.ALREADY_QUEUED, f"waiting in {queue}")
    assert room.host is not None
    return [
        pb.RoomJoined(player=player.to_proto()),
        _match_started(room, (room.host, player), stream, command_id),
    ]


def _match_started(
    room: Room, seats: tuple[Player, ...], stream: str, command_id: str
) -> pb.RoomMatchStarted:
    return pb.RoomMatchStarted(
        match_id=match_id(stream, command_id),
        seats=[p.to_proto() for p in seats],
        number=room.matches + 1,
        settings=room.settings,
        code=room.code,
    )


def _check_player(player_id: str) -> None:
    if not player_id:
        raise LobbyError(Code.INVALID_PLAYER, "no player id")


def _seated(room: Room, player_id: str) -> None:
    if not room.is_open:
        raise LobbyError(Code.ROOM_NOT_FOUND, f"no open room {room.code}")
    if not room.has_player(player_id):
        raise LobbyError(Code.NOT_IN_ROOM, f"{player_id or 'nobody'} is not in room {room.code}")


def _rematchable(room: Room, player_id: str) -> None:
    _seated(room, player_id)
    if room.status is not RoomStatus.FINISHED:
        raise LobbyError(Code.REMATCH_NOT_AVAILABLE, "the room's match is not over")


def _answerable(room: Room, player_id: str) -> None:
    _rematchable(room, player_id)
    if not room.rematch_from:
        raise LobbyError(Code.NO_REMATCH_REQUESTED, "nobody asked for a rematch")
    if room.rematch_from == player_id:
        raise LobbyError(Code.CANNOT_ANSWER_OWN_REMATCH, "the opponent answers a rematch request")
