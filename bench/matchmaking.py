"""Matchmaking throughput: rooms opened and filled through the whole service, on the embedded log.

* service: N CreateRoom commands appended at once, consumed by the matchmaking service (command
  worker, directory, follow-ups), until N rooms are open; then N JoinRoom until every room plays
  and its StartMatch is sent. A room costs three decided commands (CreateRoom, OpenRoom,
  JoinRoom), five events and three sent commands (OpenRoom, StartMatch, and the gateway's own).
* baseline: the runtime's StreamRunner alone answering 3 × N commands with one event each
  (trivial decide), called directly: the ceiling the service's bookkeeping is measured against.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from typing import Any

from arena_matchmaking.rooms import RoomStatus
from arena_matchmaking.service import NAME, build_workers
from arena_runtime import topics
from arena_runtime.config import Settings, load_settings
from arena_runtime.envelope import CODEC, Command, new_command
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.host import Service
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.streams import StreamRunner

PARTITIONS = 4


def _settings(data_dir: str) -> Settings:
    return load_settings({"ARENA_DATA_DIR": data_dir, "ARENA_PARTITIONS": str(PARTITIONS)})


async def _until(done: Any, what: str, within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.01)


async def _service(rooms: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as data_dir:
        settings = _settings(data_dir)
        log = open_event_log(settings)
        await log.start()
        await topics.ensure_topics(log, PARTITIONS)
        matchmaking, workers = build_workers(log, settings)
        service = Service(NAME, workers)
        await service.start()
        await _until(service.ready, "service ready")
        directory = matchmaking.directory
        try:
            started = time.perf_counter()
            creates = [
                new_command(
                    f"player-p{i}",
                    pb.CreateRoom(request_id=f"r{i}", host=pb.LobbyPlayer(player_id=f"p{i}")),
                )
                for i in range(rooms)
            ]
            await log.append(
                topics.MATCHMAKING_COMMANDS, [CODEC.command_record(c) for c in creates]
            )
            await _until(lambda: len(directory.rooms) == rooms, "rooms open")
            opened = time.perf_counter()
            joins = [
                new_command(f"room-{code}", pb.JoinRoom(player=pb.LobbyPlayer(player_id=f"g{i}")))
                for i, code in enumerate(sorted(directory.rooms))
            ]
            await log.append(topics.MATCHMAKING_COMMANDS, [CODEC.command_record(c) for c in joins])
            await _until(
                lambda: all(r.status is RoomStatus.PLAYING for r in directory.rooms.values()),
                "rooms playing",
            )
            playing = time.perf_counter()
        finally:
            await service.stop()
            await log.close()
        return opened - started, playing - opened


async def _baseline(commands: int) -> float:
    with tempfile.TemporaryDirectory() as data_dir:
        log = open_event_log(_settings(data_dir))
        await log.start()
        await topics.ensure_topics(log, PARTITIONS)
        runner: StreamRunner[int] = StreamRunner(
            log,
            topics.MATCHMAKING_EVENTS,
            initial=lambda stream: 0,
            apply=lambda state, event: state + 1,
            decide=lambda state, command: [pb.RoomClosed(reason="bench")],
        )
        batch: list[Command] = [
            new_command(f"room-{i}", pb.LeaveRoom(player_id="x")) for i in range(commands)
        ]
        started = time.perf_counter()
        for command in batch:
            await runner.handle(command)
        elapsed = time.perf_counter() - started
        await log.close()
        return elapsed


def run(quick: bool = False) -> None:
    rooms = 200 if quick else 1000
    open_s, join_s = asyncio.run(_service(rooms))
    base_s = asyncio.run(_baseline(3 * rooms))
    room_rate = rooms / (open_s + join_s)
    command_rate = 3 * rooms / (open_s + join_s)
    base_rate = 3 * rooms / base_s
    print(f"rooms: {rooms} on {PARTITIONS} partitions (embedded log)")
    print(f"  open (CreateRoom + OpenRoom):     {rooms / open_s:8.0f} rooms/s")
    print(f"  fill (JoinRoom -> StartMatch):    {rooms / join_s:8.0f} rooms/s")
    print(f"  whole room, create to StartMatch:  {room_rate:7.0f} rooms/s")
    print(f"  decided commands:                  {command_rate:7.0f} commands/s")
    print(f"baseline: bare StreamRunner, one event per command: {base_rate:7.0f} commands/s")
    print(f"ratio service / baseline: {command_rate / base_rate:.2f}")
