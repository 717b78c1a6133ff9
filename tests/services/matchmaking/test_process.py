"""`arena matchmaking` as a real process, killed with SIGKILL while a room waits: after a restart
the room's timer still fires, once."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

from arena_runtime import topics
from arena_runtime.config import load_settings
from arena_runtime.envelope import CODEC, new_command
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb

from tests.processes.arena_process import ArenaProcess, arena_env, free_port
from tests.services.matchmaking.harness import LobbyClient, player


def metric(process: ArenaProcess, name: str) -> float | None:
    found = re.search(rf"^{re.escape(name)} (\S+)$", process.get("/metrics").text, re.MULTILINE)
    return float(found.group(1)) if found else None


def wait_metric(process: ArenaProcess, name: str, value: float, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while metric(process, name) != value:
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} never reached {value}:\n{process.output()}")
        time.sleep(0.05)


async def room_events(data_dir: Path) -> list[object]:
    log = open_event_log(load_settings({"ARENA_DATA_DIR": str(data_dir)}))
    await log.start()
    try:
        client = LobbyClient(log)
        (requested,) = await client.events("player-p_alice")
        return [e.payload for e in await client.events(f"room-{requested.payload.code}")]
    finally:
        await log.close()


async def test_a_waiting_room_expires_after_a_kill_and_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    log = open_event_log(load_settings({"ARENA_DATA_DIR": str(data_dir)}))
    await log.start()
    await topics.ensure_topics(log, 8)
    create = new_command("player-p_alice", pb.CreateRoom(request_id="r", host=player("p_alice")))
    await log.append(topics.MATCHMAKING_COMMANDS, [CODEC.command_record(create)])
    await log.close()

    env = arena_env(data_dir, free_port(), ARENA_ROOM_WAITING_SECONDS="6")
    first = ArenaProcess(["matchmaking"], env, tmp_path / "first.log")
    try:
        first.wait_until("/healthz", 200)
        wait_metric(first, "arena_rooms_open", 1.0)
    finally:
        first.terminate(signal.SIGKILL)
    opened = await room_events(data_dir)
    assert [type(p) for p in opened] == [pb.RoomOpened]

    second = ArenaProcess(["matchmaking"], env, tmp_path / "second.log")
    try:
        second.wait_until("/readyz", 200)
        wait_metric(second, "arena_rooms_open", 0.0)
        assert metric(second, 'arena_room_timers_fired_total{kind="waiting"}') == 1.0
    finally:
        assert second.terminate(signal.SIGTERM) == 0, second.output()
    events = await room_events(data_dir)
    assert [type(p) for p in events] == [pb.RoomOpened, pb.RoomClosed]
    assert events[1] == pb.RoomClosed(reason="expired")
