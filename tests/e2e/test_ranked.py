"""Accounts and ranked play end to end, through real sockets against every service on the
embedded log (issue 5): two accounts play ranked and both see the rating change, their history
and the leaderboard; a guest upgrades and keeps its games; ranked refuses guests and the same
account twice; nobody can act for another player or have a game rated twice."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import Player
from tests.e2e.servers import arena, settings_for

PASSWORD = "correct horse battery"
RANKED = "Ranked matches require two different accounts"
GAME = "maths-warriors"
_names = itertools.count(1)

SERVICES = ("gateway", "match", "matchmaking", "rating", "projections")


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("ranked")),
        projection_poll_ms=20,
        sign_in_burst=50,
        register_burst=1000,
    )
    async with arena(settings, services=SERVICES) as base:
        yield base


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def account(url: str, prefix: str = "player") -> Player:
    """A new account, signed in and connected."""
    name = f"{prefix}{next(_names)}"
    async with httpx.AsyncClient(base_url=url) as http:
        made = await http.post("/v1/accounts", json={"username": name, "password": PASSWORD})
    assert made.status_code == 201, made.text
    player = Player(url)
    player.player_id, player.name, player.token = (
        made.json()["player_id"],
        name,
        made.json()["token"],
    )
    await player.connect()
    return player


async def guest(url: str) -> Player:
    player = await Player(url).sign_in()
    await player.connect()
    return player


async def eventually(read: Callable[[], Awaitable[Any]], done: Callable[[Any], bool]) -> Any:
    """The projections follow the log: read until ``done`` (bounded; never a timed assertion)."""
    for _ in range(300):
        value = await read()
        if done(value):
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"never reached: {value}")


async def get(url: str, path: str, token: str) -> Any:
    async with httpx.AsyncClient(base_url=url) as http:
        response = await http.get(path, headers=auth(token))
    return response.json() if response.status_code == 200 else None


async def play_room(host: Player, joiner: Player, mode: str) -> dict[str, Any]:
    """host opens a room of ``mode``, joiner joins, joiner resigns: the game_over push."""
    code = (await host.ok("create_room", settings={"mode": mode}))["code"]
    await joiner.ok("join_room", code=code)
    snapshot = await host.push("snapshot")
    await joiner.push("snapshot")
    await joiner.ok("resign")
    over = await host.push("game_over")
    assert over["match_id"] == snapshot["match_id"]
    assert over["winner_player_id"] == host.player_id
    return over


async def test_two_accounts_play_ranked_and_both_see_rating_history_and_leaderboard(
    url: str,
) -> None:
    ann, ben = await account(url, "ann"), await account(url, "ben")
    over = await play_room(ann, ben, "ranked")
    match_id = over["match_id"]

    # Elo from 1000 each: E = 0.5, delta = round(24 * 0.5) = 12.
    for player, rating, result, change, opponent in (
        (ann, 1012, "win", 12, ben),
        (ben, 988, "loss", -12, ann),
    ):
        profile = await eventually(
            lambda p=player: get(url, f"/v1/players/{p.player_id}", p.token),
            lambda body: body is not None and body["games"] and body["games"][0]["games"] == 1,
        )
        record = profile["games"][0]
        assert (record["game"], record["rating"], record["ranked_games"]) == (GAME, rating, 1)
        history = await get(url, f"/v1/players/{player.player_id}/matches", player.token)
        (entry,) = history["matches"]
        assert entry["match_id"] == match_id and entry["mode"] == "ranked"
        assert (entry["result"], entry["rating_change"], entry["rating_after"]) == (
            result,
            change,
            rating,
        )
        assert entry["opponent_id"] == opponent.player_id
        assert entry["opponent_name"] == opponent.name

    board = await get(url, f"/v1/leaderboards/{GAME}?limit=100", ann.token)
    ranks = {e["player_id"]: e for e in board["entries"]}
    assert ranks[ann.player_id]["rating"] == 1012 and ranks[ben.player_id]["rating"] == 988
    assert ranks[ann.player_id]["rank"] < ranks[ben.player_id]["rank"]
    for player in (ann, ben):
        await player.close()


async def test_a_guest_upgrades_and_keeps_its_games(url: str) -> None:
    host, visitor = await guest(url), await guest(url)
    over = await play_room(host, visitor, "casual")
    async with httpx.AsyncClient(base_url=url) as http:
        up = await http.post(
            "/v1/accounts/upgrade",
            json={"username": f"kept{next(_names)}", "password": PASSWORD},
            headers=auth(host.token),
        )
    assert up.status_code == 201, up.text
    token = up.json()["token"]
    assert up.json()["player_id"] == host.player_id
    history = await eventually(
        lambda: get(url, f"/v1/players/{host.player_id}/matches", token),
        lambda body: body is not None and len(body["matches"]) == 1,
    )
    (entry,) = history["matches"]
    # Casual: logged, with no rating change.
    assert entry["match_id"] == over["match_id"] and entry["mode"] == "casual"
    assert entry["rating_change"] is None and entry["result"] == "win"

    # The upgraded player now plays ranked under the same id.
    upgraded = Player(url)
    upgraded.player_id, upgraded.token = host.player_id, token
    await upgraded.connect()
    rival = await account(url, "rival")
    ranked = await play_room(upgraded, rival, "ranked")
    history = await eventually(
        lambda: get(url, f"/v1/players/{host.player_id}/matches", token),
        lambda body: body is not None and len(body["matches"]) == 2,
    )
    assert [m["match_id"] for m in history["matches"]] == [ranked["match_id"], over["match_id"]]
    assert history["matches"][0]["rating_change"] == 12
    for player in (host, visitor, upgraded, rival):
        await player.close()


async def test_ranked_refuses_the_same_account_twice_and_guests(url: str) -> None:
    ann = await account(url, "same")
    async with httpx.AsyncClient(base_url=url) as http:
        again = await http.post("/v1/sessions", json={"username": ann.name, "password": PASSWORD})
    second = Player(url)
    second.player_id, second.token = ann.player_id, again.json()["token"]
    await second.connect()
    code = (await ann.ok("create_room", settings={"mode": "ranked"}))["code"]
    refused = await second.request("join_room", code=code)
    assert refused["type"] == "error"
    assert (refused["code"], refused["message"]) == ("ranked_requires_accounts", RANKED)

    visitor = await guest(url)
    refused = await visitor.request("join_room", code=code)
    assert (refused["code"], refused["message"]) == ("ranked_requires_accounts", RANKED)
    refused = await visitor.request("create_room", settings={"mode": "ranked"})
    assert (refused["code"], refused["message"]) == ("ranked_requires_accounts", RANKED)
    refused = await visitor.request("queue", mode="ranked")
    assert (refused["code"], refused["message"]) == ("ranked_requires_accounts", RANKED)
    refused = await ann.request("play_ai", level="easy", settings={"mode": "ranked"})
    assert refused["code"] == "ranked_requires_accounts"
    # The room still waits for a real opponent.
    rival = await account(url, "other")
    assert (await rival.ok("join_room", code=code))["code"] == code
    await ann.push("snapshot")
    for player in (ann, second, visitor, rival):
        await player.close()


async def test_the_ranked_queue_pairs_two_accounts_into_a_rated_game(url: str) -> None:
    a, b = await account(url, "qa"), await account(url, "qb")
    assert (await a.ok("queue", mode="ranked"))["queue"] == f"queue-{GAME}-ranked"
    await b.ok("queue", mode="ranked")
    snapshot = await a.push("snapshot")
    await b.push("snapshot")
    await b.ok("resign")
    history = await eventually(
        lambda: get(url, f"/v1/players/{a.player_id}/matches", a.token),
        lambda body: body is not None and len(body["matches"]) == 1,
    )
    (entry,) = history["matches"]
    assert entry["match_id"] == snapshot["match_id"]
    assert (entry["mode"], entry["rating_change"]) == ("ranked", 12)
    for player in (a, b):
        await player.close()


async def test_nobody_acts_for_another_or_gets_a_game_rated_twice(url: str) -> None:
    ann, ben = await account(url, "honest"), await account(url, "sly")
    code = (await ann.ok("create_room", settings={"mode": "ranked"}))["code"]
    await ben.ok("join_room", code=code)
    snapshot = await ann.push("snapshot")
    await ben.push("snapshot")
    # Naming another player in a message is not part of the protocol: refused, nothing happens.
    forged = await ben.request("resign", player_id=ann.player_id)
    assert forged["type"] == "error" and forged["code"] == "bad_message"
    # A resignation retried with the same message id is one command, answered twice.
    first = await ben.request("resign", id="give-up")
    again = await ben.request("resign", id="give-up")
    assert first["type"] == again["type"] == "ack"
    assert first["result"] == again["result"]
    over = await ann.push("game_over")
    assert over["winner_player_id"] == ann.player_id
    history = await eventually(
        lambda: get(url, f"/v1/players/{ann.player_id}/matches", ann.token),
        lambda body: body is not None and len(body["matches"]) == 1,
    )
    assert history["matches"][0]["match_id"] == snapshot["match_id"]
    profile = await get(url, f"/v1/players/{ann.player_id}", ann.token)
    assert profile["games"][0]["ranked_games"] == 1 and profile["games"][0]["rating"] == 1012
    # Signing out ends the token for the read API and the socket protocol alike.
    async with httpx.AsyncClient(base_url=url) as http:
        assert (
            await http.delete("/v1/sessions/current", headers=auth(ben.token))
        ).status_code == 204
    assert await get(url, f"/v1/players/{ann.player_id}", ben.token) is None
    late = Player(url)
    late.token = ben.token
    await late.connect(auth=False)
    assert (await late.request("auth", token=ben.token))["code"] == "auth_failed"
    for player in (ann, ben, late):
        await player.close()
