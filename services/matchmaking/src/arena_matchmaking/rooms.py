"""A room stream (``room-<CODE>``): pure decide and apply.

One stream per code holds the code's rooms over time: a room opens with its game's seats (the
game's ``SeatPlan``: Maths Warriors and the Maze 2, Matrix Games 8), players join over the
WebSocket and take the lowest free seat, the host may fill empty seats with one of the plan's AI
levels or scripted policies (FillSeat) or start (StartRoom: the rest get the plan's default fill);
the room starts its match by itself when its last seat is taken (a two-seat game: when the second
player joins, as always). Then it plays a match, is finished, maybe plays rematches, and closes;
then the code is free for the next room. A finished room with no rematch pending and nobody
connected is *idle*: the event that made it so is followed by ``RoomIdle{deadline_ms}``, and any
later event that ends the idleness clears the deadline. Timers carry the deadline they were armed
for; another one changes nothing.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from arena_games.contract import pack
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_matchmaking.context import LobbyContext, Player, check_free
from arena_matchmaking.errors import LobbyError
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.ids import match_id
from arena_matchmaking.ranked import check_ranked
from arena_matchmaking.room_settings import exclusive, game_of, side_by_side

#: Seats of a room whose settings say none (a record written before the game seam).
LEGACY_SEATS = 2
#: A side-by-side room (a one-seat game in mode room): 2 to 8 players, each with a
#: game of their own started together.
SIDE_BY_SIDE_PLAYERS = 8
SIDE_BY_SIDE_MIN = 2
#: A side-by-side room's RoomMatchFinished: every player's game has ended.
ALL_ENDED = "all_ended"


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
    #: The lobby's seats, seat 1 (the host) first: a person, a filled seat (its ``policy``) or
    #: None (free). Kept as they were at the start while the room plays and after.
    slots: tuple[Player | None, ...] = ()
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
    #: A side-by-side room: the players' games that have ended, the settings its games were
    #: started with, and each seated player's missed rounds (a late joiner's), seat order.
    games_ended: frozenset[str] = frozenset()
    played: pb.RoomSettings | None = None
    missed: tuple[int, ...] = ()

    @property
    def is_open(self) -> bool:
        return self.status is not RoomStatus.FREE

    @property
    def players(self) -> tuple[Player, ...]:
        """The people seated, the host first."""
        return tuple(p for p in self.slots if p is not None and p.person)

    @property
    def guest(self) -> Player | None:
        """The first person seated after the host (a two-seat room's second player)."""
        return next(iter(self.players[1:]), None)

    def free_seats(self) -> tuple[int, ...]:
        return tuple(n for n, p in enumerate(self.slots, 1) if p is None)

    @property
    def exclusive(self) -> bool:
        """A seat here counts as a player's one live match (the game's ``exclusive``)."""
        return self.settings is None or exclusive(self.settings)

    @property
    def side_by_side(self) -> bool:
        """Each player has a game of their own (a one-seat game in mode room)."""
        return self.settings is not None and side_by_side(self.settings)

    def games(self) -> dict[str, str]:
        """A side-by-side room's games: match id -> player id."""
        return {player_game(self.match_id, p.player_id): p.player_id for p in self.seats}

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


#: Room's fields: what :func:`_changed` may be given.
_FIELDS = frozenset(f.name for f in fields(Room))


def _changed(room: Room, **changes: Any) -> Room:
    """``dataclasses.replace(room, **changes)``, without its cost: replace reads every field
    through getattr and the frozen ``__init__`` sets each through ``object.__setattr__``, some
    forty calls a copy, and every event of a room is folded three times (its decision, the
    stream runner, the lobby directory), a copy or two each. A room has no ``__post_init__``."""
    if not _FIELDS.issuperset(changes):
        raise TypeError(f"Room has no field {sorted(set(changes) - _FIELDS)}")
    copy = object.__new__(Room)
    state = copy.__dict__
    state.update(room.__dict__)
    state.update(changes)
    return copy


def initial_room(code: str) -> Room:
    return Room(code)


# -- apply ----------------------------------------------------------------------------------


def apply_room(room: Room, event: Message) -> Room:
    """Fold one event payload of a room stream."""
    match event:
        case pb.RoomOpened():
            host = Player.from_proto(event.host)
            seats = event.settings.seats or LEGACY_SEATS
            if side_by_side(event.settings):
                seats = SIDE_BY_SIDE_PLAYERS
            room = Room(
                code=room.code,
                status=RoomStatus.WAITING,
                host=host,
                slots=(host, *([None] * (seats - 1))),
                settings=event.settings,
                request_id=event.request_id,
                waiting_deadline_ms=event.waiting_deadline_ms,
                connected=frozenset({host.player_id}),
                closed=room.closed,
            )
        case pb.RoomJoined():
            guest = Player.from_proto(event.player)
            room = _changed(
                _seat(room, room.free_seats()[0], guest),
                connected=room.connected | {guest.player_id},
            )
        case pb.RoomSeatFilled():
            room = _seat(room, event.seat, _filled(event.seat, event.policy))
        case pb.RoomLeft():
            slots = tuple(
                None if p is not None and p.player_id == event.player_id else p for p in room.slots
            )
            room = _changed(room, slots=slots, connected=room.connected - {event.player_id})
        case pb.RoomMatchStarted():
            room = _changed(
                room,
                status=RoomStatus.PLAYING,
                match_id=event.match_id,
                seats=tuple(Player.from_proto(p) for p in event.seats),
                matches=event.number,
                rematch_from="",
                games_ended=frozenset(),
                played=event.settings,
                missed=(0,) * len(event.seats),
            )
        case pb.RoomGameStarted():
            room = _changed(
                room,
                seats=(*room.seats, Player.from_proto(event.player)),
                missed=tuple(event.missed),
            )
        case pb.RoomGameEnded():
            room = _changed(room, games_ended=room.games_ended | {event.match_id})
        case pb.RoomMatchFinished():
            room = _changed(room, status=RoomStatus.FINISHED)
        case pb.RoomPresenceChanged():
            connected = (
                room.connected | {event.player_id}
                if event.connected
                else room.connected - {event.player_id}
            )
            room = _changed(room, connected=connected)
        case pb.RoomIdle():
            return _changed(room, idle_deadline_ms=event.deadline_ms)
        case pb.RematchRequested():
            room = _changed(room, rematch_from=event.player_id)
        case pb.RematchAccepted():
            pass  # RoomMatchStarted follows in the same batch
        case pb.RematchDeclined():
            room = _changed(room, rematch_from="")
        case pb.RoomClosed():
            return Room(room.code, closed=room.closed + 1)
        case _:
            return room
    if room.idle_deadline_ms is None or room.idle:
        return room
    return _changed(room, idle_deadline_ms=None)


def _seat(room: Room, number: int, player: Player) -> Room:
    slots = list(room.slots)
    slots[number - 1] = player
    room = _changed(room, slots=tuple(slots))
    return room if room.free_seats() else _changed(room, waiting_deadline_ms=None)


def _filled(seat: int, policy: str) -> Player:
    """The player of a seat filled with ``policy``: an id unique in the match."""
    return Player(f"{policy}-{seat}", policy, policy=policy)


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
        case pb.FillSeat():
            _hosting(room, command.player_id)
            return _fill(room, command.seat, command.policy, stream, command_id)
        case pb.StartRoom():
            _hosting(room, command.player_id)
            if room.side_by_side:
                return _start_side_by_side(room, context, stream, command_id)
            return _start(room, stream, command_id)
        case pb.LeaveRoom():
            _seated(room, command.player_id)
            if room.status is RoomStatus.WAITING:
                if room.host is not None and room.host.player_id != command.player_id:
                    return [pb.RoomLeft(player_id=command.player_id)]
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
            if room.side_by_side:
                return _game_ended(room, command)
            # Match events are read at least once: a repeat, or the end of a match this code's
            # earlier room played, changes nothing.
            if room.status is not RoomStatus.PLAYING or command.match_id != room.match_id:
                return []
            winner_id = command.winner_player_id
            if not winner_id and 0 < command.winner <= len(room.seats):
                winner_id = room.seats[command.winner - 1].player_id
            return [
                pb.RoomMatchFinished(
                    match_id=command.match_id,
                    winner=command.winner,
                    reason=command.reason,
                    winner_player_id=winner_id,
                    seats=command.seats,
                )
            ]
        case pb.RematchRequest():
            _rematchable(room, command.player_id)
            if room.exclusive:
                check_free(context, command.player_id, room.code)
            if room.rematch_from:
                raise LobbyError(Code.REMATCH_ALREADY_REQUESTED, "a rematch is already asked for")
            return [pb.RematchRequested(player_id=command.player_id)]
        case pb.RematchAccept():
            _answerable(room, command.player_id)
            for seated in room.seats:  # any may have started another game meanwhile
                if seated.person and room.exclusive:
                    check_free(context, seated.player_id, room.code)
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
    if room.has_player(player.player_id):
        raise LobbyError(Code.ALREADY_IN_ROOM, "already seated in this room")
    if room.settings is not None and not guests_welcome(room.settings, player):
        raise LobbyError(Code.GUESTS_NOT_ALLOWED, "the host lets only accounts join")
    if room.side_by_side and room.status is RoomStatus.PLAYING and room.free_seats():
        return _join_late(room, player, context)
    if room.status is not RoomStatus.WAITING or not room.free_seats():
        raise LobbyError(Code.ROOM_FULL, f"room {room.code} has no free seat")
    plan = game_of(room.settings).seats if room.settings is not None else None
    if plan is not None and not room.side_by_side and len(room.players) >= plan.max_humans:
        raise LobbyError(Code.ROOM_FULL, f"room {room.code} seats {plan.max_humans} people")
    if room.exclusive:
        check_free(context, player.player_id, room.code)
    events: list[Message] = [pb.RoomJoined(player=player.to_proto())]
    return _started_if_full(room, events, stream, command_id)


def _fill(room: Room, seat: int, policy: str, stream: str, command_id: str) -> list[Message]:
    """The host fills an empty seat (0: the lowest) with one of the plan's AI levels or
    scripted policies; the match starts if that was the last free seat."""
    assert room.settings is not None
    plan = game_of(room.settings).seats
    if policy not in (*plan.ai_levels, *plan.scripted_policies):
        offered = ", ".join((*plan.ai_levels, *plan.scripted_policies)) or "none"
        raise LobbyError(Code.INVALID_POLICY, f"no seat policy {policy!r} (offered: {offered})")
    free = room.free_seats()
    seat = seat or (free[0] if free else 0)
    if not 1 <= seat <= len(room.slots):
        raise LobbyError(Code.INVALID_SEAT, f"no seat {seat} in 1..{len(room.slots)}")
    if seat not in free:
        raise LobbyError(Code.SEAT_TAKEN, f"seat {seat} is taken")
    if len(room.players) + len(free) - 1 < plan.min_humans:
        raise LobbyError(Code.SEATS_EMPTY, f"{plan.min_humans} seats are for people")
    events: list[Message] = [pb.RoomSeatFilled(seat=seat, policy=policy)]
    return _started_if_full(room, events, stream, command_id)


def _start(room: Room, stream: str, command_id: str) -> list[Message]:
    """The host starts now: every free seat gets the plan's default fill."""
    assert room.settings is not None
    plan = game_of(room.settings).seats
    if len(room.players) < plan.min_humans:
        raise LobbyError(Code.SEATS_EMPTY, f"{plan.min_humans} people must sit to start")
    free = room.free_seats()
    if free and plan.default_fill is None:
        raise LobbyError(Code.SEATS_EMPTY, f"every seat must be taken: {len(free)} free")
    fill = plan.default_fill or ""
    events: list[Message] = [pb.RoomSeatFilled(seat=seat, policy=fill) for seat in free]
    return _started_if_full(room, events, stream, command_id)


def _started_if_full(
    room: Room, events: list[Message], stream: str, command_id: str
) -> list[Message]:
    """``events``, and the match's start if they take the room's last seat (a side-by-side
    room starts when its host says)."""
    after = apply_all(room, events)
    if after.free_seats() or room.side_by_side:
        return events
    seats = tuple(p for p in after.slots if p is not None)
    return [*events, _match_started(after, seats, stream, command_id)]


def _start_side_by_side(
    room: Room, context: LobbyContext, stream: str, command_id: str
) -> list[Message]:
    """Every player's game starts now, with the same settings: the seeds drawn for the room from
    the StartRoom's id and the room's clock (the game's ``lobby.room_start``)."""
    assert room.settings is not None
    players = room.players
    if len(players) < SIDE_BY_SIDE_MIN:
        raise LobbyError(Code.SEATS_EMPTY, f"{SIDE_BY_SIDE_MIN} players at least to start")
    game = game_of(room.settings)
    start = getattr(game.lobby, "room_start", None)
    settings = pb.RoomSettings()
    settings.CopyFrom(room.settings)
    if start is not None:
        played = game.wire.settings()
        room.settings.settings.Unpack(played)
        digest = hashlib.sha256(f"room-seed:{command_id}".encode()).digest()
        seed = int.from_bytes(digest[:8], "big") >> 1
        settings.settings.CopyFrom(pack(start(played, seed, context.now_ms)))
    started = _match_started(room, players, stream, command_id)
    started.settings.CopyFrom(settings)
    return [started]


def _join_late(room: Room, player: Player, context: LobbyContext) -> list[Message]:
    """A player joins a side-by-side room already playing: their game starts now with the
    room's settings and the rounds already opened counted lost (the game's ``late_join``)."""
    assert room.played is not None
    game = game_of(room.played)
    late = getattr(game.lobby, "late_join", None)
    played = game.wire.settings()
    room.played.settings.Unpack(played)
    joined = late(played, context.now_ms) if late is not None else None
    if joined is None:
        raise LobbyError(Code.ROOM_FULL, f"room {room.code} has no round left to join")
    settings = pb.RoomSettings()
    settings.CopyFrom(room.played)
    settings.settings.CopyFrom(pack(joined))
    seats = (*room.seats, player)
    missed = (*room.missed, int(getattr(joined, "missed_rounds", 0)))
    return [
        pb.RoomJoined(player=player.to_proto()),
        pb.RoomGameStarted(
            player=player.to_proto(),
            match_id=player_game(room.match_id, player.player_id),
            settings=settings,
            players=[p.player_id for p in seats],
            match_ids=[player_game(room.match_id, p.player_id) for p in seats],
            missed=missed,
        ),
    ]


def _game_ended(room: Room, command: pb.RoomMatchEnded) -> list[Message]:
    """One player's game of a side-by-side room ended; the room is finished with the last."""
    games = room.games()
    player = games.get(command.match_id)
    if room.status is not RoomStatus.PLAYING or player is None:
        return []
    if command.match_id in room.games_ended:
        return []
    ended: list[Message] = [pb.RoomGameEnded(match_id=command.match_id, player_id=player)]
    if room.games_ended | {command.match_id} >= set(games):
        ended.append(pb.RoomMatchFinished(match_id=room.match_id, reason=ALL_ENDED))
    return ended


def guests_welcome(settings: pb.RoomSettings, player: Player) -> bool:
    """A guest joins unless the game's settings have ``guests_allowed`` and it is off (the
    host's choice)."""
    if player.kind != pb.PLAYER_KIND_GUEST or not settings.HasField("settings"):
        return True
    played = game_of(settings).wire.settings()
    settings.settings.Unpack(played)
    field = played.DESCRIPTOR.fields_by_name.get("guests_allowed")
    return field is None or bool(played.guests_allowed)  # type: ignore[attr-defined]


def player_game(room_match: str, player_id: str) -> str:
    """The match id of a player's game in a side-by-side room's round of play."""
    return uuid.uuid5(_SIDE_BY_SIDE, f"{room_match}\x00{player_id}").hex


_SIDE_BY_SIDE = uuid.UUID("0b5b1d0e-5d0a-4f55-8d7e-2f3c6e9a1c47")


def _hosting(room: Room, player_id: str) -> None:
    _seated(room, player_id)
    if room.host is None or room.host.player_id != player_id:
        raise LobbyError(Code.NOT_HOST, "only the host fills seats and starts the room")
    if room.status is not RoomStatus.WAITING:
        raise LobbyError(Code.ROOM_NOT_WAITING, f"room {room.code} is {room.status}")


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
    if room.side_by_side:
        raise LobbyError(Code.REMATCH_NOT_AVAILABLE, "a side-by-side room plays once")
    if room.status is not RoomStatus.FINISHED:
        raise LobbyError(Code.REMATCH_NOT_AVAILABLE, "the room's match is not over")


def _answerable(room: Room, player_id: str) -> None:
    _rematchable(room, player_id)
    if not room.rematch_from:
        raise LobbyError(Code.NO_REMATCH_REQUESTED, "nobody asked for a rematch")
    if room.rematch_from == player_id:
        raise LobbyError(Code.CANNOT_ANSWER_OWN_REMATCH, "the opponent answers a rematch request")
