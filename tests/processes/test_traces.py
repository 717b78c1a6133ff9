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
import gzip
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.e2e.client import signed_in
from tests.e2e.games import next_move_push
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

SERVICES = ("gateway", "matchmaking", "match", "projections")


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, object]


class OtlpReceiver:
    """An OTLP/HTTP trace receiver: POST /v1/traces, protobuf in, protobuf out."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_error(404)
                    return
                receiver.receive(ExportTraceServiceRequest.FromString(body))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def receive(self, request: ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes: dict[str, object] = {}
                    for a in span.attributes:
                        kind = a.value.WhichOneof("value")
                        attributes[a.key] = getattr(a.value, kind) if kind else None
                    with self._lock:
                        self.spans.append(
                            ReceivedSpan(
                                resource.get("service.name", ""),
                                span.name,
                                span.trace_id.hex(),
                                span.span_id.hex(),
                                span.parent_span_id.hex(),
                                attributes,
                            )
                        )

    def trace(self, trace_id: str) -> list[ReceivedSpan]:
        with self._lock:
            return [s for s in self.spans if s.trace_id == trace_id]

    def find(self, name: str, **attributes: object) -> list[ReceivedSpan]:
        with self._lock:
            return [
                s
                for s in self.spans
                if s.name == name and all(s.attributes.get(k) == v for k, v in attributes.items())
            ]

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as otlp:
        yield otlp


async def until(what: str, check: object, within: float = 30.0) -> None:
    assert callable(check)
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.1)


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
