"""Rooms of any game, pure: N seats from the game's SeatPlan, joins, fills, start, leaving, the
game's settings and seed, queues from the registry and the ``exclusive`` rule (issue 14)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from arena_games.contract import pack, unpack
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mx
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as mz
from arena_matchmaking.context import LobbyContext, Player
from arena_matchmaking.errors import LobbyError
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.ids import queue_stream
from arena_matchmaking.players import decide_player, initial_player
from arena_matchmaking.queues import GAMES, apply_queue, decide_queue, initial_queue
from arena_matchmaking.reactions import follow_ups
from arena_matchmaking.room_settings import checked_settings, with_seed
from arena_matchmaking.rooms import Room, RoomStatus, apply_all, decide_room, initial_room
from arena_runtime.envelope import Command, Event, new_command
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Answer, Rejection
from google.protobuf.message import Message

CODE = "M8TRX"
STREAM = f"room-{CODE}"
HOST = Player("p_host", "Host")
PEOPLE = [Player(f"p_{i}", f"P{i}") for i in range(2, 10)]
CTX = LobbyContext(now_ms=1_000_000)


def settings(game: str, message: Message | None = None, **fields: object) -> pb.RoomSettings:
    given = pb.RoomSettings(game=game, **fields)  # type: ignore[arg-type]
    if message is not None:
        given.settings.CopyFrom(pack(message))
    return given


def decided(
    room: Room, command: Message, cid: str = "c1", ctx: LobbyContext = CTX
) -> list[Message] | Rejection:
    return decide_room(room, command, ctx, stream=STREAM, command_id=cid)


def run(room: Room, command: Message, cid: str = "c1", ctx: LobbyContext = CTX) -> list[Message]:
    events = decided(room, command, cid, ctx)
    assert not isinstance(events, Rejection), events
    return events


def refused(room: Room, command: Message, ctx: LobbyContext = CTX) -> str:
    """The refusal's code; the room is a value, and deciding leaves it as it was."""
    before = repr(room)
    rejection = decided(room, command, "c-refused", ctx)
    assert isinstance(rejection, Rejection), rejection
    assert repr(room) == before
    return rejection.code


def step(room: Room, command: Message, cid: str = "c1", ctx: LobbyContext = CTX) -> Room:
    return apply_all(room, run(room, command, cid, ctx))


def open_room(game: str = "matrix-games", message: Message | None = None) -> Room:
    checked = with_seed(checked_settings(settings(game, message)), "create-1")
    command = pb.OpenRoom(host=HOST.to_proto(), settings=checked, create_command_id="create-1")
    return step(initial_room(CODE), command, "create-1:open:0")


def join(room: Room, who: Player, cid: str = "join") -> Room:
    return step(room, pb.JoinRoom(player=who.to_proto()), cid)


def fill(seat: int, policy: str, by: Player = HOST) -> pb.FillSeat:
    return pb.FillSeat(player_id=by.player_id, seat=seat, policy=policy)


def start(by: Player = HOST) -> pb.StartRoom:
    return pb.StartRoom(player_id=by.player_id)


def started(events: list[Message]) -> pb.RoomMatchStarted:
    assert isinstance(events[-1], pb.RoomMatchStarted), events
    return events[-1]


# -- a Matrix Games room: eight seats --------------------------------------------------------


def test_a_matrix_room_has_eight_seats_and_waits_for_its_host() -> None:
    room = open_room()
    assert room.status is RoomStatus.WAITING and len(room.slots) == 8
    assert room.free_seats() == tuple(range(2, 9))
    room = join(room, PEOPLE[0])
    assert room.status is RoomStatus.WAITING  # eight seats: a second player starts nothing
    assert room.slots[1] == PEOPLE[0] and room.players == (HOST, PEOPLE[0])


