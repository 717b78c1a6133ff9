"""The gateway during a match outage: it logs the fault at WARNING with what to do, its metrics
move, and `/readyz` says "degraded" (still 200: docs/operations.md, "Health and metrics"); once
a match service is back, the same command is answered and all of it clears by itself.

Gateway, matchmaking and match are separate `arena` processes over one embedded log."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.e2e.client import signed_in
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

MATCH_TOPIC = "arena.commands.match"
ANSWERING = f'arena_gateway_service_answering{{topic="{MATCH_TOPIC}"}}'


def sample(process: ArenaProcess, prefix: str) -> float:
    """The value of the first series of /metrics starting with ``prefix``."""
    for line in process.get("/metrics").text.splitlines():
        if line.startswith(prefix):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no series {prefix}")


def warnings(process: ArenaProcess) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in process.output().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("level") == "warning"]


async def test_a_match_outage_is_logged_counted_and_shown_then_clears(tmp_path: Path) -> None:
    def start(name: str, number: int = 0) -> ArenaProcess:
        env = arena_env(
            tmp_path / "var",
            free_port(),
            ARENA_COMMAND_TIMEOUT_SECONDS="1",
            ARENA_LOG_FORMAT="json",
        )
        return ArenaProcess([name], env, tmp_path / f"{name}-{number}.log")

    gateway, matchmaking, match = start("gateway"), start("matchmaking"), start("match")
    try:
        for process in (gateway, matchmaking, match):
            await asyncio.to_thread(process.wait_until, "/readyz", 200)
        player = await signed_in(gateway.url)
        await player.ok("play_ai", level="easy")
        await player.push("snapshot")
        assert (await player.request("skip")).get("code") != "timeout"  # ack, or not your turn
        assert sample(gateway, ANSWERING) == 1

        assert await asyncio.to_thread(match.terminate) == 0
        assert (await player.request("skip", id="probe"))["code"] == "timeout"
        ready = gateway.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["status"] == "degraded", ready.json()
        assert MATCH_TOPIC in ready.json()["degraded"]
        assert sample(gateway, ANSWERING) == 0
        timeouts = f'arena_gateway_commands_total{{outcome="timeout",topic="{MATCH_TOPIC}"'
        assert sample(gateway, timeouts) >= 1
        (warned,) = [w for w in warnings(gateway) if w.get("topic") == MATCH_TOPIC]
        assert "kubectl" in str(warned["event"]) and "docs/operations.md" in str(warned["event"])

        match = start("match", 1)
        await asyncio.to_thread(match.wait_until, "/readyz", 200)
        # The same message again: the command the outage left waiting, now answered.
        assert (await player.request("skip", id="probe")).get("code") != "timeout"
        assert gateway.get("/readyz").json()["status"] == "ready"
        assert sample(gateway, ANSWERING) == 1
        assert "commands are answered again" in gateway.output()
        await player.close()
    finally:
        for process in (gateway, matchmaking, match):
            process.close()
