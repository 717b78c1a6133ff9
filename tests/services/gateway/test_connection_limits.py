"""Nobody holds the server's resources for nothing: connections that send nothing, a head sent a
byte at a time, a body that stops half-way, a head too large, sockets that never authenticate,
too many sockets and too many guests from one address. Each is refused or closed, with the
settings of docs/operations.md turned down so the tests see them act.

Each test speaks from its own loopback address (127.0.0.N), so the per-address limits of one
test never spend another's budget.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from arena_gateway.connection import POLICY_VIOLATION, TRY_AGAIN_LATER
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.e2e.servers import arena, settings_for

#: Far longer than any limit below: a connection still open after it was never going to close.
NEVER = 30.0
SOCKETS = 3
GUESTS = 3


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("limits")),
        http_header_timeout_seconds=0.5,
        http_idle_timeout_seconds=0.5,
        ws_auth_timeout_seconds=0.5,
        ws_max_sockets_per_address=SOCKETS,
        guest_rate=0.001,
        guest_burst=GUESTS,
    )
    async with arena(settings, services=("gateway",)) as base:
        yield base


async def raw_connection(
    url: str, address: str
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return await asyncio.open_connection(parts.hostname, parts.port, local_addr=(address, 0))


async def until_closed(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(), NEVER)


async def test_a_connection_that_sends_nothing_is_closed(url: str) -> None:
    reader, writer = await raw_connection(url, "127.0.0.41")
    assert await until_closed(reader) == b""
    writer.close()


async def test_a_head_sent_too_slowly_is_answered_408_and_closed(url: str) -> None:
    reader, writer = await raw_connection(url, "127.0.0.42")
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: arena\r\n")  # and never the blank line
    await writer.drain()
    assert (await until_closed(reader)).startswith(b"HTTP/1.1 408 ")
    writer.close()


async def test_a_body_that_stops_half_way_is_closed(url: str) -> None:
    reader, writer = await raw_connection(url, "127.0.0.43")
    writer.write(
        b"POST /v1/sessions HTTP/1.1\r\nHost: arena\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{"
    )
    await writer.drain()
    await until_closed(reader)
    writer.close()


async def test_a_head_too_large_is_refused_as_it_arrives(url: str) -> None:
    reader, writer = await raw_connection(url, "127.0.0.44")
    padding = b"X-Pad: " + b"a" * 100_000 + b"\r\n"
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: arena\r\n" + padding + b"\r\n")
    await writer.drain()
    assert (await until_closed(reader)).startswith(b"HTTP/1.1 400 ")
    writer.close()


async def test_a_kept_alive_connection_is_timed_again_for_its_next_head(url: str) -> None:
    reader, writer = await raw_connection(url, "127.0.0.45")
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: arena\r\n\r\n")
    await writer.drain()
    assert (await reader.readline()).startswith(b"HTTP/1.1 200 ")
    writer.write(b"GET /healthz HTTP/1.1\r\n")  # the next request's head, never finished
    await writer.drain()
    assert b"HTTP/1.1 408 " in await until_closed(reader)
    writer.close()


async def ws(url: str, address: str, query: str = "") -> ClientConnection:
    ws_url = url.replace("http://", "ws://") + "/v1/ws" + query
    return await connect(ws_url, local_addr=(address, 0))


async def close_of(socket: ClientConnection) -> tuple[int | None, str | None]:
    with pytest.raises(ConnectionClosed):
        while True:
            await asyncio.wait_for(socket.recv(), NEVER)
    return socket.close_code, socket.close_reason


async def test_a_socket_that_never_authenticates_is_closed(url: str) -> None:
    socket = await ws(url, "127.0.0.46")
    refusal = json.loads(await asyncio.wait_for(socket.recv(), NEVER))
    assert (refusal["type"], refusal["code"]) == ("error", "unauthenticated")
    assert (await close_of(socket))[0] == POLICY_VIOLATION


async def authenticated(url: str, address: str, token: str) -> ClientConnection | None:
    """A socket authenticated by its first message, or None if it was closed instead."""
    socket = await ws(url, address)
    try:
        await socket.send(json.dumps({"type": "auth", "id": "a", "token": token}))
        assert json.loads(await asyncio.wait_for(socket.recv(), NEVER))["type"] == "ack"
    except ConnectionClosed:
        return None
    return socket


async def test_sockets_from_one_address_are_capped(url: str) -> None:
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.51")
    async with httpx.AsyncClient(base_url=url, transport=transport) as http:
        token = (await http.post("/v1/guests")).json()["token"]
    sockets = [await authenticated(url, "127.0.0.47", token) for _ in range(SOCKETS)]
    over = await ws(url, "127.0.0.47")
    assert await close_of(over) == (TRY_AGAIN_LATER, "too_many_sockets")
    elsewhere = await authenticated(url, "127.0.0.48", token)  # another address's allowance
    assert elsewhere is not None
    await elsewhere.close()
    # A socket closed frees its place, once the server has seen it go.
    first = sockets.pop()
    assert first is not None
    await first.close()
    for _ in range(100):
        again = await authenticated(url, "127.0.0.47", token)
        if again is not None:
            await again.close()
            break
    else:
        raise AssertionError("no place came free after a socket closed")
    for socket in sockets:
        assert socket is not None
        await socket.close()


async def test_guests_from_one_address_are_throttled(url: str) -> None:
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.49")
    async with httpx.AsyncClient(base_url=url, transport=transport) as http:
        made = [await http.post("/v1/guests") for _ in range(GUESTS)]
        assert [m.status_code for m in made] == [201] * GUESTS
        refused = await http.post("/v1/guests")
        assert refused.status_code == 429
        assert refused.json()["detail"]["code"] == "rate_limited"
        assert int(refused.headers["Retry-After"]) >= 1
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.50")
    async with httpx.AsyncClient(base_url=url, transport=transport) as http:
        assert (await http.post("/v1/guests")).status_code == 201