def test_the_host_fills_a_seat_with_any_scripted_policy_then_starts() -> None:
    room = join(open_room(), PEOPLE[0])
    for seat, policy in ((3, "tit-for-tat"), (5, "always-first")):
        events = run(room, fill(seat, policy))
        assert events == [pb.RoomSeatFilled(seat=seat, policy=policy)]
        room = apply_all(room, events)
    events = run(room, start(), "start")
    match = started(events)
    assert events[:-1] == [  # the free seats, default-filled
        pb.RoomSeatFilled(seat=seat, policy="counter") for seat in (4, 6, 7, 8)
    ]
    assert [s.player_id for s in match.seats][:3] == ["p_host", "p_2", "tit-for-tat-3"]
    assert [s.policy for s in match.seats] == [
        "",
        "",
        "tit-for-tat",
        "counter",
        "always-first",
        "counter",
        "counter",
        "counter",
    ]
    assert apply_all(room, events).status is RoomStatus.PLAYING


def test_fill_seat_zero_takes_the_lowest_free_seat() -> None:
    events = run(open_room(), fill(0, "fixed-pick"))
    assert events == [pb.RoomSeatFilled(seat=2, policy="fixed-pick")]


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (fill(3, "minimax"), Code.INVALID_POLICY),  # not one of the plan's five
        (fill(3, "hard"), Code.INVALID_POLICY),  # Maths Warriors' AI level, not Matrix's
        (fill(9, "counter"), Code.INVALID_SEAT),
        (fill(1, "counter"), Code.SEAT_TAKEN),  # the host's
        (fill(2, "counter"), Code.SEAT_TAKEN),  # a player's
        (fill(3, "counter", by=PEOPLE[0]), Code.NOT_HOST),
        (start(by=PEOPLE[0]), Code.NOT_HOST),
        (start(by=PEOPLE[5]), Code.NOT_IN_ROOM),
    ],
)
def test_bad_fills_and_starts_are_refused_and_change_nothing(command: Message, code: str) -> None:
    assert refused(join(open_room(), PEOPLE[0]), command) == code


def test_a_full_room_starts_itself_and_refuses_the_ninth() -> None:
    room = open_room()
    for i, who in enumerate(PEOPLE[:6]):
        room = join(room, who, f"join-{i}")
    assert room.status is RoomStatus.WAITING
    events = run(room, pb.JoinRoom(player=PEOPLE[6].to_proto()), "join-last")
    match = started(events)
    assert len(match.seats) == 8 and all(not s.policy for s in match.seats)
    room = apply_all(room, events)
    assert refused(room, pb.JoinRoom(player=PEOPLE[7].to_proto())) == Code.ROOM_FULL
    assert refused(room, fill(0, "counter")) == Code.ROOM_NOT_WAITING


def test_filling_the_last_free_seat_starts_the_match() -> None:
    room = open_room()
    for seat in range(2, 8):
        room = step(room, fill(seat, "counter"), f"fill-{seat}")
    match = started(run(room, fill(8, "always-second")))
    assert match.seats[-1].policy == "always-second"


def test_a_player_leaving_a_waiting_room_frees_their_seat() -> None:
    room = join(join(open_room(), PEOPLE[0], "j1"), PEOPLE[1], "j2")
    events = run(room, pb.LeaveRoom(player_id=PEOPLE[0].player_id))
    assert events == [pb.RoomLeft(player_id=PEOPLE[0].player_id)]
    room = apply_all(room, events)
    assert room.slots[1] is None and room.status is RoomStatus.WAITING
    assert PEOPLE[0].player_id not in room.connected
    room = join(room, PEOPLE[2], "j3")  # the lowest free seat again
    assert room.slots[1] == PEOPLE[2]


def test_the_host_leaving_closes_the_room() -> None:
    room = join(open_room(), PEOPLE[0])
    events = run(room, pb.LeaveRoom(player_id=HOST.player_id))
    assert events == [pb.RoomClosed(reason="host_left")]
    assert not apply_all(room, events).is_open


