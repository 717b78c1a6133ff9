"""Partitions handled side by side: decisions that read the lobby directory still go one by one.

Each burst is appended in one call while the service is stopped, so the service's first poll
returns all of it and handles its partitions side by side. The answers must be the ones the
serial version gives: the same commands handled one at a time by a Matchmaking on its own log.
Which command of a burst wins may differ (the partitions' order is the consumer's), so the
answers are compared as a multiset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena_matchmaking.matchmaking import Matchmaking
from arena_runtime import topics
from arena_runtime.config import Settings, load_settings
from arena_runtime.envelope import CODEC, Command, new_command
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.streams import REJECTED_TYPE

from tests.services.matchmaking.harness import LobbyClient, ServiceUnderTest, eventually, player

PARTITIONS = 8
ACCEPTED = "accepted"


def settings_for(data_dir: Path, **env: str) -> Settings:
    return load_settings(
        {"ARENA_DATA_DIR": str(data_dir), "ARENA_PARTITIONS": str(PARTITIONS), **env}
    )


def partitions_of(commands: list[Command]) -> set[int]:
    return {partition_for(c.stream.encode(), PARTITIONS) for c in commands}


async def serial_answers(
    data_dir: Path, settings: Settings, setup: list[Command], burst: list[Command]
) -> list[str]:
    """The serial version: every command handled one at a time, in the burst's order."""
    log = open_event_log(settings_for(data_dir))
    await log.start()
    try:
        await topics.ensure_topics(log, PARTITIONS)
        matchmaking = Matchmaking(log, settings)
        for command in setup:
            assert (await matchmaking.handle_command(command)).accepted
        answers = [await matchmaking.handle_command(command) for command in burst]
        return sorted(a.rejection.code if a.rejection else ACCEPTED for a in answers)
    finally:
        await log.close()


async def service_answers(
    data_dir: Path, settings: Settings, setup: list[Command], burst: list[Command]
) -> list[str]:
    """The service: setup answered first, then the burst in one append and one poll."""
    log = open_event_log(settings)
    await log.start()
    try:
        await topics.ensure_topics(log, PARTITIONS)
        client = LobbyClient(log)
        service = ServiceUnderTest(log, settings)
        if setup:
            async with service:
                await append(log, setup)
                for command in setup:
                    events = await client.answer(command.stream, command.command_id)
                    assert events[0].type != REJECTED_TYPE, events[0].payload
        await append(log, burst)
        async with service:
            return sorted([await answer_code(client, command) for command in burst])
    finally:
        await log.close()


async def append(log: EventLog, commands: list[Command]) -> None:
    await log.append(topics.MATCHMAKING_COMMANDS, [CODEC.command_record(c) for c in commands])


async def answer_code(client: LobbyClient, command: Command) -> str:
    first = (await client.answer(command.stream, command.command_id))[0]
    return str(first.payload.code) if first.type == REJECTED_TYPE else ACCEPTED


def command(stream: str, payload: Any, command_id: str) -> Command:
    return new_command(stream, payload, command_id=command_id)


async def test_a_burst_of_create_room_past_the_cap_gets_the_serial_answers(
    tmp_path: Path,
) -> None:
    settings = settings_for(tmp_path / "service", ARENA_ROOM_CAP="3")
    burst = [
        command(f"player-p{i}", pb.CreateRoom(request_id=f"r{i}", host=player(f"p{i}")), f"c{i}")
        for i in range(10)
    ]
    assert len(partitions_of(burst)) >= 4

    served = await service_answers(tmp_path / "service", settings, [], burst)

    serial = await serial_answers(tmp_path / "serial", settings, [], burst)
    assert serial == [ACCEPTED] * 3 + ["room_cap_reached"] * 7
    assert served == serial


async def test_one_player_joining_rooms_on_every_partition_gets_one_seat(
    tmp_path: Path,
) -> None:
    settings = settings_for(tmp_path / "service")
    codes = [f"ROOM{i}" for i in range(8)]
    setup = [
        command(f"room-{code}", pb.OpenRoom(host=player(f"host{i}")), f"open-{code}")
        for i, code in enumerate(codes)
    ]
    burst = [
        command(f"room-{code}", pb.JoinRoom(player=player("p_x")), f"join-{code}") for code in codes
    ]
    assert len(partitions_of(burst)) >= 4

    served = await service_answers(tmp_path / "service", settings, setup, burst)

    serial = await serial_answers(tmp_path / "serial", settings, setup, burst)
    assert serial == [ACCEPTED] + ["already_in_room"] * 7
    assert served == serial


