"""The host's HTTP surface: /healthz, /readyz and /metrics in front of an optional service app.

Health routes are answered here for every process, so `arena match` (no HTTP API of its own) is
probed exactly like the gateway; any other path goes to the gateway's app when the process has one.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import uvicorn

from arena_runtime import metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

JSON = b"application/json"
PROMETHEUS = metrics.CONTENT_TYPE.encode()


class HealthApp:
    """ASGI app answering the probes; readiness comes from a callable naming each service."""

    def __init__(
        self,
        readiness: Callable[[], dict[str, bool]],
        metrics: Callable[[], bytes],
        inner: ASGIApp | None = None,
    ) -> None:
        self._readiness = readiness
        self._metrics = metrics
        self._inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] == "http" and path in ("/healthz", "/readyz", "/metrics"):
            if path == "/healthz":
                await _respond(send, 200, JSON, json.dumps({"status": "alive"}).encode())
            elif path == "/readyz":
                services = self._readiness()
                ready = all(services.values())
                body = {"status": "ready" if ready else "catching up", "services": services}
                await _respond(send, 200 if ready else 503, JSON, json.dumps(body).encode())
            else:
                await _respond(send, 200, PROMETHEUS, self._metrics())
        elif self._inner is not None:
            await self._inner(scope, receive, send)
        elif scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "http":
            await _respond(send, 404, JSON, b'{"detail":"Not Found"}')


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


def make_server(app: ASGIApp, sock: socket.socket) -> HttpServer:
    # No permessage-deflate: the protocol's messages are a few hundred bytes, and compressing
    # each one cost more CPU than the rest of a socket write.
    config = uvicorn.Config(
        app, log_config=None, access_log=False, lifespan="on", ws_per_message_deflate=False
    )
    # uvicorn reads host/port only for its log line; the socket is already bound.
    config.host, config.port = sock.getsockname()[:2]
    return HttpServer(config)
