"""The matchmaking service over the embedded log: commands in, events and StartMatch out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from arena_games.maths_warriors.lobby import room
from arena_matchmaking.ids import room_code
from arena_matchmaking.service import build_workers
from arena_runtime import metrics, topics
from arena_runtime.config import Settings, load_settings
from arena_runtime.envelope import CODEC, Event, new_command
from arena_runtime.eventlog import EventLog, OutgoingRecord, Position
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import envelope_pb2, match_pb2
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from prometheus_client import REGISTRY

from tests.services.matchmaking.harness import (
    LobbyClient,
    ServiceUnderTest,
    eventually,
    game_settings,
    player,
)

QUEUE = "queue-maths-warriors-casual"


def settings_for(data_dir: Path, **env: str) -> Settings:
    return load_settings({"ARENA_DATA_DIR": str(data_dir), "ARENA_PARTITIONS": "4", **env})


@pytest.fixture
async def event_log(tmp_path: Path) -> AsyncIterator[EventLog]:
    log = open_event_log(settings_for(tmp_path))
    await log.start()
    yield log
    await log.close()


async def create_room(
    client: LobbyClient, host: str, settings: pb.RoomSettings | None = None, cid: str | None = None
) -> pb.RoomOpened:
    command = pb.CreateRoom(request_id=f"req-{host}", host=player(host), settings=settings)
    cid = await client.send(f"player-{host}", command, cid)
    (requested,) = await client.answer(f"player-{host}", cid)
    assert isinstance(requested.payload, pb.RoomRequested), requested.payload

    async def probe() -> pb.RoomOpened | None:
        for event in await client.events(f"player-{host}"):
            if isinstance(event.payload, pb.RoomRequested):
                for answer in await client.events(f"room-{event.payload.code}"):
                    payload = answer.payload
                    if isinstance(payload, pb.RoomOpened) and payload.create_command_id == cid:
                        return payload
        return None

    opened: pb.RoomOpened = await eventually(probe, f"no room opened for {cid}")
    assert opened.request_id == f"req-{host}"
    return opened


async def test_create_join_sends_create_match(tmp_path: Path, event_log: EventLog) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        chosen = room(game_seconds=300, move_seconds=10, preview=True)
        opened = await create_room(client, "p_alice", chosen, cid="create-alice")
        assert opened.code == room_code("create-alice", 0)
        joined = await client.command(f"room-{opened.code}", pb.JoinRoom(player=player("p_bob")))
        assert isinstance(joined[0], pb.RoomJoined) and isinstance(joined[1], pb.RoomMatchStarted)
        create = await client.create_match(joined[1].match_id)
        assert [(s.player_id, s.kind) for s in create.seats] == [
            ("p_alice", match_pb2.SEAT_KIND_HUMAN),
            ("p_bob", match_pb2.SEAT_KIND_HUMAN),
        ]
        game = game_settings(create)
        assert game.game_seconds == 300 and game.move_seconds == 10 and game.preview
        assert create.room_code == opened.code and create.mode == match_pb2.MATCH_MODE_CASUAL
        assert game.ruleset.first_player_penalty == "strength_only"
        # A third player finds the room full; the host cannot create another room meanwhile.
        third = await client.command(f"room-{opened.code}", pb.JoinRoom(player=player("p_carol")))
        assert third[0].code == "room_full"
        again = await client.command(
            "player-p_alice", pb.CreateRoom(host=player("p_alice"), settings=None)
        )
        assert again[0].code == "already_in_room"


async def test_a_taken_code_moves_on_to_the_next_attempt(
    tmp_path: Path, event_log: EventLog
) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        squatter = await create_room(client, "p_zed", cid="create-zed")
        # Find a CreateRoom id whose first code is the squatter's: impossible to search for, so
        # open the room at the code the next request will try first, directly.
        first = room_code("create-alice", 0)
        await client.command(
            f"room-{first}", pb.OpenRoom(host=player("p_zed2"), settings=None), "squat"
        )
        opened = await create_room(client, "p_alice", cid="create-alice")
        assert opened.code == room_code("create-alice", 1) != squatter.code
        attempts = [
            e.payload.attempt
            for e in await client.events("player-p_alice")
            if isinstance(e.payload, pb.RoomRequested)
        ]
        assert attempts == [0, 1]


async def test_a_command_s_follow_ups_are_written_with_its_events(
    tmp_path: Path, event_log: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CreateRoom's OpenRoom and JoinRoom's StartMatch go in the write of their events, not in
    an append of their own after it."""
    settings = settings_for(tmp_path)
    await topics.ensure_topics(event_log, settings.partitions)
    matchmaking, _ = build_workers(event_log, settings)
    appended: list[str] = []
    append = event_log.append

    async def counted(topic: str, records: Sequence[OutgoingRecord]) -> list[Position]:
        appended.append(topic)
        return await append(topic, records)

    monkeypatch.setattr(event_log, "append", counted)
    create = new_command("player-p_alice", pb.CreateRoom(host=player("p_alice")), command_id="c")
    (created,) = await matchmaking.handle_batch([create])
    code = created.events[0].payload.code
    (opened,) = await LobbyClient(event_log)._records(topics.MATCHMAKING_COMMANDS, f"room-{code}")
    open_room = CODEC.decode_command(opened).payload
    (answer,) = await matchmaking.handle_batch([new_command(f"room-{code}", open_room)])
    assert isinstance(answer.events[0].payload, pb.RoomOpened)
    join = new_command(f"room-{code}", pb.JoinRoom(player=player("p_bob")))
    (joined,) = await matchmaking.handle_batch([join])
    started = joined.events[-1].payload
    (start,) = await LobbyClient(event_log).match_commands(started.match_id)
    assert isinstance(start.payload, match_pb2.StartMatch)
    # Only OpenRoom's events, which imply nothing, were appended alone.
    assert appended == [topics.MATCHMAKING_EVENTS]


