"""`arena serve` runs the projections in a child process (ARENA_SERVE_PROJECTIONS=process) that
lives and dies with it: arena_runtime.host.companion."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

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