# -- owning partitions ---------------------------------------------------------------------


async def test_a_partition_lost_and_regained_is_read_again(tmp_path: Path) -> None:
    """What another instance wrote while it owned a partition counts once it is regained."""
    settings = settings_for(tmp_path)
    log = open_event_log(settings)
    await log.start()
    try:
        await topics.ensure_topics(log, PARTITIONS)
        client = LobbyClient(log)
        codes = [f"ROOM{i}" for i in range(8)]
        async with ServiceUnderTest(log, settings) as first:
            forgotten: list[int] = []
            runner = first.matchmaking.runner
            forget_end = runner.forget_end

            def spy(partition: int) -> None:
                forgotten.append(partition)
                forget_end(partition)

            runner.forget_end = spy  # type: ignore[method-assign]
            for i, code in enumerate(codes):
                await client.command(f"room-{code}", pb.OpenRoom(host=player(f"host{i}")))
            directory = first.matchmaking.directory
            assert directory.owned == set(range(PARTITIONS))

            async with ServiceUnderTest(log, settings) as second:
                theirs = second.matchmaking.directory.owned

                async def shared() -> bool:
                    return bool(theirs) and not directory.owned & theirs

                await eventually(shared, "the partitions were never shared")
                assert set(forgotten) == theirs
                there = next(c for c in codes if room_partition(c) in theirs)
                joined = await client.command(f"room-{there}", pb.JoinRoom(player=player("p_x")))
                assert isinstance(joined[0], pb.RoomJoined)

            async def all_back() -> bool:
                return directory.owned == set(range(PARTITIONS))

            await eventually(all_back, "the partitions never came back")
            here = next(c for c in codes if room_partition(c) not in theirs)
            refused = await client.command(f"room-{here}", pb.JoinRoom(player=player("p_x")))
            assert [getattr(e, "code", type(e).__name__) for e in refused] == ["already_in_room"]
    finally:
        await log.close()


def room_partition(code: str) -> int:
    return partition_for(f"room-{code}".encode(), PARTITIONS)


async def test_the_directory_of_an_owner_reads_nothing_it_wrote_itself(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    log = open_event_log(settings)
    await log.start()
    try:
        await topics.ensure_topics(log, PARTITIONS)
        matchmaking = Matchmaking(log, settings)
        for partition in range(PARTITIONS):
            matchmaking.gain(partition)
        await matchmaking.directory.catch_up()  # once: the ends of partitions just owned
        calls: list[str] = []
        for name in ("read", "end_offsets", "end_offset"):
            setattr(log, name, counted(calls, name, getattr(log, name)))

        await matchmaking.handle_command(
            command("room-ROOM0", pb.OpenRoom(host=player("host")), "open")
        )
        reads_of_the_runner = list(calls)  # its first command on the partition asks the end
        joined = await matchmaking.handle_command(
            command("room-ROOM0", pb.JoinRoom(player=player("guest")), "join")
        )
        assert joined.accepted
        await matchmaking.directory.catch_up()
        assert calls == reads_of_the_runner == ["end_offset"]
        assert matchmaking.directory.player_rooms == {"host": "ROOM0", "guest": "ROOM0"}

        # Somebody else writes a partition this instance still believes it owns: unseen until
        # the instance learns it lost that partition.
        other = Matchmaking(log, settings)
        await other.handle_command(command("room-ROOM1", pb.OpenRoom(host=player("h1")), "o1"))
        await matchmaking.directory.catch_up()
        assert "ROOM1" not in matchmaking.directory.rooms
        matchmaking.lose(room_partition("ROOM1"))
        await matchmaking.directory.catch_up()
        assert "ROOM1" in matchmaking.directory.rooms
    finally:
        await log.close()


def counted(calls: list[str], name: str, method: Any) -> Any:
    async def call(*args: Any) -> Any:
        calls.append(name)
        return await method(*args)

    return call
