"""The host's HTTP surface: /healthz, /readyz and /metrics in front of an optional service app.

Health routes are answered here for every process, so `arena match` (no HTTP API of its own) is
probed exactly like the gateway; any other path goes to the gateway's app when the process has one.

The server also keeps clients from holding resources for nothing (docs/operations.md, "Limits"):
a request's head must arrive within ``ARENA_HTTP_HEADER_TIMEOUT_SECONDS`` and hold at most
``MAX_HEAD_BYTES``; a connection silent for ``ARENA_HTTP_IDLE_TIMEOUT_SECONDS`` between requests
or inside a body is closed; and a WebSocket frame larger than ``ARENA_WS_MAX_MESSAGE_BYTES`` is
refused from its header, before its payload is read, by closing the socket with 1009.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from arena_runtime import metrics
from arena_runtime.config import Settings
from arena_runtime.host.websocket import FramedProtocol

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

JSON = b"application/json"
PROMETHEUS = metrics.CONTENT_TYPE.encode()
NOT_FOUND = b'{"detail":{"code":"not_found","message":"Not Found"}}'
#: Request line and headers together; browsers send a few kilobytes, servers refuse far less
#: than this (nginx: 8 KiB per line). Larger heads are refused with 400 as they are parsed.
MAX_HEAD_BYTES = 64 * 1024
REQUEST_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class HealthApp:
    """ASGI app answering the probes; readiness comes from a callable naming each service."""

    def __init__(
        self,
        readiness: Callable[[], dict[str, bool]],
        metrics: Callable[[], bytes],
        inner: ASGIApp | None = None,
        degraded: Callable[[], dict[str, str]] = dict,
    ) -> None:
        self._readiness = readiness
        self._metrics = metrics
        self._inner = inner
        self._degraded = degraded

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] == "http" and path in ("/healthz", "/readyz", "/metrics"):
            if path == "/healthz":
                await _respond(send, 200, JSON, json.dumps({"status": "alive"}).encode())
            elif path == "/readyz":
                services = self._readiness()
                ready = all(services.values())
                body: dict[str, object] = {
                    "status": "ready" if ready else "catching up",
                    "services": services,
                }
                degraded = self._degraded()
                if degraded:  # still ready: see docs/operations.md, "Health and metrics"
                    body["degraded"] = degraded
                    if ready:
                        body["status"] = "degraded"
                await _respond(send, 200 if ready else 503, JSON, json.dumps(body).encode())
            else:
                await _respond(send, 200, PROMETHEUS, self._metrics())
        elif self._inner is not None:
            await self._inner(scope, receive, send)
        elif scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "http":
            await _respond(send, 404, JSON, NOT_FOUND)


async def _respond(send: Send, status: int, content_type: bytes, body: bytes) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


class HttpServer(uvicorn.Server):
    """uvicorn without its own signal handling: the host decides when the process stops.

    uvicorn would re-raise a captured SIGTERM after shutting down, ending the process by the
    signal instead of with exit code 0 after the services have committed.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind(host: str, port: int) -> socket.socket:
    """Bind the listening socket up front, so a taken port fails start-up with a clear error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Naming the protocol matters: asyncio disables Nagle's algorithm only on sockets whose
    # proto is IPPROTO_TCP, and accepted sockets inherit it. With Nagle on, a reply written right
    # after a push waits for the client's delayed ACK, some 40 ms on Linux.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class HeadTooLargeError(Exception):
    """Raised from a parser callback: httptools reports it as a parser error (400, closed)."""


class HostConfig(uvicorn.Config):
    header_timeout: float = 10.0


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol with the deadlines and the head size it lacks.

    uvicorn times only the wait between two requests (its keep-alive timeout): a connection that
    never sends a byte, a head sent a byte at a time and a body that stops half-way were each
    kept open forever. One timer at a time covers the client's turn: the head's deadline from
    the connection's opening (or a request's first byte) to the end of its head, then the idle
    timeout, re-armed by every piece of the body, until the request is whole.
    """

    config: HostConfig

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._started = False
        self._arm(self.config.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._started and self._timer is None:
            # The first bytes after a response (uvicorn's keep-alive timer is cancelled by them).
            self._arm(self.config.header_timeout)
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes = 0
        self._started = True

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value))
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._arm(self.config.timeout_keep_alive)  # the body's turn: idle timeout
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self._arm(self.config.timeout_keep_alive)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        self._started = False
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()  # the WebSocket protocol takes the connection over
        super().handle_websocket_upgrade()

    def _count(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            raise HeadTooLargeError

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._timed_out)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        if self._started:  # part of a request came: answer it, as HTTP says
            self.transport.write(REQUEST_TIMEOUT)
        self.transport.close()


def make_server(app: ASGIApp, sock: socket.socket, settings: Settings) -> HttpServer:
    # No permessage-deflate: the protocol's messages are a few hundred bytes, and compressing
    # each one cost more CPU than the rest of a socket write.
    config = HostConfig(
        app,
        log_config=None,
        access_log=False,
        lifespan="on",
        http=GuardedHttpProtocol,
        # uvicorn's websockets-sansio, framing text messages itself (arena_runtime.host.websocket).
        ws=FramedProtocol,
        ws_per_message_deflate=False,
        # websockets reads a frame's length from its header and fails the connection with
        # 1009 when it is over this, before the payload is buffered.
        ws_max_size=settings.ws_max_message_bytes,
        timeout_keep_alive=settings.http_idle_timeout_seconds,  # type: ignore[arg-type]
    )
    config.header_timeout = settings.http_header_timeout_seconds
    # uvicorn reads host/port only for its log line; the socket is already bound.
    config.host, config.port = sock.getsockname()[:2]
    return HttpServer(config)
