"""Rooms, pure: every refusal, the lifecycle of a code, rematches, idle and waiting timers."""

from __future__ import annotations

import dataclasses

import pytest
from arena_games.maths_warriors.lobby import settings_in
from arena_matchmaking.context import LobbyContext, Player
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.ids import match_id
from arena_matchmaking.room_settings import default_settings
from arena_matchmaking.rooms import (
    Room,
    RoomStatus,
    _changed,
    apply_all,
    decide_room,
    initial_room,
)
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

CODE = "K7PQ2"
STREAM = f"room-{CODE}"
HOST = Player("p_host", "Host")
GUEST = Player("p_guest", "Guest")
OTHER = Player("p_other", "Other")
CTX = LobbyContext(now_ms=1_000_000, waiting_ms=300_000, idle_ms=120_000)


def run(room: Room, command: Message, cid: str = "c1", ctx: LobbyContext = CTX) -> list[Message]:
    decided = decide_room(room, command, ctx, stream=STREAM, command_id=cid)
    assert not isinstance(decided, Rejection), decided
    return decided


def refused(room: Room, command: Message, ctx: LobbyContext = CTX) -> str:
    decided = decide_room(room, command, ctx, stream=STREAM, command_id="c-refused")
    assert isinstance(decided, Rejection), decided
    return decided.code


def step(room: Room, command: Message, cid: str = "c1", ctx: LobbyContext = CTX) -> Room:
    return apply_all(room, run(room, command, cid, ctx))


def open_room() -> Room:
    command = pb.OpenRoom(
        request_id="r1", host=HOST.to_proto(), settings=default_settings(), create_command_id="cc"
    )
    return step(initial_room(CODE), command, "cc:open:0")


def playing() -> Room:
    return step(open_room(), pb.JoinRoom(player=GUEST.to_proto()), "join")


def finished() -> Room:
    room = playing()
    return step(room, pb.RoomMatchEnded(match_id=room.match_id, winner=1, reason="all_captured"))


def test_open_records_the_waiting_deadline() -> None:
    room = open_room()
    assert room.status is RoomStatus.WAITING
    assert room.waiting_deadline_ms == CTX.now_ms + CTX.waiting_ms
    assert room.deadline() == ("waiting", CTX.now_ms + CTX.waiting_ms)
    assert room.connected == {HOST.player_id}


def test_an_open_code_is_taken() -> None:
    command = pb.OpenRoom(host=OTHER.to_proto(), settings=default_settings())
    assert refused(open_room(), command) == Code.CODE_TAKEN


def test_join_starts_a_match_with_host_in_seat_one() -> None:
    events = run(open_room(), pb.JoinRoom(player=GUEST.to_proto()), "join")
    joined, started = events
    assert isinstance(joined, pb.RoomJoined) and isinstance(started, pb.RoomMatchStarted)
    assert [s.player_id for s in started.seats] == [HOST.player_id, GUEST.player_id]
    assert started.match_id == match_id(STREAM, "join")
    assert started.code == CODE and started.number == 1
    assert settings_in(started.settings).game_seconds == 720  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("room", "player", "code"),
    [
        (initial_room(CODE), GUEST, Code.ROOM_NOT_FOUND),
        (open_room(), HOST, Code.CANNOT_JOIN_OWN_ROOM),
        (playing(), OTHER, Code.ROOM_FULL),
        (playing(), GUEST, Code.ALREADY_IN_ROOM),
        (finished(), OTHER, Code.ROOM_FULL),
        (open_room(), Player(""), Code.INVALID_PLAYER),
    ],
)
def test_join_refusals(room: Room, player: Player, code: Code) -> None:
    assert refused(room, pb.JoinRoom(player=player.to_proto())) == code


def test_join_refused_to_a_player_seated_in_another_room() -> None:
    ctx = LobbyContext(now_ms=CTX.now_ms, player_rooms={GUEST.player_id: "ZZZZZ"})
    assert refused(open_room(), pb.JoinRoom(player=GUEST.to_proto()), ctx) == Code.ALREADY_IN_ROOM