def test_a_player_joins_once() -> None:
    room = join(open_room(), PEOPLE[0])
    assert refused(room, pb.JoinRoom(player=PEOPLE[0].to_proto())) == Code.ALREADY_IN_ROOM
    assert refused(room, pb.JoinRoom(player=HOST.to_proto())) == Code.CANNOT_JOIN_OWN_ROOM


# -- two-seat games ---------------------------------------------------------------------------


def test_a_maze_room_of_two_starts_when_the_second_player_joins() -> None:
    room = open_room("maze")
    assert len(room.slots) == 2
    assert refused(room, fill(2, "counter")) == Code.INVALID_POLICY  # the Maze seats people only
    assert refused(room, start()) == Code.SEATS_EMPTY  # no default fill: both seats are people
    match = started(run(room, pb.JoinRoom(player=PEOPLE[0].to_proto()), "join"))
    assert [s.player_id for s in match.seats] == ["p_host", "p_2"]
    assert match.settings.game == "maze" and match.settings.seats == 2


def test_a_maths_warriors_host_may_seat_the_ai() -> None:
    room = open_room("maths-warriors")
    assert refused(room, start()) == Code.SEATS_EMPTY
    events = run(room, fill(2, "hard"))
    match = started(events)
    assert match.seats[1].policy == "hard"
    (create,) = follow_ups(_command(STREAM, pb.FillSeat()), _answer(events))
    begin = create.payload
    assert isinstance(begin, match_pb2.StartMatch) and begin.game == "maths-warriors"
    assert (begin.seats[1].kind, begin.seats[1].policy) == (match_pb2.SEAT_KIND_AI, "hard")


# -- what a started room sends ----------------------------------------------------------------


def _command(stream: str, payload: Message) -> Command:
    return new_command(stream, payload, command_id="c1")


def _answer(events: list[Message]) -> Answer:
    time = datetime.now(UTC)
    wrapped = tuple(
        Event(event_id=f"e{i}", stream=STREAM, sequence=i, type="", payload=e, time=time)
        for i, e in enumerate(events, 1)
    )
    return Answer(command_id="c1", stream=STREAM, events=wrapped)


def test_a_matrix_start_sends_start_match_with_eight_seats_and_the_seed() -> None:
    room = join(open_room(), PEOPLE[0])
    room = step(room, fill(3, "tit-for-tat"), "fill")
    events = run(room, start(), "start")
    (sent,) = follow_ups(_command(STREAM, start()), _answer(events))
    begin = sent.payload
    assert isinstance(begin, match_pb2.StartMatch)
    assert begin.game == "matrix-games" and begin.room_code == CODE
    assert begin.match_id == started(events).match_id
    kinds = [s.kind for s in begin.seats]
    assert kinds == [match_pb2.SEAT_KIND_HUMAN] * 2 + [match_pb2.SEAT_KIND_SCRIPTED] * 6
    assert begin.seats[2].policy == "tit-for-tat"
    played = unpack(begin.settings, mx.MatrixGamesSettings)
    recorded = unpack(room.settings.settings, mx.MatrixGamesSettings)  # type: ignore[union-attr]
    assert played.HasField("seed") and played.seed == recorded.seed


# -- settings: the game's lobby, the seed ----------------------------------------------------


@pytest.mark.parametrize(
    ("given", "code"),
    [
        (settings("go"), Code.UNKNOWN_GAME),
        (settings("matrix-games", seats=2), Code.INVALID_SEATS),
        (settings("matrix-games", mode=match_pb2.MATCH_MODE_RANKED), Code.MODE_NOT_AVAILABLE),
        (settings("matrix-games", mx.MatrixGamesSettings(beats=0)), "setting_out_of_range"),
        (settings("matrix-games", mx.MatrixGamesSettings(variant="nope")), "unknown_variant"),
        (settings("matrix-games", mz.MazeSettings()), Code.INVALID_SETTINGS),
        (settings("maze", mz.MazeSettings(width=1)), "invalid_size"),
    ],
)
def test_settings_are_the_games_to_check(given: pb.RoomSettings, code: str) -> None:
    with pytest.raises(LobbyError) as refused_with:
        checked_settings(given)
    assert refused_with.value.code == code


