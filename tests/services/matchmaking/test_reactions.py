"""Follow-up commands, room timers and the lobby directory, without a running service."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

from arena_games.contract import unpack
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_matchmaking.context import Player
from arena_matchmaking.directory import DIRECTORY_GROUP, LobbyDirectory
from arena_matchmaking.matchmaking import Matchmaking
from arena_matchmaking.reactions import follow_ups
from arena_matchmaking.room_settings import default_settings
from arena_matchmaking.rooms import Room, RoomStatus
from arena_matchmaking.timers import RoomTimers
from arena_runtime import metrics, topics
from arena_runtime.config import load_settings
from arena_runtime.envelope import Command, Event
from arena_runtime.eventlog import OutgoingRecord
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Answer, Rejection
from google.protobuf.message import Message

from tests.services.matchmaking.harness import LobbyClient, player

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def command(stream: str, payload: Message, command_id: str = "c") -> Command:
    return Command(command_id, stream, payload.DESCRIPTOR.full_name, payload, T0)


def answered(stream: str, *payloads: Message) -> Answer:
    events = tuple(
        Event(f"e{i}", stream, i + 1, p.DESCRIPTOR.full_name, p, T0, causation_id="c")
        for i, p in enumerate(payloads)
    )
    return Answer("c", stream, events)


def test_room_requested_opens_the_room_under_a_derived_id() -> None:
    requested = pb.RoomRequested(
        request_id="r", create_command_id="cc", attempt=2, code="ABCDE", host=player("p_a")
    )
    (sent,) = follow_ups(command("player-p_a", pb.CreateRoom()), answered("player-p_a", requested))
    assert (sent.topic, sent.stream, sent.command_id) == (
        topics.MATCHMAKING_COMMANDS,
        "room-ABCDE",
        "cc:open:2",
    )
    assert isinstance(sent.payload, pb.OpenRoom) and sent.payload.attempt == 2


def test_only_a_taken_code_is_retried() -> None:
    open_room = pb.OpenRoom(host=player("p_a"), create_command_id="cc", attempt=0)
    taken = Answer("c", "room-ABCDE", rejection=Rejection("code_taken"))
    (sent,) = follow_ups(command("room-ABCDE", open_room), taken)
    assert (sent.stream, sent.command_id) == ("player-p_a", "cc:retry:1")
    assert sent.payload == pb.RetryRoomCode(create_command_id="cc", attempt=1)
    other = Answer("c", "room-ABCDE", rejection=Rejection("invalid_player"))
    assert follow_ups(command("room-ABCDE", open_room), other) == []


def test_match_started_sends_create_match_once_per_match() -> None:
    started = pb.RoomMatchStarted(
        match_id="m1",
        seats=[player("p_b"), player("p_a")],
        number=2,
        settings=default_settings(),
        code="ABCDE",
    )
    (sent,) = follow_ups(command("room-ABCDE", pb.RematchAccept()), answered("room-X", started))
    assert (sent.topic, sent.stream, sent.command_id) == (
        topics.MATCH_COMMANDS,
        "match-m1",
        "create:m1",
    )
    create = sent.payload
    assert isinstance(create, match_pb2.StartMatch) and create.game == "maths-warriors"
    assert [s.player_id for s in create.seats] == ["p_b", "p_a"]
    game = unpack(create.settings, mw.MathsWarriorsSettings)
    assert create.room_code == "ABCDE" and game.move_seconds == 30


def test_ai_match_seats_the_ai_second() -> None:
    requested = pb.AiMatchRequested(
        match_id="m2",
        player=player("p_a"),
        level=match_pb2.AI_LEVEL_EASY,
        settings=default_settings(),
    )
    (sent,) = follow_ups(command("player-p_a", pb.PlayAi()), answered("player-p_a", requested))
    seats = sent.payload.seats  # type: ignore[attr-defined]
    assert [s.kind for s in seats] == [match_pb2.SEAT_KIND_HUMAN, match_pb2.SEAT_KIND_AI]
    assert seats[1].policy == "easy" and seats[1].player_id == "ai-easy"


def test_events_without_consequences_send_nothing() -> None:
    closed = answered("room-ABCDE", pb.RoomClosed(reason="idle"))
    assert follow_ups(command("room-ABCDE", pb.RoomTimer()), closed) == []


# -- timers ---------------------------------------------------------------------------------


def test_timers_keep_only_the_latest_deadline_of_each_room() -> None:
    now = [0]
    timers = RoomTimers(fire=None, now_ms=lambda: now[0])  # type: ignore[arg-type]
    host = Player("p_a")
    waiting = Room("AAAAA", RoomStatus.WAITING, host=host, waiting_deadline_ms=100)
    timers.track(waiting)
    timers.track(Room("BBBBB", RoomStatus.FINISHED, idle_deadline_ms=50))
    timers.track(Room("AAAAA", RoomStatus.PLAYING, host=host))  # joined: nothing to wait for
    now[0] = 99
    assert timers.due() == [("BBBBB", "idle", 50)]
    now[0] = 1000
    assert timers.due() == []
    timers.track(Room("CCCCC", RoomStatus.WAITING, waiting_deadline_ms=200))
    timers.track(Room("CCCCC", RoomStatus.WAITING, waiting_deadline_ms=300))
    assert timers.due() == [("CCCCC", "waiting", 300)]


# -- a redelivered command after a crash -----------------------------------------------------


async def test_a_redelivered_join_sends_the_same_create_match_again(tmp_path: Path) -> None:
    settings = load_settings({"ARENA_DATA_DIR": str(tmp_path), "ARENA_PARTITIONS": "2"})
    log = open_event_log(settings)
    await log.start()
    try:
        await topics.ensure_topics(log, 2)
        first = Matchmaking(log, settings)
        await first.handle_command(command("room-ABCDE", pb.OpenRoom(host=player("p_a"))))
        join = command("room-ABCDE", pb.JoinRoom(player=player("p_b")), "join-1")
        answer = await first.handle_command(join)
        started = answer.events[1].payload
        # A new instance (the old one died before committing the command) gets it again.
        second = Matchmaking(log, settings)
        again = await second.handle_command(join)
        assert again.repeated and again.events[1].payload == started
        client = LobbyClient(log)
        sent = await client.match_commands(started.match_id)
        assert [c.command_id for c in sent] == [f"create:{started.match_id}"] * 2
        assert sent[0].payload == sent[1].payload
        # Its directory, rebuilt from the log, knows where the players sit.
        await second.directory.catch_up()
        assert second.directory.player_rooms == {"p_a": "ABCDE", "p_b": "ABCDE"}
        assert second.directory.match_rooms == {started.match_id: "ABCDE"}
        assert second.directory.open_rooms == 1
        assert second.timers.armed == {}
    finally:
        await log.close()


async def test_the_directory_counts_and_skips_a_malformed_record(tmp_path: Path) -> None:
    settings = load_settings({"ARENA_DATA_DIR": str(tmp_path), "ARENA_PARTITIONS": "2"})
    labels = {"topic": topics.MATCHMAKING_EVENTS, "group": DIRECTORY_GROUP, "reason": "undecodable"}
    before = metrics.sample("arena_malformed_records_total", labels)
    log = open_event_log(settings)
    await log.start()
    try:
        await topics.ensure_topics(log, 2)
        garbage = [OutgoingRecord(b"\xff not an envelope", partition=p) for p in (0, 1)]
        await log.append(topics.MATCHMAKING_EVENTS, garbage)
        await Matchmaking(log, settings).handle_command(
            command("room-ABCDE", pb.OpenRoom(host=player("p_a")))
        )
        directory = LobbyDirectory(log)
        assert await directory.catch_up() == 3  # both bad records read, and the room's event
        assert list(directory.rooms) == ["ABCDE"]
        assert metrics.sample("arena_malformed_records_total", labels) == before + 2
    finally:
        await log.close()


async def test_timers_wait_until_the_rooms_are_current() -> None:
    sent: list[str] = []

    async def fire(code: str, command_id: str, timer: pb.RoomTimer) -> None:
        sent.append(command_id)

    current = False
    timers = RoomTimers(fire, now_ms=lambda: 1000)
    timers.may_fire = lambda: current
    timers.track(Room("AAAAA", RoomStatus.WAITING, waiting_deadline_ms=10))
    task = asyncio.create_task(timers.run())
    await asyncio.sleep(0.2)
    assert sent == []  # due, but the directory is still reading
    current = True
    for _ in range(100):
        if sent:
            break
        await asyncio.sleep(0.02)
    timers.request_stop()
    await asyncio.wait_for(task, 5)
    assert sent == ["timer:waiting:10"]


async def test_only_the_owner_of_a_rooms_partition_fires_its_timer() -> None:
    """Every instance arms every room's timer; the owner alone sends it, and an instance that
    gains the partition later (its owner died) sends it then."""
    sent: list[str] = []

    async def fire(code: str, command_id: str, timer: pb.RoomTimer) -> None:
        sent.append(f"{code}/{command_id}")

    owned = {"AAAAA"}
    timers = RoomTimers(fire, now_ms=lambda: int(time.monotonic() * 1000))
    timers.owns = lambda code: code in owned
    due = timers.now_ms()
    timers.track(Room("AAAAA", RoomStatus.WAITING, waiting_deadline_ms=due))
    timers.track(Room("BBBBB", RoomStatus.WAITING, waiting_deadline_ms=due + 1))
    task = asyncio.create_task(timers.run())
    try:
        for _ in range(100):
            if sent:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        assert sent == [f"AAAAA/timer:waiting:{due}"]  # BBBBB's partition is another's
        assert timers.armed["BBBBB"] == ("waiting", due + 1)  # still armed, not dropped
        owned.add("BBBBB")
        for _ in range(200):  # looked at again every RETRY_MS
            if len(sent) == 2:
                break
            await asyncio.sleep(0.02)
        assert sent == [f"AAAAA/timer:waiting:{due}", f"BBBBB/timer:waiting:{due + 1}"]
    finally:
        timers.request_stop()
        await asyncio.wait_for(task, 5)


async def test_the_directory_knows_which_rooms_partitions_it_owns(tmp_path: Path) -> None:
    settings = load_settings({"ARENA_DATA_DIR": str(tmp_path), "ARENA_PARTITIONS": "4"})
    log = open_event_log(settings)
    await log.start()
    try:
        await topics.ensure_topics(log, 4)
        directory = LobbyDirectory(log)
        assert directory.owns_room("ABCDE")  # partitions unknown yet: firing twice is harmless
        await directory.catch_up()
        codes = ["ABCDE", "FGHJK", "MNPQR", "STUVW", "XYZ23", "45678"]
        partition = {code: partition_for(f"room-{code}".encode(), 4) for code in codes}
        assert len(set(partition.values())) > 1
        assert not any(directory.owns_room(code) for code in codes)
        directory.own(partition["ABCDE"])
        assert {c for c in codes if directory.owns_room(c)} == {
            c for c in codes if partition[c] == partition["ABCDE"]
        }
        directory.disown(partition["ABCDE"])
        assert not directory.owns_room("ABCDE")
    finally:
        await log.close()
