"""The matchmaking service over the embedded log with rooms of other games than Maths Warriors:
a Matrix Games room of two people, a filled seat and a start sends a StartMatch of eight seats
with the seed the room recorded; a Maze room of two starts when the second player joins."""

from __future__ import annotations

from pathlib import Path

from arena_games.contract import unpack
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mx
from arena_runtime.eventlog import EventLog
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2

from tests.services.matchmaking.harness import LobbyClient, ServiceUnderTest, player
from tests.services.matchmaking.test_service import create_room, event_log, settings_for

__all__ = ["event_log"]  # the fixture, shared with test_service


async def test_a_matrix_room_of_two_people_filled_and_started(
    tmp_path: Path, event_log: EventLog
) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        opened = await create_room(client, "p_alice", pb.RoomSettings(game="matrix-games"))
        recorded = unpack(opened.settings.settings, mx.MatrixGamesSettings)
        assert opened.settings.seats == 8 and recorded.HasField("seed")  # drawn by the service
        room = f"room-{opened.code}"
        joined = await client.command(room, pb.JoinRoom(player=player("p_bob")))
        assert [type(e) for e in joined] == [pb.RoomJoined]  # six seats still free
        filled = await client.command(
            room, pb.FillSeat(player_id="p_alice", seat=3, policy="tit-for-tat")
        )
        assert filled == [pb.RoomSeatFilled(seat=3, policy="tit-for-tat")]
        wrong = await client.command(room, pb.FillSeat(player_id="p_alice", policy="nope"))
        assert wrong[0].code == "invalid_policy"
        begun = await client.command(room, pb.StartRoom(player_id="p_alice"))
        assert isinstance(begun[-1], pb.RoomMatchStarted)
        start = await client.create_match(begun[-1].match_id)
        assert isinstance(start, match_pb2.StartMatch)
        assert start.game == "matrix-games" and start.room_code == opened.code
        assert [s.player_id for s in start.seats[:2]] == ["p_alice", "p_bob"]
        assert [s.policy for s in start.seats[2:]] == ["tit-for-tat"] + ["counter"] * 5
        assert len(start.seats) == 8
        assert unpack(start.settings, mx.MatrixGamesSettings).seed == recorded.seed


async def test_a_maze_room_of_two(tmp_path: Path, event_log: EventLog) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        opened = await create_room(client, "p_alice", pb.RoomSettings(game="maze"))
        assert opened.settings.game == "maze" and opened.settings.seats == 2
        room = f"room-{opened.code}"
        joined = await client.command(room, pb.JoinRoom(player=player("p_bob")))
        assert isinstance(joined[-1], pb.RoomMatchStarted)
        start = await client.create_match(joined[-1].match_id)
        assert isinstance(start, match_pb2.StartMatch) and start.game == "maze"
        assert [s.player_id for s in start.seats] == ["p_alice", "p_bob"]
        third = await client.command(room, pb.JoinRoom(player=player("p_carol")))
        assert third[0].code == "room_full"
