"""A scripted WebSocket player for the gateway tests: real sockets, the protocol of
docs/protocol.md, every ack or error matched to its message by id.

When the server closes the socket, a ``closed`` push carries its close code and reason. Any
other error while reading is the client's own failure: it fails every wait of the test instead
of passing for a close.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.wire_schemas import check_ack, check_push

WAIT = 15.0


class Player:
    def __init__(self, base_url: str, *, answer_pings: bool = True) -> None:
        self.base_url = base_url
        self.ws_url = base_url.replace("http://", "ws://") + "/v1/ws"
        self.answer_pings = answer_pings
        self.player_id = ""
        self.name = ""
        self.token = ""
        self.pushes: list[dict[str, Any]] = []
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._arrived = asyncio.Condition()
        self._reader: asyncio.Task[None] | None = None
        #: What broke the reader, if anything did but the socket closing.
        self._failure: Exception | None = None

    async def sign_in(self) -> Player:
        async with httpx.AsyncClient(base_url=self.base_url, timeout=WAIT) as http:
            response = await http.post("/v1/guests")
            response.raise_for_status()
        body = response.json()
        self.player_id, self.name, self.token = body["player_id"], body["name"], body["token"]
        return self

    async def connect(self, *, auth: bool = True, **kwargs: Any) -> dict[str, Any] | None:
        self._ws = await connect(self.ws_url, **kwargs)
        self._reader = asyncio.create_task(self._read())
        if auth:
            return await self.request("auth", token=self.token)
        return None

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await asyncio.wait([self._reader])
        if self._failure is not None:
            raise RuntimeError("the test client's reader failed") from self._failure

    async def _read(self) -> None:
        ws = self._ws
        assert ws is not None
        try:
            async for raw in ws:
                message = json.loads(raw)
                check_push(message)  # a game's push is what docs/asyncapi.yaml says
                if message["type"] in ("ack", "error") and message.get("id") in self._answers:
                    self._answers.pop(message["id"]).set_result(message)
                    continue
                if message["type"] == "ping" and self.answer_pings:
                    await self.send("pong")
                async with self._arrived:
                    self.pushes.append(message)
                    self._arrived.notify_all()
        except ConnectionClosed:
            pass  # closed, cleanly or not: the push below says how
        except Exception as exc:
            self._failure = exc
            self._end_waits(RuntimeError(f"the test client's reader failed: {exc!r}"))
            async with self._arrived:
                self._arrived.notify_all()
            raise
        self._end_waits(ConnectionError(f"closed ({ws.close_code} {ws.close_reason!r})"))
        async with self._arrived:
            self.pushes.append({"type": "closed", "code": ws.close_code, "reason": ws.close_reason})
            self._arrived.notify_all()

    def _end_waits(self, error: Exception) -> None:
        """No answer will come to the requests still waiting."""
        for future in self._answers.values():
            if not future.done():
                future.set_exception(error)
        self._answers.clear()

    async def send_raw(self, text: str) -> None:
        assert self._ws is not None
        await self._ws.send(text)

    async def send(self, type_: str, **fields: Any) -> str:
        message_id = fields.pop("id", None) or f"m{next(self._ids)}"
        await self.send_raw(json.dumps({"type": type_, "id": message_id, **fields}))
        return message_id

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Send a message and return its ack or error."""
        if self._failure is not None:
            raise RuntimeError("the test client's reader failed") from self._failure
        message_id = fields.get("id") or f"m{next(self._ids)}"
        fields["id"] = message_id
        future = self._answers[message_id] = asyncio.get_running_loop().create_future()
        await self.send(type_, **fields)
        answer = await asyncio.wait_for(future, WAIT)
        if answer["type"] == "ack":
            check_ack(type_, answer.get("result"))  # what docs/asyncapi.yaml says it carries
        return answer

    async def ok(self, type_: str, **fields: Any) -> dict[str, Any]:
        answer = await self.request(type_, **fields)
        assert answer["type"] == "ack", answer
        return dict(answer["result"])

    async def push(self, type_: str, wait: float = WAIT, **match: Any) -> dict[str, Any]:
        """The first push of this type (and these field values) not yet taken."""

        async def found() -> dict[str, Any]:
            async with self._arrived:
                while True:
                    if self._failure is not None:
                        raise RuntimeError("the test client's reader failed") from self._failure
                    for index, message in enumerate(self.pushes):
                        if message["type"] == type_ and all(
                            message.get(k) == v for k, v in match.items()
                        ):
                            return self.pushes.pop(index)
                    await self._arrived.wait()

        return await asyncio.wait_for(found(), wait)

    async def closed(self, wait: float = WAIT) -> tuple[int | None, str]:
        """Wait until the server closes the socket: its close code and reason."""
        message = await self.push("closed", wait)
        return message["code"], message["reason"]

    def has(self, type_: str) -> bool:
        return any(m["type"] == type_ for m in self.pushes)


async def signed_in(url: str) -> Player:
    """A new guest, signed in and authenticated on its own WebSocket."""
    player = await Player(url).sign_in()
    await player.connect()
    return player
