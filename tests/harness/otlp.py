"""A real OTLP/HTTP trace receiver for tests: the processes' own exporters post their spans to it
(protobuf, decoded with opentelemetry-proto, as a collector would)."""

from __future__ import annotations

import asyncio
import gzip
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.harness.support import free_port


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, object]
    #: ``service.instance.id``: which process of the service (two gateways, say).
    instance: str = ""


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
                                resource.get("service.instance.id", ""),
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


async def until(what: str, check: object, within: float = 30.0) -> None:
    assert callable(check)
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.1)