def test_host_leaving_a_waiting_room_closes_it_and_frees_the_code() -> None:
    room = step(open_room(), pb.LeaveRoom(player_id=HOST.player_id))
    assert room.status is RoomStatus.FREE and room.closed == 1
    reopened = step(room, pb.OpenRoom(host=OTHER.to_proto(), settings=default_settings()))
    assert reopened.status is RoomStatus.WAITING and reopened.host == OTHER


@pytest.mark.parametrize(
    ("room", "player", "code"),
    [
        (initial_room(CODE), HOST, Code.ROOM_NOT_FOUND),
        (open_room(), OTHER, Code.NOT_IN_ROOM),
        (playing(), GUEST, Code.MATCH_IN_PROGRESS),
    ],
)
def test_leave_refusals(room: Room, player: Player, code: Code) -> None:
    assert refused(room, pb.LeaveRoom(player_id=player.player_id)) == code


def test_leaving_a_finished_room_closes_it() -> None:
    events = run(finished(), pb.LeaveRoom(player_id=GUEST.player_id))
    assert events == [pb.RoomClosed(reason="player_left")]


def test_match_end_finishes_the_room_once() -> None:
    room = playing()
    ended = pb.RoomMatchEnded(match_id=room.match_id, winner=2, reason="forfeit")
    after = step(room, ended)
    assert after.status is RoomStatus.FINISHED
    assert run(after, ended) == []  # read again: nothing
    assert run(room, pb.RoomMatchEnded(match_id="someone-else", winner=1)) == []


def test_rematch_accepted_swaps_seats() -> None:
    room = step(finished(), pb.RematchRequest(player_id=HOST.player_id), "req")
    assert room.rematch_from == HOST.player_id
    events = run(room, pb.RematchAccept(player_id=GUEST.player_id), "acc")
    assert isinstance(events[0], pb.RematchAccepted)
    started = events[1]
    assert isinstance(started, pb.RoomMatchStarted)
    assert [s.player_id for s in started.seats] == [GUEST.player_id, HOST.player_id]
    assert started.number == 2 and started.match_id == match_id(STREAM, "acc")
    after = apply_all(room, events)
    assert after.status is RoomStatus.PLAYING and after.rematch_from == ""


def test_rematch_declined_leaves_the_room_finished() -> None:
    room = step(finished(), pb.RematchRequest(player_id=HOST.player_id))
    after = step(room, pb.RematchDecline(player_id=GUEST.player_id))
    assert after.status is RoomStatus.FINISHED and after.rematch_from == ""


@pytest.mark.parametrize(
    ("room", "command", "code"),
    [
        (playing(), pb.RematchRequest(player_id=HOST.player_id), Code.REMATCH_NOT_AVAILABLE),
        (open_room(), pb.RematchRequest(player_id=HOST.player_id), Code.REMATCH_NOT_AVAILABLE),
        (finished(), pb.RematchRequest(player_id=OTHER.player_id), Code.NOT_IN_ROOM),
        (finished(), pb.RematchAccept(player_id=GUEST.player_id), Code.NO_REMATCH_REQUESTED),
        (finished(), pb.RematchDecline(player_id=GUEST.player_id), Code.NO_REMATCH_REQUESTED),
        (initial_room(CODE), pb.RematchRequest(player_id=HOST.player_id), Code.ROOM_NOT_FOUND),
    ],
)
def test_rematch_refusals(room: Room, command: Message, code: Code) -> None:
    assert refused(room, command) == code


def test_rematch_answers_belong_to_the_opponent() -> None:
    room = step(finished(), pb.RematchRequest(player_id=HOST.player_id))
    again = pb.RematchRequest(player_id=GUEST.player_id)
    assert refused(room, again) == Code.REMATCH_ALREADY_REQUESTED
    own = pb.RematchAccept(player_id=HOST.player_id)
    assert refused(room, own) == Code.CANNOT_ANSWER_OWN_REMATCH
    assert refused(room, pb.RematchDecline(player_id=HOST.player_id)) == (
        Code.CANNOT_ANSWER_OWN_REMATCH
    )


def test_unknown_command_is_refused() -> None:
    assert refused(open_room(), pb.Enqueue()) == Code.UNKNOWN_COMMAND


# -- timers -------------------------------------------------------------------------------


