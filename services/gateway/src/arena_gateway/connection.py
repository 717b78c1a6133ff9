"""One WebSocket: authenticate, then read client messages and answer each with ack or error.

Pushes to the client go through a bounded queue drained by one writer task, so a slow client can
never hold up the fan-out reader; a client too slow to keep up is disconnected.

The socket's frames are read and written through the ASGI ``receive`` and ``send`` the server
handed the app (:class:`DirectSocket` keeps them in the scope), not through the layers between
them and the endpoint: Starlette's WebSocket state checks and the exception handlers' wrappers of
``send``, which only watch HTTP responses, cost a few Python calls on every frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect
from pydantic import ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from arena_gateway import protocol as p
from arena_gateway.identity import Principal
from arena_gateway.protocol import COMPACT, ErrorCode, GatewayError, JsonText, ack_text

#: Pushes a client may have outstanding before it counts as too slow and is closed.
OUTBOX_LIMIT = 1000
POLICY_VIOLATION = 1008
#: A frame over ARENA_WS_MAX_MESSAGE_BYTES: the server closes before reading its payload.
MESSAGE_TOO_BIG = 1009
TRY_AGAIN_LATER = 1013
#: The gateway is shutting down (after a ``server_shutdown`` push): reconnect, to another
#: instance.
SERVICE_RESTART = 1012
SHUTDOWN_REASON = "server_shutdown"
#: The socket's session was signed out, ended or upgraded; the close reason says which.
SESSION_ENDED = 4001
#: Where :class:`DirectSocket` keeps a WebSocket's ``receive`` and ``send`` in its scope.
DIRECT_RECEIVE = "arena.websocket.receive"
DIRECT_SEND = "arena.websocket.send"


class DirectSocket:
    """ASGI middleware keeping each WebSocket's ``receive`` and ``send``, as this app was handed
    them, in the scope (``DIRECT_RECEIVE``, ``DIRECT_SEND``) for the connection's reads and
    writes after the handshake. Add it as the app's outermost middleware but those that do not
    wrap a WebSocket's ``receive`` or ``send`` (CookieSessions and WebClient do not)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[DIRECT_RECEIVE] = receive
            scope[DIRECT_SEND] = send
        await self.app(scope, receive, send)


def direct_receive(websocket: WebSocket) -> Receive:
    """The socket's frames as the server hands them (Starlette's when the app has no
    :class:`DirectSocket`)."""
    receive: Receive | None = websocket.scope.get(DIRECT_RECEIVE)
    return receive or websocket.receive


