"""uvicorn's sans-I/O WebSocket protocol, writing a text message's frame itself.

Of uvicorn's three WebSocket implementations the sans-I/O one (websockets' ``ServerProtocol``) costs
the least per frame sent and received (docs/performance.md). Its ``send`` still builds each frame
through four layers of websockets (``send_text``, ``send_frame``, a ``Frame`` and its ``serialize``
into a ``BytesIO``): some twenty Python calls, a third of what a frame cost the server in all, the
socket write included. A server's frame is never masked and the gateway negotiates no extension, so
a text message's frame is only a header of two, four or ten bytes and the UTF-8 payload:
:class:`FramedProtocol` writes that, the same bytes, whenever the connection is open for messages,
and leaves everything else (the handshake, closing, a connection closing or closed, writes the
transport holds back) to uvicorn.

It reads uvicorn's protocol state (``handshake_complete``, ``disconnected``, ``initial_response``,
``writable``, ``transport``, ``conn``), which is not uvicorn's public API: uvicorn is pinned to
one minor release, and tests/runtime/test_websocket_frames.py compares the frames with those
uvicorn writes, so a release that renames any of it fails there, not in production.
"""

from __future__ import annotations

import struct
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")
#: FIN and the text opcode.
_TEXT = 0x81


def text_frame(payload: bytes) -> bytes:
    """A server's unmasked, unfragmented text frame of ``payload`` (RFC 6455, 5.2)."""
    length = len(payload)
    if length < 126:
        return _SHORT.pack(_TEXT, length) + payload
    if length < 65536:
        return _MEDIUM.pack(_TEXT, 126, length) + payload
    return _LONG.pack(_TEXT, 127, length) + payload


class FramedProtocol(WebSocketsSansIOProtocol):
    """uvicorn's ``websockets-sansio`` protocol with text messages framed here (see the module)."""

    def write_text(self, text: str) -> bool:
        """Write a text message now, on the caller's turn of the loop, if the connection is open
        for messages and the transport takes writes; False (nothing written): :meth:`send` it.

        For an app that writes many messages (the gateway's pushes): no coroutine, no ASGI
        message and no ``StopIteration`` per message."""
        if (
            self.handshake_complete
            and not self.disconnected
            and self.initial_response is None
            and self.writable.is_set()
            and self.conn.state is State.OPEN
            and not self.conn.extensions
        ):
            self.transport.write(text_frame(text.encode()))
            return True
        return False

    async def send(self, message: Any) -> None:
        text = message.get("text")
        if text is not None and message["type"] == "websocket.send" and self.write_text(text):
            return
        await super().send(message)
