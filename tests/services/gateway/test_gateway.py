"""The gateway alone over the embedded log, through real sockets: identity, the protocol's
answers, and every limit. Each refusal is a typed error; the connection goes on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from arena_gateway.connection import MESSAGE_TOO_BIG, POLICY_VIOLATION
from websockets.exceptions import InvalidStatus

from tests.e2e.client import Player
from tests.e2e.servers import CacheClock, arena, settings_for

#: The clock of the served gateway's cache, where the rate limit's buckets live.
CLOCK = CacheClock()


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("gateway")),
        allowed_origins="https://play.example",
        ws_rate_limit=10,
        ws_max_message_bytes=1024,
        ws_heartbeat_seconds=0.5,
        command_timeout_seconds=1,
    )
    async with arena(settings, services=("gateway",), cache_clock=CLOCK) as base:
        yield base


async def player(url: str) -> Player:
    p = await Player(url).sign_in()
    await p.connect()
    return p


async def test_a_guest_gets_a_name_an_id_and_a_token(url: str) -> None:
    async with httpx.AsyncClient(base_url=url) as http:
        guest = (await http.post("/v1/guests")).json()
        assert guest["name"].startswith("Guest_") and len(guest["name"]) == 10
        assert guest["player_id"].startswith("p_")
        me = await http.get("/v1/me", headers={"Authorization": f"Bearer {guest['token']}"})
        assert me.json() == {
            "player_id": guest["player_id"],
            "name": guest["name"],
            "kind": "guest",
        }
        assert (
            await http.get("/v1/me", headers={"Authorization": "Bearer nope"})
        ).status_code == 401
        assert (await http.get("/v1/me")).status_code == 401


async def test_openapi_lists_the_routes(url: str) -> None:
    async with httpx.AsyncClient(base_url=url) as http:
        paths = (await http.get("/openapi.json")).json()["paths"]
    assert {"/v1/guests", "/v1/me", "/healthz", "/readyz"} <= set(paths)


async def test_auth_by_first_message_or_query_token(url: str) -> None:
    p = await Player(url).sign_in()
    assert await p.connect() == {
        "type": "ack",
        "id": "m1",
        "result": {"player_id": p.player_id, "name": p.name},
    }
    await p.close()
    q = await Player(url).sign_in()
    await q.connect(auth=False, additional_headers={})
    await q.close()
    r = await Player(url).sign_in()
    r.ws_url += f"?token={r.token}"
    await r.connect(auth=False)
    assert (await r.ok("pong")) == {}
    await r.close()


async def test_a_bad_token_is_refused_and_the_socket_closed(url: str) -> None:
    p = Player(url)
    answer = await (await _connected(p)).request("auth", token="forged")
    assert answer["code"] == "auth_failed"
    code, _ = await p.closed()
    assert code == 1008  # docs/protocol.md: closed with code 1008


async def test_any_other_first_message_is_unauthenticated(url: str) -> None:
    p = await _connected(Player(url))
    assert (await p.request("skip"))["code"] == "unauthenticated"
    code, _ = await p.closed()
    assert code == 1008


async def _connected(p: Player) -> Player:
    await p.connect(auth=False)
    return p


async def test_malformed_messages_get_typed_errors_and_the_connection_goes_on(url: str) -> None:
    p = await player(url)
    await p.send_raw("not json")
    assert (await p.push("error"))["code"] == "bad_message"
    assert (await p.request("fly"))["code"] == "bad_message"
    assert (await p.request("strength", attacker="D4"))["code"] == "bad_message"
    assert p._ws is not None
    await p._ws.send(b'{"type": "pong", "id": "b"}')
    assert (await p.push("error"))["code"] == "bad_message"  # binary frames are refused
    assert await p.ok("pong") == {}
    await p.close()


async def test_a_binary_first_frame_is_refused_typed_and_closed(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    p = await _connected(Player(url))
    assert p._ws is not None
    await p._ws.send(b'{"type": "auth", "id": "b", "token": "whatever"}')
    refusal = await p.push("error")
    assert (refusal["code"], refusal["id"]) == ("bad_message", None)
    await p.push("closed")
    assert p._ws.close_code == POLICY_VIOLATION
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


async def test_json_nested_deeper_than_the_parser_goes_is_a_bad_message(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    deep = "[" * 1000  # under the size limit; json recurses once per level before it fails
    first = await _connected(Player(url))
    await first.send_raw(deep)
    assert (await first.push("error"))["code"] == "bad_message"
    await first.push("closed")
    p = await player(url)
    await p.send_raw(deep)
    assert (await p.push("error"))["code"] == "bad_message"
    assert await p.ok("pong") == {}  # the connection goes on
    await p.close()
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


async def test_malformed_frames_count_against_the_rate_limit(url: str) -> None:
    p = await player(url)
    for _ in range(30):
        await p.send_raw("not json")
    codes = [(await p.push("error"))["code"] for _ in range(30)]
    assert set(codes) == {"bad_message", "rate_limited"}
    assert codes.count("bad_message") <= 12  # about one second's worth (10 a second)
    await p.close()


async def test_a_frame_over_the_size_limit_closes_the_socket_with_1009(url: str) -> None:
    p = await player(url)
    await p.send_raw(json.dumps({"type": "skip", "id": "x", "pad": "a" * 2000}))
    await p.push("closed")
    assert p._ws is not None and p._ws.close_code == MESSAGE_TOO_BIG


async def test_moves_outside_a_match_are_refused(url: str) -> None:
    p = await player(url)
    assert (await p.request("skip"))["code"] == "not_in_match"
    assert (await p.request("rematch_request"))["code"] == "not_in_room"
    await p.close()


async def test_expressions_outside_the_whitelist_are_refused(url: str) -> None:
    p = await player(url)
    die = {"die": "D6", "value": 3}
    cases = {
        "invalid_token": [die, "^", die],
        "expression_too_long": ["("] * 65,
    }
    for code, tokens in cases.items():
        answer = await p.request("mind", target="D8", tokens=tokens)
        assert answer["code"] == code, answer
    answer = await p.request("mind", target="D8", tokens=[{"die": "D7", "value": 3}])
    assert answer["code"] == "invalid_token"
    await p.close()


async def test_more_than_ten_messages_a_second_are_dropped_with_an_error(url: str) -> None:
    p = await player(url)
    with CLOCK.stopped():
        CLOCK.advance(1.0)  # a full bucket: ten messages
        answers = await asyncio.gather(*(p.request("skip") for _ in range(15)))
        codes = [a.get("code") for a in answers]
        assert codes == ["not_in_match"] * 10 + ["rate_limited"] * 5
        assert (await p.request("skip"))["code"] == "rate_limited"  # no time, no new token
        CLOCK.advance(0.15)  # one and a half messages' worth: one more
        assert (await p.request("skip"))["code"] == "not_in_match"  # the connection goes on
        assert (await p.request("skip"))["code"] == "rate_limited"
    await p.close()


async def test_a_foreign_origin_is_refused(url: str) -> None:
    p = await Player(url).sign_in()
    with pytest.raises(InvalidStatus):
        await p.connect(origin="https://evil.example")
    q = await Player(url).sign_in()
    await q.connect(origin="https://play.example")
    assert await q.ok("pong") == {}
    await q.close()


async def test_a_client_that_never_answers_pings_is_closed(url: str) -> None:
    p = await Player(url, answer_pings=False).sign_in()
    await p.connect()
    await p.push("ping")
    code, _ = await p.closed(wait=5)
    assert code == 1008  # docs/protocol.md: an unanswered ping closes the socket (1008)
    q = await player(url)
    for _ in range(3):  # a beat pings only a socket that answered the beat before
        await q.push("ping")
    assert not q.has("closed")
    await q.close()
