"""Sessions that run out while their WebSockets are open, through a real gateway: an account's
socket is closed when its session expires, and a connected guest's session does not expire."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from arena_gateway.connection import SESSION_ENDED

from tests.e2e.client import Player
from tests.e2e.servers import arena, settings_for
from tests.services.accounts.test_abuse import PASSWORD, auth, closed_with, fresh, register, socket

ACCOUNT_SECONDS = 5
GUEST_TTL_SECONDS = 3


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("expiry")),
        account_session_seconds=ACCOUNT_SECONDS,
        session_ttl_seconds=GUEST_TTL_SECONDS,
        ws_session_check_seconds=0.3,
    )
    async with arena(settings, services=("gateway", "projections")) as base:
        yield base


async def test_an_accounts_socket_is_closed_when_its_session_expires(url: str) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        account = await register(http, fresh("Ada"))
        player = await socket(url, account["token"])
        try:
            assert (await player.request("pong"))["type"] == "ack"  # open and answering
            code, reason = await closed_with(player)
            assert (code, reason) == (SESSION_ENDED, "session_expired")
            # Closed only once the session had ended, not before.
            assert time.time() * 1000 >= account["expires_at_ms"]
            assert (await http.get("/v1/me", headers=auth(account["token"]))).status_code == 401
            # Signing in again gives a session whose socket stays open.
            body = {"username": account["username"], "password": PASSWORD}
            again = (await http.post("/v1/sessions", json=body)).json()
            renewed = await socket(url, again["token"])
            assert (await renewed.request("pong"))["type"] == "ack"
            await renewed.close()
        finally:
            await player.close()


async def test_a_connected_guest_outlives_the_session_ttl_and_a_gone_one_does_not(
    url: str,
) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        staying = (await http.post("/v1/guests")).json()
        leaving = (await http.post("/v1/guests")).json()
        connected: Player = await socket(url, staying["token"])
        try:
            await asyncio.sleep(GUEST_TTL_SECONDS * 2.5)
            assert (await connected.request("pong"))["type"] == "ack"
            me = await http.get("/v1/me", headers=auth(staying["token"]))
            assert me.status_code == 200 and me.json()["player_id"] == staying["player_id"]
            gone = await http.get("/v1/me", headers=auth(leaving["token"]))
            assert gone.status_code == 401
        finally:
            await connected.close()
