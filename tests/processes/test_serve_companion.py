"""`arena serve` runs the projections in a child process (ARENA_SERVE_PROJECTIONS=process), and
any of match, matchmaking and rating too (ARENA_SERVE_SERVICES), each living and dying with it:
arena_runtime.host.companion."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from arena_games.maths_warriors.bot import Mirror

from tests.e2e.client import signed_in
from tests.e2e.games import play_to_the_end
from tests.processes.arena_process import ArenaProcess, arena_env, free_port


def projections_children(parent: ArenaProcess) -> list[psutil.Process]:
    children = psutil.Process(parent.proc.pid).children()
    return [c for c in children if "projections" in c.cmdline()]


def wait_gone(process: psutil.Process, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process.is_running() or process.status() == psutil.STATUS_ZOMBIE:
            return
        time.sleep(0.1)
    raise AssertionError(f"pid {process.pid} still runs")


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[ArenaProcess]:
    env = arena_env(tmp_path / "var", free_port())
    arena = ArenaProcess(["serve"], env, tmp_path / "serve.log")
    try:
        ready = arena.wait_until("/readyz", 200).json()
        assert ready["services"]["projections"] is True  # the child's readiness, as seen here
        yield arena
    finally:
        children = projections_children(arena) if arena.proc.poll() is None else []
        arena.close()
        for child in children:  # never leave one behind, whatever the test did
            child.kill()


def test_the_child_stops_with_its_parent_even_after_kill_9(serving: ArenaProcess) -> None:
    (child,) = projections_children(serving)
    serving.terminate(signal.SIGKILL)
    wait_gone(child)


def test_a_child_that_dies_takes_its_parent_down(serving: ArenaProcess) -> None:
    (child,) = projections_children(serving)
    child.kill()
    assert serving.proc.wait(timeout=30) == 1  # like any worker that dies
    assert "exited with" in serving.output()


def test_sigterm_stops_both_cleanly(serving: ArenaProcess) -> None:
    (child,) = projections_children(serving)
    assert serving.terminate() == 0
    wait_gone(child)
    (stopped,) = [
        line for line in serving.log_path.read_text().splitlines() if "companion stopped" in line
    ]
    assert "exit_code=0" in stopped  # the child stopped on its SIGTERM, cleanly


def test_inline_runs_no_child(tmp_path: Path) -> None:
    env = arena_env(tmp_path / "var", free_port(), ARENA_SERVE_PROJECTIONS="inline")
    arena = ArenaProcess(["serve"], env, tmp_path / "serve.log")
    try:
        assert arena.wait_until("/readyz", 200).json()["services"]["projections"] is True
        assert projections_children(arena) == []
    finally:
        arena.terminate()


def service_children(parent: ArenaProcess) -> dict[str, psutil.Process]:
    return {c.cmdline()[-1]: c for c in psutil.Process(parent.proc.pid).children()}


async def test_services_apart_play_a_game_through_their_own_processes(tmp_path: Path) -> None:
    """ARENA_SERVE_SERVICES: match, matchmaking and rating each in a child of their own, the
    gateway in `arena serve`; a room's game goes from the gateway to matchmaking to the match
    service and back across those processes (each told of the others' appends at once,
    arena_runtime.eventlog.peers), to its end; a kill -9 of `arena serve` takes every child."""
    env = arena_env(tmp_path / "var", free_port(), ARENA_SERVE_SERVICES="match,matchmaking,rating")
    arena = ArenaProcess(["serve"], env, tmp_path / "serve.log")
    children: dict[str, psutil.Process] = {}
    try:
        ready = arena.wait_until("/readyz", 200).json()["services"]
        assert ready == {name: True for name in ready} and {"match", "rating"} <= set(ready)
        children = service_children(arena)
        assert set(children) == {"match", "matchmaking", "rating", "projections"}
        host, guest = await signed_in(arena.url), await signed_in(arena.url)
        code = (await host.ok("create_room"))["code"]
        await guest.ok("join_room", code=code)
        snapshot = await host.push("snapshot")
        by_id = {host.player_id: host, guest.player_id: guest}
        seats = {s["seat"]: by_id[s["player_id"]] for s in snapshot["seats"]}
        over = await play_to_the_end(seats, Mirror.of(snapshot))
        assert over["reason"] == "all_captured"
        for player in (host, guest):
            await player.close()
        arena.terminate(signal.SIGKILL)
        for child in children.values():
            wait_gone(child)
    finally:
        for child in children.values():
            if child.is_running():
                child.kill()
        arena.close()