async def test_a_room_opened_before_its_request_s_write_returns_leaves_nothing_pending(
    tmp_path: Path, event_log: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OpenRoom goes in CreateRoom's write: if the room is opened and folded by the
    directory before that write's acknowledgement is handled, the request is not left counted
    toward the room cap."""
    settings = settings_for(tmp_path)
    await topics.ensure_topics(event_log, settings.partitions)
    matchmaking, _ = build_workers(event_log, settings)
    chained = event_log.append_chained
    create_id = next(  # a room on another partition than its host's stream (no shared lock)
        f"create-{n}"
        for n in range(100)
        if partition_for(f"room-{room_code(f'create-{n}', 0)}".encode(), settings.partitions)
        != partition_for(b"player-p_alice", settings.partitions)
    )
    code = room_code(create_id, 0)

    async def opened_meanwhile(
        topic: str,
        records: Sequence[OutgoingRecord],
        expect: int,
        then: Sequence[tuple[str, Sequence[OutgoingRecord]]],
    ) -> list[Position]:
        positions = await chained(topic, records, expect, then)
        (opening,) = await LobbyClient(event_log)._records(
            topics.MATCHMAKING_COMMANDS, f"room-{code}"
        )
        (answer,) = await matchmaking.handle_batch([CODEC.decode_command(opening)])
        assert isinstance(answer.events[0].payload, pb.RoomOpened)
        await matchmaking.directory.catch_up()
        return positions

    monkeypatch.setattr(event_log, "append_chained", opened_meanwhile)
    create = pb.CreateRoom(host=player("p_alice"))
    (created,) = await matchmaking.handle_batch(
        [new_command("player-p_alice", create, command_id=create_id)]
    )
    assert created.accepted
    await matchmaking.directory.catch_up()
    assert list(matchmaking.directory.rooms) == [code]
    assert matchmaking.directory.pending == set() and matchmaking.directory.open_rooms == 1


async def test_repeated_create_room_opens_one_room(tmp_path: Path, event_log: EventLog) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)) as service:
        command = pb.CreateRoom(request_id="r", host=player("p_alice"))
        for _ in range(3):
            await client.send("player-p_alice", command, "same-id")
        opened = await client.wait_event(f"room-{room_code('same-id', 0)}", pb.RoomOpened)
        await client.answer("player-p_alice", "same-id")
        await service.matchmaking.directory.catch_up()
        assert list(service.matchmaking.directory.rooms) == [opened.code]
        events = await client.events(f"room-{opened.code}")
        assert [type(e.payload) for e in events] == [pb.RoomOpened]


@pytest.mark.parametrize("forget_seconds", ["0", "120"])
async def test_a_closed_room_forgets_its_answers_after_a_while(
    tmp_path: Path, event_log: EventLog, forget_seconds: str
) -> None:
    client = LobbyClient(event_log)
    env = {"ARENA_ROOM_FORGET_SECONDS": forget_seconds}
    async with ServiceUnderTest(event_log, settings_for(tmp_path, **env)) as service:
        closed = await create_room(client, "p_alice")
        still_open = await create_room(client, "p_bob")
        leave = pb.LeaveRoom(player_id="p_alice")
        assert isinstance(
            (await client.command(f"room-{closed.code}", leave, "leave-1"))[0], pb.RoomClosed
        )
        # Any later batch looks at the closed rooms.
        await client.command("player-p_carol", pb.CreateRoom(host=player("p_carol")))
        runner = service.matchmaking.runner
        forgotten = forget_seconds == "0"
        view = runner.view(f"room-{closed.code}")
        assert view is not None and not view.state.is_open and view.sequence == 2
        # A sweep leaves a room whose partition is deciding a command at that moment (the
        # leave's follow-ups, say) to the next batch's sweep.
        for _ in range(20 if forgotten else 0):
            if view.answers == {}:
                break
            await client.command("player-p_carol", pb.CreateRoom(host=player("p_carol")))
        assert (view.answers == {}) is forgotten
        assert runner.view(f"room-{still_open.code}").answers  # type: ignore[union-attr]
        # The same LeaveRoom again, then a marker behind it on the same stream (so, in order):
        # forgotten, it is decided again on the closed room and refused; kept, nothing is added.
        await client.send(f"room-{closed.code}", leave, "leave-1")
        await client.command(f"room-{closed.code}", pb.LeaveRoom(player_id="p_nobody"), "marker")
        answers = await client.answer(f"room-{closed.code}", "leave-1")
        assert isinstance(answers[0].payload, pb.RoomClosed)
        assert [type(a.payload) for a in answers[1:]] == (
            [envelope_pb2.CommandRejected] if forgotten else []
        )


async def test_room_cap(tmp_path: Path, event_log: EventLog) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path, ARENA_ROOM_CAP="2")):
        await create_room(client, "p_a")
        await create_room(client, "p_b")
        refused = await client.command("player-p_c", pb.CreateRoom(host=player("p_c")))
        assert isinstance(refused[0], envelope_pb2.CommandRejected)
        assert refused[0].code == "room_cap_reached"


async def test_quick_match_pairs_in_arrival_order(tmp_path: Path, event_log: EventLog) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        enqueue = pb.Enqueue(game="maths-warriors", mode=match_pb2.MATCH_MODE_CASUAL)
        for name in ("p_a", "p_b", "p_c"):
            enqueue.player.CopyFrom(player(name))
            await client.command(QUEUE, enqueue)
        paired = await client.wait_event(QUEUE, pb.PlayersPaired)
        assert [p.player_id for p in paired.players] == ["p_a", "p_b"]
        create = await client.create_match(paired.match_id)
        assert [s.player_id for s in create.seats] == ["p_a", "p_b"]
        assert game_settings(create).game_seconds == 720 and create.room_code == ""
        # p_c still waits, so may not open a room; after leaving the queue they may.
        refused = await client.command("player-p_c", pb.CreateRoom(host=player("p_c")))
        assert refused[0].code == "already_queued"
        left = await client.command(QUEUE, pb.Dequeue(player_id="p_c"))
        assert isinstance(left[0], pb.PlayerDequeued)
        await create_room(client, "p_c")


async def test_play_ai(tmp_path: Path, event_log: EventLog) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        command = pb.PlayAi(request_id="r", player=player("p_a"), level=match_pb2.AI_LEVEL_MEDIUM)
        (requested,) = await client.command("player-p_a", command)
        create = await client.create_match(requested.match_id)
        assert create.seats[0].player_id == "p_a"
        assert create.seats[1].kind == match_pb2.SEAT_KIND_AI
        assert create.seats[1].policy == "medium"


async def test_rematch_after_the_match_ends(tmp_path: Path, event_log: EventLog) -> None:
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        opened = await create_room(client, "p_alice")
        room = f"room-{opened.code}"
        _, started = await client.command(room, pb.JoinRoom(player=player("p_bob")))
        await client.end_match(started.match_id)
        finished = await client.wait_event(room, pb.RoomMatchFinished)
        assert finished.match_id == started.match_id and finished.reason == "all_captured"
        await client.command(room, pb.RematchRequest(player_id="p_alice"))
        accepted = await client.command(room, pb.RematchAccept(player_id="p_bob"))
        rematch = accepted[1]
        assert isinstance(rematch, pb.RoomMatchStarted) and rematch.number == 2
        create = await client.create_match(rematch.match_id)
        assert [s.player_id for s in create.seats] == ["p_bob", "p_alice"]
        assert create.room_code == opened.code


async def test_a_room_reads_the_seam_s_match_ended(tmp_path: Path, event_log: EventLog) -> None:
    """The game-neutral end (ranks, no player ids) finishes the room as a legacy GameEnded
    does: the winner is the seat ranked first alone, named from the room's seats."""
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        opened = await create_room(client, "p_alice")
        room = f"room-{opened.code}"
        _, started = await client.command(room, pb.JoinRoom(player=player("p_bob")))
        await client.match_ended(started.match_id, {1: 2, 2: 1}, "timeout")
        finished = await client.wait_event(room, pb.RoomMatchFinished)
        assert (finished.match_id, finished.reason, finished.winner) == (
            started.match_id,
            "timeout",
            2,
        )
        assert finished.winner_player_id == started.seats[1].player_id
        assert [(s.seat, s.rank) for s in finished.seats] == [(1, 2), (2, 1)]


async def test_the_match_event_member_leaves_a_match_s_other_events_unread(
    tmp_path: Path, event_log: EventLog
) -> None:
    """Only a match's end (of its events) is decoded and handled; the rest, a move's events most
    of them, is committed past unread, told from its type header."""
    client = LobbyClient(event_log)
    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        opened = await create_room(client, "p_alice")
        room = f"room-{opened.code}"
        _, started = await client.command(room, pb.JoinRoom(player=player("p_bob")))
        labels = {"topic": topics.MATCH_EVENTS, "group": "matchmaking.events"}
        before = metrics.sample("arena_records_consumed_total", labels)
        match_opened = Event(
            event_id=f"opened-{started.match_id}",
            stream=f"match-{started.match_id}",
            sequence=1,
            type=match_pb2.MatchOpened.DESCRIPTOR.full_name,
            payload=match_pb2.MatchOpened(match_id=started.match_id, game="maths-warriors"),
            time=new_command("x", pb.Dequeue()).time,
        )
        await event_log.append(topics.MATCH_EVENTS, [CODEC.event_record(match_opened)])
        await client.end_match(started.match_id)
        await client.wait_event(room, pb.RoomMatchFinished)

        async def counted() -> bool:
            return metrics.sample("arena_records_consumed_total", labels) > before

        await eventually(counted, "the match's end was never counted")
        # The opening came first in the partition: had it been handled, it would count too.
        assert metrics.sample("arena_records_consumed_total", labels) == before + 1


async def test_timers_fire_after_a_restart(tmp_path: Path, event_log: EventLog) -> None:
    client = LobbyClient(event_log)
    settings = settings_for(tmp_path, ARENA_ROOM_WAITING_SECONDS="1", ARENA_ROOM_IDLE_SECONDS="1")
    service = ServiceUnderTest(event_log, settings)
    await service.start()
    waiting = await create_room(client, "p_alice")
    finished = await create_room(client, "p_carol")
    room = f"room-{finished.code}"
    _, started = await client.command(room, pb.JoinRoom(player=player("p_dave")))
    await service.stop()  # down before either deadline
    await client.end_match(started.match_id)
    for name in ("p_carol", "p_dave"):
        await client.send(room, pb.RoomPresence(player_id=name, connected=False))
    fired = REGISTRY.get_sample_value("arena_room_timers_fired_total", {"kind": "idle"}) or 0
    async with service:
        closed = await client.wait_event(f"room-{waiting.code}", pb.RoomClosed)
        assert closed.reason == "expired"
        closed = await client.wait_event(room, pb.RoomClosed)
        assert closed.reason == "idle"
        after = REGISTRY.get_sample_value("arena_room_timers_fired_total", {"kind": "idle"})
        assert after is not None and after >= fired + 1

        async def no_room_open() -> bool:
            return REGISTRY.get_sample_value("arena_rooms_open") == 0

        await eventually(no_room_open, "arena_rooms_open never came back to 0")
        # The codes are free again.
        reopened = await client.command(
            f"room-{waiting.code}", pb.OpenRoom(host=player("p_erin")), "reopen"
        )
        assert isinstance(reopened[0], pb.RoomOpened)


async def test_two_instances_share_the_partitions_cap_and_timers(
    tmp_path: Path, event_log: EventLog
) -> None:
    client = LobbyClient(event_log)
    settings = settings_for(tmp_path, ARENA_ROOM_CAP="4", ARENA_ROOM_WAITING_SECONDS="1")
    async with ServiceUnderTest(event_log, settings), ServiceUnderTest(event_log, settings):
        rooms = [await create_room(client, f"p_{n}") for n in range(4)]
        refused = await client.command("player-p_x", pb.CreateRoom(host=player("p_x")))
        assert refused[0].code == "room_cap_reached"
        # Both instances fire every room's timer; each room closes once.
        for opened in rooms:
            await client.wait_event(f"room-{opened.code}", pb.RoomClosed)
        for opened in rooms:
            events = await client.events(f"room-{opened.code}")
            assert [type(e.payload) for e in events] == [pb.RoomOpened, pb.RoomClosed]
        # The codes are free again, so the cap is too.
        await create_room(client, "p_x")


async def test_one_live_match_per_player(tmp_path: Path, event_log: EventLog) -> None:
    """Issue 12, item 3: moves name no match, so a player has one live match at a time; the
    matchmaking service refuses a second (play_ai, a room, the queue, a rematch) until the first
    ends."""
    client = LobbyClient(event_log)
    rejected = envelope_pb2.CommandRejected

    def play_ai(who: str, n: int) -> pb.PlayAi:
        return pb.PlayAi(request_id=f"r{n}", player=player(who), level=match_pb2.AI_LEVEL_EASY)

    async with ServiceUnderTest(event_log, settings_for(tmp_path)):
        # In a waiting room, then in its game: no AI game.
        opened = await create_room(client, "p_host")
        (refused,) = await client.command("player-p_host", play_ai("p_host", 1))
        assert isinstance(refused, rejected) and refused.code == "already_in_room"
        room_stream = f"room-{opened.code}"
        _, started = await client.command(room_stream, pb.JoinRoom(player=player("p_join")))
        (refused,) = await client.command("player-p_join", play_ai("p_join", 2))
        assert isinstance(refused, rejected) and refused.code == "already_in_room"
        # In an AI game: no second one, no room, no queue.
        (solo,) = await client.command("player-p_solo", play_ai("p_solo", 3))
        assert isinstance(solo, pb.AiMatchRequested)
        for stream, payload in (
            ("player-p_solo", play_ai("p_solo", 4)),
            ("player-p_solo", pb.CreateRoom(request_id="c", host=player("p_solo"))),
            (QUEUE, pb.Enqueue(player=player("p_solo"), game="maths-warriors")),
        ):
            (refused,) = await client.command(stream, payload)
            assert isinstance(refused, rejected) and refused.code == "already_in_match", payload
        # The room's game ends; one of its players starts an AI game: no rematch meanwhile.
        await client.end_match(started.match_id)
        await client.wait_event(room_stream, pb.RoomMatchFinished)
        (ai_game,) = await client.command("player-p_join", play_ai("p_join", 5))
        assert isinstance(ai_game, pb.AiMatchRequested)
        await client.command(room_stream, pb.RematchRequest(player_id="p_host"))
        (refused,) = await client.command(room_stream, pb.RematchAccept(player_id="p_join"))
        assert isinstance(refused, rejected) and refused.code == "already_in_match"
        # Its end, as the match service writes it, frees the player.
        await client.end_match(solo.match_id)
        await client.wait_event("player-p_solo", pb.PlayerMatchEnded)
        (again,) = await client.command("player-p_solo", play_ai("p_solo", 6))
        assert isinstance(again, pb.AiMatchRequested)
