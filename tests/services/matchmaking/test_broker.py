"""The matchmaking service on the real broker: a room from CreateRoom to StartMatch, a timer."""

from __future__ import annotations

from arena_runtime.config import load_settings
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb

from tests.services.matchmaking.harness import LobbyClient, ServiceUnderTest, player


async def test_room_to_match_on_the_broker(kafka_bootstrap: str, topic_prefix: str) -> None:
    settings = load_settings(
        {
            "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
            "ARENA_TOPIC_PREFIX": f"{topic_prefix}matchmaking.",
            "ARENA_PARTITIONS": "2",
            "ARENA_ROOM_WAITING_SECONDS": "1",
        }
    )
    log = open_event_log(settings)
    await log.start()
    try:
        client = LobbyClient(log)
        async with ServiceUnderTest(log, settings):
            create = pb.CreateRoom(request_id="r1", host=player("p_alice"))
            (requested,) = await client.command("player-p_alice", create)
            room = f"room-{requested.code}"
            opened = await client.wait_event(room, pb.RoomOpened)
            assert opened.request_id == "r1"
            _, started = await client.command(room, pb.JoinRoom(player=player("p_bob")))
            match = await client.create_match(started.match_id)
            assert [s.player_id for s in match.seats] == ["p_alice", "p_bob"]
            assert match.room_code == requested.code
            # A second room nobody joins closes when its waiting time is over.
            lonely = pb.CreateRoom(request_id="r2", host=player("p_carol"))
            (requested,) = await client.command("player-p_carol", lonely)
            closed = await client.wait_event(f"room-{requested.code}", pb.RoomClosed)
            assert closed.reason == "expired"
    finally:
        await log.close()
