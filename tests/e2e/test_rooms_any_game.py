"""Rooms of other games through real WebSockets: a Matrix Games room (eight seats) taken by two
players, a seat filled by the host, a watcher by code, the start; a Maze room of two. What the
match service then plays is its own (issue 14 phase 2); here the lobby's part, end to end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.client import Player, signed_in
from tests.e2e.servers import arena, settings_for


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    async with arena(settings_for(Path(tmp_path_factory.mktemp("rooms-any-game")))) as base:
        yield base


async def error_code(player: Player, type_: str, **fields: object) -> str:
    answer = await player.request(type_, **fields)
    assert answer["type"] == "error", answer
    return str(answer["code"])


async def test_a_matrix_room_two_players_a_fill_a_watcher_and_the_start(url: str) -> None:
    host, guest, watcher = await signed_in(url), await signed_in(url), await signed_in(url)
    assert await error_code(host, "create_room", game="matrix-games", settings={"beats": 0}) == (
        "setting_out_of_range"
    )
    assert await error_code(host, "create_room", game="chess") == "unknown_game"
    created = await host.ok("create_room", game="matrix-games", settings={"variant": "stag-hunt"})
    code = created["code"]
    await guest.ok("join_room", code=code)
    assert (await host.push("lobby", event="room_joined"))["data"]["player"]["player_id"]
    watched = await watcher.ok("watch_room", code=code)
    seats = watched.pop("seats")
    assert watched == {"code": code, "status": "waiting", "match_id": None}
    assert [(s["seat"], s["player_id"], s["policy"]) for s in seats] == [
        (1, host.player_id, ""),
        (2, guest.player_id, ""),
    ]
    assert await error_code(guest, "fill_seat", policy="counter") == "not_host"
    assert await error_code(host, "fill_seat", policy="minimax") == "invalid_policy"
    await host.ok("fill_seat", seat=5, policy="tit-for-tat")
    filled = await watcher.push("lobby", event="room_seat_filled")
    assert filled["data"] == {"seat": 5, "policy": "tit-for-tat"}
    started = await host.ok("start_room")
    push = await watcher.push("lobby", event="room_match_started")
    assert push["data"]["match_id"] == started["match_id"]
    assert len(push["data"]["seats"]) == 8
    assert push["data"]["settings"]["game"] == "matrix-games"
    policies = [s.get("policy", "") for s in push["data"]["seats"]]
    assert policies == [
        "",
        "",
        "counter",
        "counter",
        "tit-for-tat",
        "counter",
        "counter",
        "counter",
    ]
    again = await watcher.ok("watch_room", code=code)
    assert again["status"] == "playing" and again["match_id"] == started["match_id"]
    assert [s["policy"] for s in again["seats"]] == policies
    assert await error_code(watcher, "watch_room", code="ZZZZZ") == "room_not_found"
    for player in (host, guest, watcher):
        await player.close()


async def test_a_maze_room_of_two(url: str) -> None:
    host, guest = await signed_in(url), await signed_in(url)
    code = (await host.ok("create_room", game="maze", settings={"width": 9, "height": 9}))["code"]
    assert await error_code(host, "start_room") == "seats_empty"
    await guest.ok("join_room", code=code)
    started = await host.push("lobby", event="room_match_started")
    assert started["data"]["settings"]["game"] == "maze"
    assert [s["player_id"] for s in started["data"]["seats"]] == [
        host.player_id,
        guest.player_id,
    ]
    for player in (host, guest):
        await player.close()
