"""The accounts API through a real gateway over the embedded log, with the projections running:
register, sign in and out, guest upgrade, typed refusals, and each kind of abuse."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import Player
from tests.e2e.servers import arena, settings_for

PASSWORD = "correct horse battery"
_names = itertools.count(1)


def fresh(prefix: str = "user") -> str:
    return f"{prefix}{next(_names)}x{id(_names) % 997}"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("accounts")),
        command_timeout_seconds=5,
        projection_poll_ms=20,
        sign_in_rate=0.01,
        sign_in_burst=3,
        register_burst=1000,
    )
    async with arena(settings, services=("gateway", "projections")) as base:
        yield base


@pytest.fixture
async def http(url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        yield client


async def register(http: httpx.AsyncClient, name: str) -> dict[str, Any]:
    response = await http.post("/v1/accounts", json={"username": name, "password": PASSWORD})
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_register_sign_in_and_me(http: httpx.AsyncClient) -> None:
    name = fresh("Alice")
    made = await register(http, name)
    assert made["username"] == name and made["player_id"].startswith("p_")
    me = (await http.get("/v1/me", headers=auth(made["token"]))).json()
    assert me == {"player_id": made["player_id"], "name": name, "kind": "account"}
    # Sign in by any case of the name: the same account, a new session.
    signed = await http.post("/v1/sessions", json={"username": name.upper(), "password": PASSWORD})
    assert signed.status_code == 201, signed.text
    assert signed.json()["player_id"] == made["player_id"]
    assert signed.json()["token"] != made["token"]


async def test_usernames_are_unique_whatever_their_case(http: httpx.AsyncClient) -> None:
    name = fresh("Bob")
    await register(http, name)
    again = await http.post("/v1/accounts", json={"username": name.lower(), "password": PASSWORD})
    assert again.status_code == 409
    assert again.json()["detail"]["code"] == "username_taken"


async def test_concurrent_registrations_of_one_name_make_one_account(
    http: httpx.AsyncClient,
) -> None:
    name = fresh("Race")
    answers = await asyncio.gather(
        *(
            http.post("/v1/accounts", json={"username": n, "password": PASSWORD})
            for n in (name, name.lower(), name.upper(), name)
        )
    )
    assert sorted(a.status_code for a in answers) == [201, 409, 409, 409]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"username": "Guest_ABCD", "password": PASSWORD}, 422, "username_reserved"),
        ({"username": "x y", "password": PASSWORD}, 422, "invalid_username"),
        ({"username": "shortpass", "password": "1234567"}, 422, "invalid_password"),
    ],
)
async def test_bad_registrations_get_typed_refusals(
    http: httpx.AsyncClient, body: dict[str, str], status: int, code: str
) -> None:
    response = await http.post("/v1/accounts", json=body)
    assert response.status_code == status
    assert response.json()["detail"]["code"] == code
    signed = await http.post("/v1/sessions", json=body)
    # Nothing was created. A password no account can have is refused by its shape, as it is
    # documented; the rest is an unknown user.
    assert signed.status_code == (422 if code == "invalid_password" else 401)


async def test_shape_errors_are_refused_before_anything_runs(http: httpx.AsyncClient) -> None:
    assert (await http.post("/v1/accounts", json={"username": "abc"})).status_code == 422
    too_long = {"username": "a" * 65, "password": PASSWORD}
    assert (await http.post("/v1/accounts", json=too_long)).status_code == 422


async def test_wrong_password_and_unknown_user_get_the_same_answer(
    http: httpx.AsyncClient,
) -> None:
    name = fresh("Carol")
    await register(http, name)
    wrong = await http.post("/v1/sessions", json={"username": name, "password": "not it at all"})
    unknown = await http.post(
        "/v1/sessions", json={"username": fresh("nobody"), "password": PASSWORD}
    )
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert wrong.json()["detail"]["code"] == "invalid_credentials"


async def test_sign_in_attempts_are_limited_per_username_and_address(
    http: httpx.AsyncClient,
) -> None:
    name = fresh("Dave")
    await register(http, name)
    codes = [
        (
            await http.post("/v1/sessions", json={"username": name, "password": "wrong!wrong"})
        ).status_code
        for _ in range(4)
    ]
    assert codes == [401, 401, 401, 429]
    # Even the right password waits now, from this address: the limit does not tell guesses
    # apart (tests/services/accounts/test_sign_in_throttle.py: other addresses do not wait).
    right = await http.post("/v1/sessions", json={"username": name, "password": PASSWORD})
    assert right.status_code == 429
    assert right.json()["detail"]["code"] == "rate_limited"


async def test_sign_out_ends_the_token_everywhere(http: httpx.AsyncClient, url: str) -> None:
    made = await register(http, fresh("Erin"))
    assert (
        await http.delete("/v1/sessions/current", headers=auth(made["token"]))
    ).status_code == 204
    assert (await http.get("/v1/me", headers=auth(made["token"]))).status_code == 401
    # A repeated sign-out is refused like any call without a live token, and changes nothing.
    assert (
        await http.delete("/v1/sessions/current", headers=auth(made["token"]))
    ).status_code == 401
    player = Player(url)
    player.token = made["token"]
    await player.connect(auth=False)
    answer = await player.request("auth", token=made["token"])
    assert answer["type"] == "error" and answer["code"] == "auth_failed"
    await player.close()


async def test_a_caller_sees_and_ends_only_their_own_sessions(http: httpx.AsyncClient) -> None:
    alice = await register(http, fresh("Fay"))
    bob = await register(http, fresh("Gus"))
    mine = (await http.get("/v1/sessions", headers=auth(alice["token"]))).json()
    assert [s["session_id"] for s in mine] == [alice["session_id"]]
    assert "token" not in mine[0]
    # Bob names Alice's session: not his, so it does not exist for him, and it lives on.
    ended = await http.delete(f"/v1/sessions/{alice['session_id']}", headers=auth(bob["token"]))
    assert ended.status_code == 404
    assert (await http.get("/v1/me", headers=auth(alice["token"]))).status_code == 200
    # Alice ends her other device's session.
    other = await http.post(
        "/v1/sessions", json={"username": alice["username"], "password": PASSWORD}
    )
    other_id = other.json()["session_id"]
    assert (
        await http.delete(f"/v1/sessions/{other_id}", headers=auth(alice["token"]))
    ).status_code == 204
    assert (await http.get("/v1/me", headers=auth(other.json()["token"]))).status_code == 401
    assert (await http.get("/v1/sessions")).status_code == 401


async def test_a_guest_upgrades_and_keeps_its_player_id(http: httpx.AsyncClient) -> None:
    guest = (await http.post("/v1/guests")).json()
    name = fresh("Hal")
    up = await http.post(
        "/v1/accounts/upgrade",
        json={"username": name, "password": PASSWORD},
        headers=auth(guest["token"]),
    )
    assert up.status_code == 201, up.text
    assert up.json()["player_id"] == guest["player_id"]
    me = (await http.get("/v1/me", headers=auth(up.json()["token"]))).json()
    assert me == {"player_id": guest["player_id"], "name": name, "kind": "account"}
    assert (await http.get("/v1/me", headers=auth(guest["token"]))).status_code == 401
    # An account is no guest: it cannot upgrade again.
    again = await http.post(
        "/v1/accounts/upgrade",
        json={"username": fresh("Hal"), "password": PASSWORD},
        headers=auth(up.json()["token"]),
    )
    assert again.status_code == 409 and again.json()["detail"]["code"] == "not_a_guest"


async def test_a_failed_upgrade_leaves_the_guest_as_it_was(http: httpx.AsyncClient) -> None:
    taken = await register(http, fresh("Ivy"))
    guest = (await http.post("/v1/guests")).json()
    up = await http.post(
        "/v1/accounts/upgrade",
        json={"username": taken["username"], "password": PASSWORD},
        headers=auth(guest["token"]),
    )
    assert up.status_code == 409
    me = (await http.get("/v1/me", headers=auth(guest["token"]))).json()
    assert me["kind"] == "guest" and me["player_id"] == guest["player_id"]


async def test_one_guest_racing_two_upgrades_becomes_one_account(
    http: httpx.AsyncClient,
) -> None:
    guest = (await http.post("/v1/guests")).json()
    answers = await asyncio.gather(
        *(
            http.post(
                "/v1/accounts/upgrade",
                json={"username": fresh("Jay"), "password": PASSWORD},
                headers=auth(guest["token"]),
            )
            for _ in range(2)
        )
    )
    assert sorted(a.status_code for a in answers) in ([201, 401], [201, 409])


async def test_every_route_wants_a_token(http: httpx.AsyncClient) -> None:
    for method, path in (
        ("GET", "/v1/sessions"),
        ("DELETE", "/v1/sessions/current"),
        ("DELETE", "/v1/sessions/s_0123456789abcdef"),
        ("POST", "/v1/accounts/upgrade"),
    ):
        body = {"username": "whoever", "password": PASSWORD}
        response = await http.request(method, path, json=body, headers=auth("forged-token"))
        assert response.status_code == 401, path


async def test_openapi_documents_the_accounts_routes(http: httpx.AsyncClient) -> None:
    paths = (await http.get("/openapi.json")).json()["paths"]
    assert {"/v1/accounts", "/v1/accounts/upgrade", "/v1/sessions"} <= set(paths)
    assert {"get", "post"} <= set(paths["/v1/sessions"])