def test_create_room_draws_a_seed_when_none_is_given_and_records_it() -> None:
    host = HOST.to_proto()
    lobby = initial_player(HOST.player_id)

    def requested(given: pb.RoomSettings, cid: str) -> mx.MatrixGamesSettings:
        command = pb.CreateRoom(host=host, settings=given)
        events = decide_player(lobby, command, CTX, stream="player-p_host", command_id=cid)
        assert not isinstance(events, Rejection), events
        (event,) = events
        assert isinstance(event, pb.RoomRequested) and event.settings.seats == 8
        return unpack(event.settings.settings, mx.MatrixGamesSettings)

    drawn = requested(settings("matrix-games"), "cid-a")
    assert drawn.HasField("seed") and drawn.beats > 0  # defaults filled in
    assert requested(settings("matrix-games"), "cid-a").seed == drawn.seed  # deciding again
    assert requested(settings("matrix-games"), "cid-b").seed != drawn.seed
    kept = requested(settings("matrix-games", mx.MatrixGamesSettings(seed=-7)), "cid-c")
    assert kept.seed == -7
    maze = checked_settings(settings("maze"))
    assert with_seed(maze, "cid-d") == maze  # a game with no seed setting is left alone


# -- queues from the registry; the exclusive rule --------------------------------------------


def test_queues_are_the_registrys_two_player_games() -> None:
    assert set(GAMES) == {"maths-warriors", "maze"}
    enqueue = pb.Enqueue(player=HOST.to_proto(), game="matrix-games")
    queue = initial_queue(queue_stream("matrix-games", "casual"))
    refusal = decide_queue(queue, enqueue, CTX, command_id="q1")
    assert isinstance(refusal, Rejection) and refusal.code == Code.UNKNOWN_QUEUE
    stream = queue_stream("maze", "casual")
    queue = initial_queue(stream)
    first = decide_queue(
        queue, pb.Enqueue(player=HOST.to_proto(), game="maze"), CTX, command_id="q2"
    )
    assert not isinstance(first, Rejection)
    for event in first:
        queue = apply_queue(queue, event)
    paired = decide_queue(
        queue, pb.Enqueue(player=PEOPLE[0].to_proto(), game="maze"), CTX, command_id="q3"
    )
    assert not isinstance(paired, Rejection) and isinstance(paired[-1], pb.PlayersPaired)
    (sent,) = follow_ups(_command(stream, pb.Enqueue()), _answer(paired))
    assert isinstance(sent.payload, match_pb2.StartMatch) and sent.payload.game == "maze"
    assert len(sent.payload.seats) == 2


def test_a_live_match_blocks_exclusive_games_only() -> None:
    busy = LobbyContext(now_ms=CTX.now_ms, player_matches={PEOPLE[0].player_id: ("m1", 0)})
    join_command = pb.JoinRoom(player=PEOPLE[0].to_proto())
    assert refused(open_room(), join_command, busy) == Code.ALREADY_IN_MATCH
    digits = open_room("digits")  # one seat; Digits lives for days beside other games
    assert digits.exclusive is False and open_room().exclusive is True
    command = pb.CreateRoom(host=PEOPLE[0].to_proto(), settings=settings("digits"))
    lobby = initial_player(PEOPLE[0].player_id)
    events = decide_player(lobby, command, busy, stream="player-p_2", command_id="d1")
    assert not isinstance(events, Rejection), events
    command = pb.CreateRoom(host=PEOPLE[0].to_proto(), settings=settings("maze"))
    refusal = decide_player(lobby, command, busy, stream="player-p_2", command_id="d2")
    assert isinstance(refusal, Rejection) and refusal.code == Code.ALREADY_IN_MATCH
