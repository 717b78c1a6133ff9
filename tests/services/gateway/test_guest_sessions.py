"""Issue 12, item 1: a guest's session outlives any restart, for its whole lifetime.

Guests' sessions are recorded in the log (``guest-<session id>`` streams of the accounts topic),
so a gateway that restarted with an empty cache (the embedded mode's is in memory), or whose
Redis lost its data, still knows every open guest session, and a signed-out one stays out.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import httpx
import pytest
import redis.asyncio as redis
from arena_gateway.identity import token_hash

from tests.e2e.servers import arena, settings_for

GATEWAY = ("gateway",)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def me(url: str, token: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        return await http.get("/v1/me", headers=auth(token))


async def new_guest(url: str) -> dict[str, str]:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        made = await http.post("/v1/guests")
    assert made.status_code == 201, made.text
    return dict(made.json())


async def sign_out(url: str, token: str) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        out = await http.delete("/v1/sessions/current", headers=auth(token))
    assert out.status_code == 204, out.text


async def test_a_guest_session_outlives_a_restart_and_a_sign_out_stays_out(
    tmp_path: Path,
) -> None:
    settings = settings_for(tmp_path, command_timeout_seconds=5)
    async with arena(settings, GATEWAY) as url:
        kept, ended = await new_guest(url), await new_guest(url)
        await sign_out(url, ended["token"])
    async with arena(settings, GATEWAY) as url:  # the in-process cache starts empty
        found = await me(url, kept["token"])
        assert found.status_code == 200, found.text
        assert found.json() == {
            "player_id": kept["player_id"],
            "name": kept["name"],
            "kind": "guest",
        }
        assert (await me(url, ended["token"])).status_code == 401
        await sign_out(url, kept["token"])
    async with arena(settings, GATEWAY) as url:
        assert (await me(url, kept["token"])).status_code == 401


async def test_a_guest_session_past_its_lifetime_is_not_brought_back(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, command_timeout_seconds=5, session_ttl_seconds=1)
    async with arena(settings, GATEWAY) as url:
        guest = await new_guest(url)
    # Its recorded end (1 s, plus the renewal slack of 1/24 s) passes while the process is down.
    await asyncio.sleep(1.2)
    async with arena(settings, GATEWAY) as url:
        assert (await me(url, guest["token"])).status_code == 401


@pytest.mark.redis
async def test_a_guest_session_outlives_redis_losing_its_data(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """What a Redis restart without persistence does: every key gone. The log answers."""
    prefix = f"{redis_prefix}gs{secrets.token_hex(3)}:"
    settings = settings_for(
        tmp_path, command_timeout_seconds=5, redis_url=redis_url, cache_prefix=prefix
    )
    client = redis.from_url(redis_url)
    try:
        async with arena(settings, GATEWAY) as url:
            guest = await new_guest(url)
            key = f"{prefix}key:session:{token_hash(guest['token'])}"  # RedisCache._key
            assert await client.exists(key) == 1
            keys = [k async for k in client.scan_iter(match=f"{prefix}*")]
            assert await client.delete(*keys) >= 1
            assert (await me(url, guest["token"])).status_code == 200
            assert await client.exists(key) == 1  # cached again
    finally:
        await client.aclose()


async def test_an_upgraded_guest_stays_upgraded_and_a_failed_upgrade_stays_a_guest(
    tmp_path: Path,
) -> None:
    settings = settings_for(tmp_path, command_timeout_seconds=5, register_burst=100)
    body = {"password": "correct horse battery"}
    async with arena(settings, GATEWAY) as url, httpx.AsyncClient(base_url=url) as http:
        upgraded, kept = await new_guest(url), await new_guest(url)
        up = await http.post(
            "/v1/accounts/upgrade",
            json={**body, "username": "Upgraded1"},
            headers=auth(upgraded["token"]),
        )
        assert up.status_code == 201, up.text
        taken = await http.post(
            "/v1/accounts/upgrade",
            json={**body, "username": "upgraded1"},
            headers=auth(kept["token"]),
        )
        assert taken.status_code == 409
    async with arena(settings, GATEWAY) as url:
        assert (await me(url, upgraded["token"])).status_code == 401
        assert (await me(url, kept["token"])).json()["kind"] == "guest"