def waiting_timer(deadline: int) -> pb.RoomTimer:
    return pb.RoomTimer(kind=pb.ROOM_TIMER_KIND_WAITING, deadline_ms=deadline)


def idle_timer(deadline: int) -> pb.RoomTimer:
    return pb.RoomTimer(kind=pb.ROOM_TIMER_KIND_IDLE, deadline_ms=deadline)


def test_waiting_room_expires_at_its_deadline() -> None:
    room = open_room()
    assert room.waiting_deadline_ms is not None
    assert run(room, waiting_timer(room.waiting_deadline_ms)) == [pb.RoomClosed(reason="expired")]


def test_stale_waiting_timers_change_nothing() -> None:
    room = open_room()
    assert room.waiting_deadline_ms is not None
    assert run(room, waiting_timer(room.waiting_deadline_ms - 1)) == []
    assert run(room, idle_timer(room.waiting_deadline_ms)) == []
    # The room filled up before its timer fired.
    assert run(playing(), waiting_timer(room.waiting_deadline_ms)) == []


def test_finished_room_becomes_idle_only_when_nobody_is_connected() -> None:
    room = finished()
    assert room.idle_deadline_ms is None  # both players still connected
    room = step(room, pb.RoomPresence(player_id=HOST.player_id, connected=False))
    assert room.idle_deadline_ms is None
    later = LobbyContext(now_ms=CTX.now_ms + 5_000, idle_ms=CTX.idle_ms)
    events = run(room, pb.RoomPresence(player_id=GUEST.player_id, connected=False), ctx=later)
    assert events[-1] == pb.RoomIdle(deadline_ms=later.now_ms + later.idle_ms)
    idle = apply_all(room, events)
    assert idle.deadline() == ("idle", later.now_ms + later.idle_ms)
    assert run(idle, idle_timer(later.now_ms + later.idle_ms)) == [pb.RoomClosed(reason="idle")]


def test_a_reconnect_clears_the_idle_deadline_and_makes_its_timer_stale() -> None:
    room = finished()
    for player in (HOST, GUEST):
        room = step(room, pb.RoomPresence(player_id=player.player_id, connected=False))
    deadline = room.idle_deadline_ms
    assert deadline is not None
    back = step(room, pb.RoomPresence(player_id=HOST.player_id, connected=True))
    assert back.idle_deadline_ms is None
    assert run(back, idle_timer(deadline)) == []


def test_a_pending_rematch_keeps_the_room_open() -> None:
    room = step(finished(), pb.RematchRequest(player_id=HOST.player_id))
    for player in (HOST, GUEST):
        room = step(room, pb.RoomPresence(player_id=player.player_id, connected=False))
    assert room.idle_deadline_ms is None
    declined = run(room, pb.RematchDecline(player_id=GUEST.player_id))
    assert isinstance(declined[-1], pb.RoomIdle)


def test_presence_repeats_and_strangers() -> None:
    room = finished()
    assert run(room, pb.RoomPresence(player_id=HOST.player_id, connected=True)) == []
    stranger = pb.RoomPresence(player_id=OTHER.player_id, connected=False)
    assert refused(room, stranger) == Code.NOT_IN_ROOM


def test_join_refused_to_a_queued_player() -> None:
    ctx = LobbyContext(now_ms=CTX.now_ms, player_queues={GUEST.player_id: "queue-x"})
    assert refused(open_room(), pb.JoinRoom(player=GUEST.to_proto()), ctx) == Code.ALREADY_QUEUED


def test_a_room_changed_is_the_room_replace_makes() -> None:
    """``_changed`` stands in for ``dataclasses.replace`` on the fold's hot path: the same
    room, and a misspelt field refused as replace refuses it."""
    room = step(open_room(), pb.JoinRoom(player=GUEST.to_proto()))
    changes = {"status": RoomStatus.FINISHED, "rematch_from": HOST.player_id}
    changed = _changed(room, **changes)
    assert changed == dataclasses.replace(room, **changes)  # type: ignore[arg-type]
    assert vars(changed) == vars(dataclasses.replace(room, **changes))  # type: ignore[arg-type]
    assert room.status is RoomStatus.PLAYING and not room.rematch_from
    with pytest.raises(TypeError):
        _changed(room, statuss=RoomStatus.FREE)
