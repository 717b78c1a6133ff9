"""The host's WebSocket protocol (arena_runtime.host.websocket.FramedProtocol) writes the bytes
uvicorn's own websockets-sansio protocol writes, message for message, while framing text messages
itself; and it leaves a closing connection to uvicorn.

Both servers are real uvicorn servers on loopback, read by a raw socket, so a uvicorn release
that renames the protocol state FramedProtocol reads fails here.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from arena_runtime.host.websocket import FramedProtocol, text_frame
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode
from websockets.server import ServerProtocol

#: Every header length (7-bit, 16-bit and 64-bit), at their edges, and text beyond ASCII.
MESSAGES = ["", "x", "y" * 125, "z" * 126, "é" * 100, "w" * 65535, "v" * 65536, "ü" * 40000]
BYE = 4001


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Accept, write MESSAGES (and one binary message), close; after the client's close, try
    once more (a closed connection's send must not write)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await receive()
    await send({"type": "websocket.accept"})
    await receive()  # the client's go
    for text in MESSAGES:
        await send({"type": "websocket.send", "text": text})
    await send({"type": "websocket.send", "bytes": b"\x00\x01"})
    await send({"type": "websocket.close", "code": BYE, "reason": "bye"})
    with contextlib.suppress(Exception):
        await send({"type": "websocket.send", "text": "after the close"})


@contextlib.asynccontextmanager
async def _server(protocol: type[asyncio.Protocol]) -> AsyncIterator[int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # connections wait in the backlog until the server accepts them
    config = uvicorn.Config(
        _app, ws=protocol, ws_per_message_deflate=False, log_config=None, lifespan="on"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task


async def _frames_written(protocol: type[asyncio.Protocol]) -> bytes:
    """Every byte the server writes after its handshake's answer, until it closes."""
    async with _server(protocol) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        await reader.readuntil(b"\r\n\r\n")
        writer.write(Frame(Opcode.TEXT, b"go").serialize(mask=True))
        written = b""
        while not written.endswith(b"bye"):  # the server's close frame: its reason ends it
            chunk = await asyncio.wait_for(reader.read(1 << 20), 30)
            assert chunk, "closed before the close frame"
            written += chunk
        writer.write(Frame(Opcode.CLOSE, BYE.to_bytes(2, "big") + b"bye").serialize(mask=True))
        written += await asyncio.wait_for(reader.read(), 30)
        writer.close()
        return written


async def test_framed_protocol_writes_what_uvicorns_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    framed_by_websockets: list[bytes] = []
    send_text = ServerProtocol.send_text

    def counted(self: ServerProtocol, data: Any, fin: bool = True) -> None:
        framed_by_websockets.append(bytes(data))
        send_text(self, data, fin)

    monkeypatch.setattr(ServerProtocol, "send_text", counted)
    theirs = await _frames_written(WebSocketsSansIOProtocol)
    assert len(framed_by_websockets) == len(MESSAGES)
    framed_by_websockets.clear()

    ours = await _frames_written(FramedProtocol)

    assert ours == theirs
    assert framed_by_websockets == []  # every text message was framed here, none by websockets
    assert ours.startswith(b"".join(text_frame(text.encode()) for text in MESSAGES))
