"""One trace per client message, as a real OTLP receiver gets it from real processes' exporters.

Gateway, matchmaking, match and projections are separate `arena` processes over one embedded log,
each exporting its spans over OTLP/HTTP to a receiver in this test (protobuf, decoded with
opentelemetry-proto, as a collector would). One move sent by a player is one trace: the gateway's
span for the message is its only root, the match service's consumer and decide spans, the events'
publish, the projections' and the gateway fan-out's spans all hang from it, and a second message
is a trace of its own. The gateway's log line for the message carries that trace's id.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.client import signed_in
from tests.e2e.games import next_move_push
from tests.harness.otlp import OtlpReceiver, until
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

SERVICES = ("gateway", "matchmaking", "match", "projections")


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as otlp:
        yield otlp


async def test_one_client_message_is_one_trace_across_the_processes(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    processes = [
        ArenaProcess(
            [name],
            arena_env(
                tmp_path / "var",
                free_port(),
                ARENA_OTEL_EXPORTER_ENDPOINT=receiver.url,
                ARENA_MATCH_AI_THINK_MS="50",
                ARENA_LOG_FORMAT="json",
                ARENA_LOG_LEVEL="DEBUG" if name == "gateway" else "INFO",
                OTEL_BSP_SCHEDULE_DELAY="100",  # the SDK's batch: export every 0.1 s
            ),
            tmp_path / f"{name}.log",
        )
        for name in SERVICES
    ]
    gateway = processes[0]
    try:
        for process in processes:
            await asyncio.to_thread(process.wait_until, "/readyz", 200)
        player = await signed_in(gateway.url)
        await player.ok("play_ai", level="easy")
        snapshot = await player.push("snapshot")
        seat = next(s["seat"] for s in snapshot["seats"] if s["player_id"] == player.player_id)
        to_move = snapshot["to_move"]
        while to_move != seat:
            to_move = (await next_move_push(player))["to_move"]
        await player.ok("skip", id="traced-move")
        await player.ok("pong", id="another")

        await until("the gateway's span of the move", lambda: receiver.find("ws skip"))
        (root,) = receiver.find("ws skip", **{"arena.message.id": "traced-move"})
        assert root.parent_id == "" and root.service == "arena-gateway"

        def whole() -> bool:
            services = {s.service for s in receiver.trace(root.trace_id)}
            names = {s.name for s in receiver.trace(root.trace_id)}
            return {"arena-match", "arena-projections"} <= services and (
                "arena.match.events process" in names
            )

        await until("the trace reached the match service and back", whole)
        await asyncio.sleep(0.5)  # the exporters' next batch: the rest of the trace
        spans = receiver.trace(root.trace_id)
        ids = {s.span_id for s in spans}
        # One root, every other span's parent in the same trace: one connected trace.
        assert [s for s in spans if s.parent_id not in ids] == [root], spans
        by_service = {(s.service, s.name) for s in spans}
        assert {
            ("arena-gateway", "ws skip"),
            ("arena-match", "arena.commands.match process"),
            ("arena-match", "arena.v1.Skip handle"),
            ("arena-match", "arena.match.events publish"),
            ("arena-gateway", "arena.match.views process"),
            ("arena-projections", "arena.match.events process"),
        } <= by_service, by_service
        (decided,) = [s for s in spans if s.name == "arena.commands.match process"]
        assert decided.parent_id == root.span_id
        fanout = [s for s in spans if s.service == "arena-gateway" and s.parent_id != ""]
        assert all(s.parent_id != "" for s in fanout)

        # Another message, another trace: the root is the message, not the connection.
        (pong,) = receiver.find("ws pong", **{"arena.message.id": "another"})
        assert pong.trace_id != root.trace_id and pong.parent_id == ""

        # The gateway's log line of the message carries the trace id.
        lines = [json.loads(line) for line in gateway.output().splitlines() if line[:1] == "{"]
        (answered,) = [
            line
            for line in lines
            if line.get("event") == "message answered" and line.get("id") == "traced-move"
        ]
        assert answered["trace_id"] == root.trace_id
        await player.close()
    finally:
        for process in processes:
            process.close()
