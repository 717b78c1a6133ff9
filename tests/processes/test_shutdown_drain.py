"""SIGTERM drains the gateway: every socket is told `server_shutdown`, then closed with 1012
(docs/protocol.md, "Server shutdown"); the process exits 0. Answers of commands in flight
meanwhile, and clients reconnecting elsewhere: tests/chaos/test_rolling_restart.py."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.client import Player, signed_in
from tests.processes.arena_process import ArenaProcess, arena_env, free_port


async def test_sigterm_tells_every_socket_then_closes_it_1012(
    tmp_path: Path,
) -> None:
    env = arena_env(tmp_path / "var", free_port(), ARENA_SERVE_PROJECTIONS="inline")
    process = ArenaProcess(["serve"], env, tmp_path / "arena.log")
    try:
        await asyncio.to_thread(process.wait_until, "/readyz", 200)
        player = await signed_in(process.url)
        idle: Player = await signed_in(process.url)
        await player.ok("play_ai", level="easy")
        await player.push("snapshot")
        process.proc.send_signal(signal.SIGTERM)
        for socket in (player, idle):
            assert await socket.push("server_shutdown") == {
                "type": "server_shutdown",
                "reconnect": True,
            }
            assert await socket.closed() == (1012, "server_shutdown")
        assert await asyncio.to_thread(process.proc.wait, 30) == 0
        output = process.output()
        assert "draining: closing sockets" in output and "sockets=2" in output, output
    finally:
        process.close()


def test_a_stop_that_overruns_its_limit_ends_the_process() -> None:
    """A stop stuck in a client library (aiokafka waiting on a broker that stopped answering,
    seen in CI) must not outlive Kubernetes' grace: the watchdog armed by the signal ends the
    process, from a thread, whatever the event loop is doing."""
    script = (
        "import time\n"
        "from arena_runtime.host.run import ShutdownWatchdog\n"
        "ShutdownWatchdog('stuck', limit=0.5).arm()\n"
        "time.sleep(60)\n"  # a stop that never ends, holding the main thread
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1, done
    assert time.monotonic() - started < 30
    assert "the stop overran its limit" in done.stdout + done.stderr
