"""Random command sequences against rooms and queues: invariants that every decision keeps."""

from __future__ import annotations

from arena_matchmaking.context import LobbyContext, Player
from arena_matchmaking.queues import apply_queue, decide_queue, initial_queue
from arena_matchmaking.room_settings import default_settings
from arena_matchmaking.rooms import Room, RoomStatus, apply_all, decide_room, initial_room
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.streams import Rejection
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

PLAYERS = ("p_a", "p_b", "p_c")
QUEUE = "queue-maths-warriors-casual"


def room_commands(room: Room) -> st.SearchStrategy[Message]:
    """Any room command, but mostly those that move this room along its life."""
    who = st.sampled_from(PLAYERS)
    seated = st.sampled_from([p.player_id for p in room.players] or list(PLAYERS))
    deadlines = st.sampled_from(
        [d for d in (room.waiting_deadline_ms, room.idle_deadline_ms, 5) if d is not None]
    )
    kinds = st.sampled_from([pb.ROOM_TIMER_KIND_WAITING, pb.ROOM_TIMER_KIND_IDLE])

    def presence(players: st.SearchStrategy[str]) -> st.SearchStrategy[Message]:
        return st.builds(
            lambda p, c: pb.RoomPresence(player_id=p, connected=c), players, st.booleans()
        )

    noise = st.one_of(
        who.map(
            lambda p: pb.OpenRoom(host=pb.LobbyPlayer(player_id=p), settings=default_settings())
        ),
        who.map(lambda p: pb.JoinRoom(player=pb.LobbyPlayer(player_id=p))),
        who.map(lambda p: pb.LeaveRoom(player_id=p)),
        presence(who),
        st.just(pb.RoomMatchEnded(match_id=room.match_id, winner=1, reason="forfeit")),
        who.map(lambda p: pb.RematchRequest(player_id=p)),
        who.map(lambda p: pb.RematchAccept(player_id=p)),
        who.map(lambda p: pb.RematchDecline(player_id=p)),
        st.builds(lambda k, d: pb.RoomTimer(kind=k, deadline_ms=d), kinds, deadlines),
    )
    focused = {
        RoomStatus.FREE: noise,
        RoomStatus.WAITING: who.map(lambda p: pb.JoinRoom(player=pb.LobbyPlayer(player_id=p))),
        RoomStatus.PLAYING: st.one_of(
            presence(seated),
            st.just(pb.RoomMatchEnded(match_id=room.match_id, winner=1, reason="forfeit")),
        ),
        RoomStatus.FINISHED: st.one_of(
            seated.map(lambda p: pb.RoomPresence(player_id=p, connected=False)),
            presence(seated),
            seated.map(lambda p: pb.RematchRequest(player_id=p)),
            seated.map(lambda p: pb.RematchAccept(player_id=p)),
            seated.map(lambda p: pb.RematchDecline(player_id=p)),
        ),
    }[room.status]
    return st.one_of(focused, focused, focused, noise)


def check(room: Room) -> None:
    if room.status is RoomStatus.FREE:
        assert room.players == () and room.deadline() is None
    if room.status is RoomStatus.WAITING:
        assert room.host is not None and room.guest is None
        assert room.waiting_deadline_ms is not None
    if room.status in (RoomStatus.PLAYING, RoomStatus.FINISHED):
        assert len(room.seats) == 2 and room.match_id
        assert {p.player_id for p in room.seats} == {p.player_id for p in room.players}
    # A finished room has an idle deadline exactly when nobody is there and no rematch waits.
    assert (room.idle_deadline_ms is not None) == room.idle
    assert room.connected <= {p.player_id for p in room.players}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_rooms_keep_their_invariants(data: st.DataObject) -> None:
    room = initial_room("ABCDE")
    for step in range(data.draw(st.integers(1, 30))):
        command = data.draw(room_commands(room))
        ctx = LobbyContext(now_ms=1000 * step)
        decided = decide_room(room, command, ctx, stream="room-ABCDE", command_id=f"c{step}")
        if isinstance(decided, Rejection):
            continue
        room = apply_all(room, decided)
        check(room)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from((*PLAYERS, "p_d"))), max_size=30))
def test_queue_pairs_in_arrival_order(steps: list[tuple[bool, str]]) -> None:
    queue = initial_queue(QUEUE)
    waiting: list[str] = []  # the model: who waits, in arrival order
    pairs: list[list[str]] = []
    for number, (join, player) in enumerate(steps):
        command: Message = (
            pb.Enqueue(player=Player(player).to_proto(), game="maths-warriors")
            if join
            else pb.Dequeue(player_id=player)
        )
        decided = decide_queue(queue, command, LobbyContext(now_ms=0), command_id=f"q{number}")
        if isinstance(decided, Rejection):
            assert (player in waiting) == join  # refused: already waiting, or not waiting
            continue
        for event in decided:
            queue = apply_queue(queue, event)
            if isinstance(event, pb.PlayersPaired):
                pairs.append([p.player_id for p in event.players])
        if join:
            waiting.append(player)
            if len(waiting) == 2:
                assert pairs[-1] == waiting
                waiting = []
        else:
            waiting.remove(player)
        assert [p.player_id for p in queue.waiting] == waiting
