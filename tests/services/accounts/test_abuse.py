"""Abuse of the accounts surface through a real gateway: registration floods from one address,
sessions that end while their WebSockets are open, and every private route without a live token.

Each test speaks from its own loopback address (127.0.0.N), so the per-address limits of one
test never spend another's budget.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_gateway.connection import SESSION_ENDED

from tests.e2e.client import Player
from tests.e2e.servers import arena, settings_for

PASSWORD = "correct horse battery"
SESSION_SECONDS = 4
_names = itertools.count(1)
#: Routes anyone may call: how a caller gets a token in the first place, probes and the docs.
PUBLIC = {
    ("POST", "/v1/guests"),
    ("POST", "/v1/accounts"),
    ("POST", "/v1/sessions"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
}


def fresh(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("abuse")),
        command_timeout_seconds=5,
        projection_poll_ms=20,
        register_rate=0.001,
        register_burst=2,
        sign_in_burst=20,
        account_session_seconds=SESSION_SECONDS,
    )
    async with arena(settings, services=("gateway", "projections")) as base:
        yield base


def client_from(url: str, address: str) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(base_url=url, transport=transport, timeout=10)


async def register(http: httpx.AsyncClient, name: str) -> dict[str, Any]:
    made = await http.post("/v1/accounts", json={"username": name, "password": PASSWORD})
    assert made.status_code == 201, made.text
    return dict(made.json())


async def socket(url: str, token: str) -> Player:
    player = Player(url)
    player.token = token
    assert (await player.connect())["type"] == "ack"  # type: ignore[index]
    return player


async def closed_with(player: Player) -> tuple[int | None, str]:
    return await player.closed(wait=10)


async def test_registrations_are_rate_limited_per_address(url: str) -> None:
    async with client_from(url, "127.0.0.2") as flood, client_from(url, "127.0.0.3") as other:
        for _ in range(2):
            await register(flood, fresh("flood"))
        refused = await flood.post(
            "/v1/accounts", json={"username": fresh("flood"), "password": PASSWORD}
        )
        assert refused.status_code == 429
        assert refused.json()["detail"]["code"] == "rate_limited"
        # Shape errors are answered before the limit (they cost no hash) and still typed.
        bad = await flood.post("/v1/accounts", json={"username": "x", "password": PASSWORD})
        assert bad.status_code == 422 and bad.json()["detail"]["code"] == "invalid_username"
        # A guest upgrade hashes too: same budget, and the refused guest stays a guest.
        guest = (await flood.post("/v1/guests")).json()
        up = await flood.post(
            "/v1/accounts/upgrade",
            json={"username": fresh("flood"), "password": PASSWORD},
            headers=auth(guest["token"]),
        )
        assert up.status_code == 429 and up.json()["detail"]["code"] == "rate_limited"
        me = await flood.get("/v1/me", headers=auth(guest["token"]))
        assert me.json()["kind"] == "guest"
        # Another address has its own budget.
        await register(other, fresh("other"))


async def test_a_stranger_guessing_a_password_never_locks_its_owner_out(url: str) -> None:
    async with client_from(url, "127.0.0.8") as owner, client_from(url, "127.0.0.9") as stranger:
        name = (await register(owner, fresh("Owen")))["username"]
        wrong = {"username": name, "password": "not the password"}
        answers = [await stranger.post("/v1/sessions", json=wrong) for _ in range(30)]
        assert {a.status_code for a in answers} == {401, 429}  # the stranger is slowed down
        # ... and the owner, from their own address, signs in as usual.
        right = await owner.post("/v1/sessions", json={"username": name, "password": PASSWORD})
        assert right.status_code == 201, right.text
        refused = next(a for a in answers if a.status_code == 429)
        assert refused.json()["detail"]["code"] == "rate_limited"
        assert int(refused.headers["Retry-After"]) >= 1


async def test_ending_a_session_closes_its_sockets_and_only_its(url: str) -> None:
    async with client_from(url, "127.0.0.4") as http:
        first = await register(http, fresh("Kim"))
        body = {"username": first["username"], "password": PASSWORD}
        second = (await http.post("/v1/sessions", json=body)).json()
        a, b = await socket(url, first["token"]), await socket(url, second["token"])
        try:
            ended = await http.delete(
                f"/v1/sessions/{second['session_id']}", headers=auth(first["token"])
            )
            assert ended.status_code == 204
            assert await closed_with(b) == (SESSION_ENDED, "session_ended")
            assert (await a.request("pong"))["type"] == "ack"  # the other session's socket lives
            out = await http.delete("/v1/sessions/current", headers=auth(first["token"]))
            assert out.status_code == 204
            assert await closed_with(a) == (SESSION_ENDED, "signed_out")
        finally:
            await a.close()
            await b.close()


async def test_a_guest_signing_out_or_upgrading_is_closed_out(url: str) -> None:
    async with client_from(url, "127.0.0.5") as http:
        leaving = (await http.post("/v1/guests")).json()
        upgrading = (await http.post("/v1/guests")).json()
        gone, up = await socket(url, leaving["token"]), await socket(url, upgrading["token"])
        try:
            out = await http.delete("/v1/sessions/current", headers=auth(leaving["token"]))
            assert out.status_code == 204
            assert await closed_with(gone) == (SESSION_ENDED, "signed_out")

            name = fresh("Lou")
            made = await http.post(
                "/v1/accounts/upgrade",
                json={"username": name, "password": PASSWORD},
                headers=auth(upgrading["token"]),
            )
            assert made.status_code == 201, made.text
            assert await closed_with(up) == (SESSION_ENDED, "upgraded")
            # The client re-authenticates with the account's token: same player, new name.
            again = await socket(url, made.json()["token"])
            ack = await again.request("auth", token=made.json()["token"])
            assert ack["result"] == {"player_id": upgrading["player_id"], "name": name}
            await again.close()
        finally:
            await gone.close()
            await up.close()


def _concrete(path: str) -> str:
    """A path with each parameter filled by a value its pattern accepts."""
    values = {
        "{session_id}": "s_0123456789abcdef",
        "{player_id}": "p_0123456789abcdef0123456789abcdef",
        "{match_id}": "m1",
        "{game}": "maths-warriors",
        "{board}": "pd-classic",
        "{season}": "2026-12",
        "{day}": "2026-12-07",
        "{code}": "ABCDEF",
    }
    for name, value in values.items():
        path = path.replace(name, value)
    assert "{" not in path, f"no value for a parameter of {path}"
    return path


async def test_every_private_route_refuses_a_missing_revoked_or_expired_token(url: str) -> None:
    async with client_from(url, "127.0.0.6") as http:
        spec = (await http.get("/openapi.json")).json()
        routes = [
            (method.upper(), path)
            for path, operations in spec["paths"].items()
            for method in operations
            if method in ("get", "post", "put", "patch", "delete")
        ]
        private = [r for r in routes if r not in PUBLIC]
        assert len(private) >= 10 and ("GET", "/v1/me") in private  # the walk sees the app

        guest = (await http.post("/v1/guests")).json()
        assert (await http.delete("/v1/sessions/current", headers=auth(guest["token"]))).is_success
        account = await register(http, fresh("Max"))
        signed_out = (
            await http.post(
                "/v1/sessions", json={"username": account["username"], "password": PASSWORD}
            )
        ).json()
        headers = auth(signed_out["token"])
        assert (await http.delete("/v1/sessions/current", headers=headers)).is_success
        # The first session expires (ARENA_ACCOUNT_SESSION_SECONDS) without being signed out.
        await asyncio.sleep(max(0.0, account["expires_at_ms"] / 1000 - time.time()) + 0.3)

        body = {"username": "whoever1", "password": PASSWORD}
        for method, path in private:
            for why, headers in (
                ("no token", {}),
                ("forged token", auth("forged-token")),
                ("revoked guest token", auth(guest["token"])),
                ("signed-out account token", auth(signed_out["token"])),
                ("expired account token", auth(account["token"])),
            ):
                answer = await http.request(method, _concrete(path), json=body, headers=headers)
                assert answer.status_code == 401, (method, path, why, answer.text)


async def test_a_socket_never_takes_on_another_player(url: str) -> None:
    async with client_from(url, "127.0.0.7") as http:
        ann = (await http.post("/v1/guests")).json()
        ben = (await http.post("/v1/guests")).json()
    sly = await socket(url, ben["token"])
    try:
        # Ann's token on Ben's socket: the socket stays Ben's and says so.
        swapped = await sly.request("auth", token=ann["token"])
        assert swapped["type"] == "error" and swapped["code"] == "auth_failed"
        # Ben's token naming Ann's player id, and Ann's id with Ann's token on Ben's socket.
        for token in (ben["token"], ann["token"]):
            taken = await sly.request(
                "reconnect", player_id=ann["player_id"], token=token, match_id="m1"
            )
            assert taken["type"] == "error" and taken["code"] == "auth_failed"
        assert (await sly.request("pong"))["type"] == "ack"
    finally:
        await sly.close()
    # As a first message, a reconnect naming another player is refused and the socket closed.
    intruder = Player(url)
    await intruder.connect(auth=False)
    first = await intruder.request(
        "reconnect", player_id=ann["player_id"], token=ben["token"], match_id="m1"
    )
    assert first["type"] == "error" and first["code"] == "auth_failed"
    code, _ = await intruder.closed(wait=10)
    assert code == 1008  # docs/protocol.md: auth_failed closes the socket with 1008
    await intruder.close()
