"""A scripted WebSocket player for the gateway tests: real sockets, the protocol of
docs/protocol.md, every ack or error matched to its message by id."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

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

    async def sign_in(self) -> Player:
        async with httpx.AsyncClient(base_url=self.base_url) as http:
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
            await asyncio.gather(self._reader, return_exceptions=True)

    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for raw in self._ws:
                message = json.loads(raw)
                if message["type"] in ("ack", "error") and message.get("id") in self._answers:
                    self._answers.pop(message["id"]).set_result(message)
                    continue
                if message["type"] == "ping" and self.answer_pings:
                    await self.send("pong")
                async with self._arrived:
                    self.pushes.append(message)
                    self._arrived.notify_all()
        except Exception:
            pass
        finally:
            async with self._arrived:
                self.pushes.append({"type": "closed"})
                self._arrived.notify_all()

    async def send_raw(self, text: str) -> None:
        assert self._ws is not None
        await self._ws.send(text)

    async def send(self, type_: str, **fields: Any) -> str:
        message_id = fields.pop("id", None) or f"m{next(self._ids)}"
        await self.send_raw(json.dumps({"type": type_, "id": message_id, **fields}))
        return message_id

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Send a message and return its ack or error."""
        message_id = fields.get("id") or f"m{next(self._ids)}"
        fields["id"] = message_id
        future = self._answers[message_id] = asyncio.get_running_loop().create_future()
        await self.send(type_, **fields)
        return await asyncio.wait_for(future, WAIT)

    async def ok(self, type_: str, **fields: Any) -> dict[str, Any]:
        answer = await self.request(type_, **fields)
        assert answer["type"] == "ack", answer
        return dict(answer["result"])

    async def push(self, type_: str, wait: float = WAIT, **match: Any) -> dict[str, Any]:
        """The first push of this type (and these field values) not yet taken."""

        async def found() -> dict[str, Any]:
            async with self._arrived:
                while True:
                    for index, message in enumerate(self.pushes):
                        if message["type"] == type_ and all(
                            message.get(k) == v for k, v in match.items()
                        ):
                            return self.pushes.pop(index)
                    await self._arrived.wait()

        return await asyncio.wait_for(found(), wait)

    def has(self, type_: str) -> bool:
        return any(m["type"] == type_ for m in self.pushes)


async def signed_in(url: str) -> Player:
    """A new guest, signed in and authenticated on its own WebSocket."""
    player = await Player(url).sign_in()
    await player.connect()
    return player