class Connection:
    def __init__(self, websocket: WebSocket, principal: Principal, token: str = "") -> None:
        self.websocket = websocket
        self.principal = principal
        #: Looked up again every ARENA_WS_SESSION_CHECK_SECONDS (Gateway.check_sessions).
        self.token = token
        self.player_id = principal.player_id
        self.match_id: str | None = None
        #: The match this socket last recorded as its session's (Gateway._match_of_message).
        self.session_match: str | None = None
        self.room_code: str | None = None
        #: The queue stream this socket waits in ("" when none).
        self.queued = ""
        self.watching: set[str] = {f"player-{principal.player_id}"}
        #: Set when a ping went out; cleared by pong. Still set at the next beat: close.
        self.ping_outstanding = False
        self.last_seen = time.monotonic()
        self.closed = False
        self.close_code = 1000
        self.close_reason = ""
        #: Messages to write: a dict is written as compact JSON, a str (a push relayed as the
        #: match service made it) as it is; None ends the writer. A deque and one future the
        #: writer waits on when it is empty: an asyncio.Queue's bookkeeping (getters, putters,
        #: unfinished tasks) cost more than the rest of a push.
        self._outbox: deque[dict[str, Any] | str | None] = deque()
        self._wake: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        send: Send | None = websocket.scope.get(DIRECT_SEND)
        self._send: Send = send or websocket.send
        #: The server's synchronous write of a text message, where it has one (the host's
        #: FramedProtocol.write_text): a push to an idle writer is written at once, on the
        #: caller's turn of the loop (the fan-out's), not on the writer task's next one, and
        #: without a coroutine of the server's send per message.
        write_text = getattr(getattr(send, "__self__", None), "write_text", None)
        self._write_text: Callable[[str], bool] | None = (
            write_text if callable(write_text) else None
        )

    def start_writer(self) -> None:
        self._writer = asyncio.create_task(self._write_loop())

    def push(self, message: dict[str, Any] | str) -> None:
        if self.closed:
            return
        if len(self._outbox) >= OUTBOX_LIMIT:
            self.hang_up(TRY_AGAIN_LATER)  # too slow to keep up
            return
        if not self._outbox and self._wake is not None and self._write_now(message):
            return
        self._outbox.append(message)
        self._wake_writer()

    def _write_now(self, message: dict[str, Any] | str) -> bool:
        """Write ``message`` now if the server can; False: queue it."""
        write_text = self._write_text
        if write_text is None:
            return False
        text = message if isinstance(message, str) else COMPACT.encode(message)
        try:
            return write_text(text)
        except (RuntimeError, OSError):
            self.hang_up(self.close_code)  # gone: the writer closes, as after a failed write
            return True

    def _wake_writer(self) -> None:
        wake = self._wake
        if wake is not None:
            self._wake = None
            if not wake.done():
                wake.set_result(None)

    def push_text(self, text: str) -> None:
        """A message already written as JSON (relayed views)."""
        self.push(text)

    def hang_up(self, code: int, reason: str = "") -> None:
        """Close the socket once what is queued is written; the reader then sees it closed."""
        if not self.closed:
            self.closed = True
            self.close_code = code
            self.close_reason = reason
            self._outbox.append(None)
            self._wake_writer()

    def ack(self, message_id: str, result: dict[str, Any] | JsonText | None = None) -> None:
        if isinstance(result, JsonText):
            self.push(ack_text(message_id, result))
        else:
            self.push({"type": "ack", "id": message_id, "result": result or {}})

    def error(self, message_id: str | None, code: str, message: str) -> None:
        self.push({"type": "error", "id": message_id, "code": code, "message": message})

    async def _write_loop(self) -> None:
        outbox = self._outbox
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not outbox:
                    self._wake = loop.create_future()
                    await self._wake
                    continue
                message = outbox.popleft()
                if message is None:
                    break
                if not isinstance(message, str):
                    message = COMPACT.encode(message)
                await self._send({"type": "websocket.send", "text": message})
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            self.closed = True
            with contextlib.suppress(Exception):
                await self.websocket.close(self.close_code, self.close_reason or None)

    async def close(self, code: int = 1000) -> None:
        """Stop writing (after what is queued) and close the socket."""
        if self._writer is None:
            with contextlib.suppress(Exception):
                await self.websocket.close(code)
            return
        self.hang_up(code)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._writer, 5)


def parse(text: str | None, max_bytes: int) -> p.ClientMessage:
    """A client message from a frame's text (None: a binary frame), or the typed refusal."""
    if text is None:
        raise GatewayError(ErrorCode.BAD_MESSAGE, "send JSON in text frames")
    # The server refuses larger frames before reading them (close 1009); this is for an app
    # served without that limit.
    if len(text) > max_bytes or len(text.encode()) > max_bytes:
        raise GatewayError(ErrorCode.MESSAGE_TOO_LARGE, f"messages are at most {max_bytes} bytes")
    try:  # one call for a good message; what it refuses is read again, for the refusal's words
        return p.CLIENT_MESSAGES.validate_json(text)
    except ValidationError:
        pass
    data = _load(text)
    try:
        return p.CLIENT_MESSAGES.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise GatewayError(ErrorCode.BAD_MESSAGE, f"{where}: {first['msg']}") from None


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise GatewayError(ErrorCode.BAD_MESSAGE, "not JSON") from None
    except RecursionError:  # a few kilobytes of [[[[...: json recurses once per level
        raise GatewayError(ErrorCode.BAD_MESSAGE, "nested too deeply") from None


def message_id(text: str | None) -> str | None:
    """The id of a message that could not be parsed, to echo in the error if possible."""
    try:
        data = _load(text) if text is not None else None
    except GatewayError:
        return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, str) and 0 < len(value) <= 64 else None
