"""Rooms through real WebSockets with short room timers: refusals with their codes, a waiting room
that nobody joins, a finished room everyone left, and a room code free again after closing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.client import Player, signed_in
from tests.e2e.servers import arena, settings_for


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("rooms")),
        room_waiting_seconds=1,
        room_idle_seconds=1,
        match_ai_think_ms=50,
    )
    async with arena(settings) as base:
        yield base


async def error_code(player: Player, type_: str, **fields: object) -> str:
    answer = await player.request(type_, **fields)
    assert answer["type"] == "error", answer
    return str(answer["code"])


async def test_join_refusals_are_typed(url: str) -> None:
    host, guest, third = await signed_in(url), await signed_in(url), await signed_in(url)
    assert await error_code(guest, "join_room", code="ZZZZZ") == "room_not_found"
    code = (await host.ok("create_room"))["code"]
    assert await error_code(host, "join_room", code=code) == "cannot_join_own_room"
    await guest.ok("join_room", code=code)
    assert await error_code(third, "join_room", code=code) == "room_full"
    for player in (host, guest, third):
        await player.close()


async def test_bad_settings_are_refused(url: str) -> None:
    host = await signed_in(url)
    # Clocks out of range are refused by the gateway's message check, before matchmaking.
    for settings in ({"game_seconds": 30}, {"move_seconds": 500}):
        assert (await host.request("create_room", settings=settings))["type"] == "error"
    # An unknown ruleset value reaches matchmaking, which names it.
    bad_rules = {"rules": {"timeout_winner": "most_dice"}}
    assert await error_code(host, "create_room", settings=bad_rules) == "invalid_ruleset"
    # Nothing was opened: the host may still create a room.
    assert (await host.ok("create_room"))["code"]
    await host.close()


async def test_a_room_nobody_joins_closes(url: str) -> None:
    host = await signed_in(url)
    code = (await host.ok("create_room"))["code"]
    closed = await host.push("lobby", event="room_closed")
    assert closed["stream"] == f"room-{code}" and closed["data"]["reason"] == "expired"
    guest = await signed_in(url)
    assert await error_code(guest, "join_room", code=code) == "room_not_found"
    # The host may open a room again.
    assert (await host.ok("create_room"))["code"]
    for player in (host, guest):
        await player.close()


async def test_a_finished_room_everyone_left_closes(url: str) -> None:
    host, guest = await signed_in(url), await signed_in(url)
    code = (await host.ok("create_room"))["code"]
    await guest.ok("join_room", code=code)
    await host.push("snapshot")
    await host.ok("resign")
    await guest.push("lobby", event="room_match_finished")
    await host.close()
    await guest.close()
    # Nobody is connected and no rematch is pending: the room closes and its code is free.
    late = await signed_in(url)
    for _ in range(100):
        if await error_code(late, "join_room", code=code) == "room_not_found":
            break
        await asyncio.sleep(0.2)
    else:
        raise AssertionError(f"room {code} was never closed")
    await late.close()
