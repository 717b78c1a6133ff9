"""What the gateway does for the browser client (arena_gateway.browser, docs/client.md): the
session in an HttpOnly cookie that only the gateway's own pages can act with, the same-origin
WebSocket, and the built files at /, over a real server and real sockets."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.e2e.client import Player
from tests.e2e.servers import arena, settings_for

ASK = {"X-Arena-Session": "cookie"}
FOREIGN = "https://play.example"  # on the allow-list: a page of another origin the operator trusts
SCRIPT = "console.log('arena');" * 200


@pytest.fixture(scope="module")
def web_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("web")
    (root / "index.html").write_text("<!doctype html><title>Arena</title>")
    (root / "assets").mkdir()
    (root / "assets" / "index-abc123.js").write_text(SCRIPT)
    return root


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory, web_dir: Path) -> AsyncIterator[str]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("browser")), allowed_origins=FOREIGN, web_dir=web_dir
    )
    async with arena(settings) as base:
        yield base


def own(url: str) -> dict[str, str]:
    return {"Origin": url}


async def cookie_guest(http: httpx.AsyncClient, url: str) -> tuple[str, dict[str, object]]:
    answer = await http.post("/v1/guests", headers={**ASK, **own(url)})
    assert answer.status_code == 201
    return answer.cookies["arena_session"], answer.json()


async def test_a_page_gets_its_session_as_an_httponly_cookie_and_never_the_token(url: str) -> None:
    async with httpx.AsyncClient(base_url=url) as http:
        answer = await http.post("/v1/guests", headers={**ASK, **own(url)})
        body = answer.json()
        assert answer.status_code == 201 and "token" not in body
        assert set(body) == {"player_id", "name"}
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith("arena_session=")
        for flag in ("HttpOnly", "SameSite=Strict", "Path=/"):
            assert flag in cookie
        assert answer.headers["cache-control"] == "no-store"
        # Without the header, the answer is the bearer-token one of every other client.
        plain = await http.post("/v1/guests")
        assert "token" in plain.json() and "set-cookie" not in plain.headers
        # A foreign page cannot ask for the cookie (nor would a browser send it one).
        foreign = await http.post("/v1/guests", headers={**ASK, "Origin": FOREIGN})
        assert "token" in foreign.json() and "set-cookie" not in foreign.headers


async def test_the_cookie_authenticates_reads_and_only_same_origin_writes(url: str) -> None:
    async with httpx.AsyncClient(base_url=url) as http:
        token, guest = await cookie_guest(http, url)
        http.cookies.clear()
        jar = {"Cookie": f"arena_session={token}"}
        me = await http.get("/v1/me", headers=jar)
        assert me.status_code == 200 and me.json()["player_id"] == guest["player_id"]
        # A write from another origin, or with no Origin, does not ride the cookie.
        for headers in ({**jar, "Origin": FOREIGN}, jar):
            refused = await http.delete("/v1/sessions/current", headers=headers)
            assert refused.status_code == 401
        assert (await http.get("/v1/me", headers=jar)).status_code == 200
        # From the page itself it signs out, and the cookie is cleared.
        out = await http.delete("/v1/sessions/current", headers={**jar, **ASK, **own(url)})
        assert out.status_code == 204
        assert "arena_session=;" in out.headers["set-cookie"]
        assert "Max-Age=0" in out.headers["set-cookie"]
        assert (await http.get("/v1/me", headers=jar)).status_code == 401


async def test_upgrading_a_cookie_guest_replaces_the_cookie_and_keeps_the_player(url: str) -> None:
    async with httpx.AsyncClient(base_url=url) as http:
        token, guest = await cookie_guest(http, url)
        http.cookies.clear()
        jar = {"Cookie": f"arena_session={token}"}
        credentials = {"username": "cookie_upgrader", "password": "a long enough secret"}
        upgraded = await http.post(
            "/v1/accounts/upgrade", json=credentials, headers={**jar, **ASK, **own(url)}
        )
        assert upgraded.status_code == 201, upgraded.text
        assert "token" not in upgraded.json()
        assert upgraded.json()["player_id"] == guest["player_id"]
        account = upgraded.cookies["arena_session"]
        assert account != token
        assert "Max-Age=" in upgraded.headers["set-cookie"]
        me = await http.get("/v1/me", headers={"Cookie": f"arena_session={account}"})
        assert me.json() == {
            "player_id": guest["player_id"],
            "name": "cookie_upgrader",
            "kind": "account",
        }
        assert (await http.get("/v1/me", headers=jar)).status_code == 401


async def test_the_page_s_own_origin_passes_the_origin_check_with_no_setting(url: str) -> None:
    # The allow-list holds only FOREIGN: the gateway's own origin passes all the same.
    player = await Player(url).sign_in()
    await player.connect(origin=url)
    assert await player.ok("pong") == {}
    await player.close()
    with pytest.raises(InvalidStatus):
        await Player(url).connect(origin="http://127.0.0.1:1", auth=False)


async def test_a_same_origin_socket_is_authenticated_by_the_cookie_and_reconnects_without_token(
    url: str,
) -> None:
    async with httpx.AsyncClient(base_url=url) as http:
        token, guest = await cookie_guest(http, url)
    ws_url = url.replace("http://", "ws://") + "/v1/ws"
    jar = {"Cookie": f"arena_session={token}"}
    async with connect(ws_url, origin=url, additional_headers=jar) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"type": "play_ai", "id": "a1", "level": "easy"}))
        seen: list[dict[str, Any]] = []
        while not any(m["type"] == "snapshot" for m in seen):  # the game has started
            seen.append(json.loads(await ws.recv()))
        match_id = next(m for m in seen if m["type"] == "snapshot")["match_id"]
    async with connect(ws_url, origin=url, additional_headers=jar) as ws:  # type: ignore[arg-type]
        message = {"type": "reconnect", "id": "r1", "match_id": match_id}
        await ws.send(json.dumps({**message, "player_id": guest["player_id"]}))
        seen = [json.loads(await ws.recv()) for _ in range(2)]
        assert {m["type"] for m in seen} == {"snapshot", "ack"}, seen
        assert next(m for m in seen if m["type"] == "ack")["result"]["match_id"] == match_id
    # A page of another origin, even an allowed one, cannot use the cookie.
    async with connect(ws_url, origin=FOREIGN, additional_headers=jar) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"type": "pong", "id": "p1"}))
        refused = json.loads(await ws.recv())
        assert (refused["type"], refused["code"]) == ("error", "unauthenticated")


async def test_the_built_client_is_served_at_the_root_without_shadowing_the_api(
    url: str, web_dir: Path
) -> None:
    async with httpx.AsyncClient(base_url=url) as http:
        index = await http.get("/")
        assert index.status_code == 200 and "<title>Arena</title>" in index.text
        assert index.headers["cache-control"] == "no-cache"
        script = await http.get(
            "/assets/index-abc123.js", headers={"Accept-Encoding": "gzip"}, follow_redirects=False
        )
        assert script.headers["content-encoding"] == "gzip"
        assert script.text == SCRIPT  # httpx decoded it
        assert int(script.headers["content-length"]) < len(gzip.compress(SCRIPT.encode())) + 64
        assert "immutable" in script.headers["cache-control"]
        assert (await http.get("/assets/missing.js")).status_code == 404
        assert (await http.get("/v1/me")).status_code == 401  # the API, not a file
        assert (await http.get("/openapi.json")).status_code == 200
        assert (await http.post("/")).status_code != 200  # only reads are files
        (web_dir / "index.html").rename(web_dir / "index.off")
        try:
            missing = await http.get("/")
            assert missing.status_code == 503 and "make install" in missing.text
        finally:
            (web_dir / "index.off").rename(web_dir / "index.html")
