"""Digits played by scripted WebSocket clients: the module's bot on what a socket is pushed."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from arena_games.contract import Viewer
from arena_games.digits.bot import DigitsBot

from tests.e2e.client import WAIT, Player

_seeds = itertools.count(1)
#: Pushes a game may take before the test calls it stuck.
MAX_PUSHES = 5000
#: What a bot's message may be refused with when the game moved on meanwhile (a timer fired).
MOVED_ON = {
    "army_coming",
    "game_over",
    "faceoff_over",
    "shop_over",
    "no_question",
    "not_in_focus",
    "not_in_shop",
    "not_in_faceoff",
    "no_training",
    "focus_started",
}


async def next_game_push(player: Player, wait: float = WAIT) -> dict[str, Any]:
    """The oldest push not taken yet, lobby pushes passed over."""

    async def first() -> dict[str, Any]:
        async with player._arrived:
            while True:
                while not player.pushes:
                    await player._arrived.wait()
                push = player.pushes.pop(0)
                if push["type"] != "lobby":
                    return push

    return await asyncio.wait_for(first(), wait)


def game_over(push: dict[str, Any]) -> bool:
    return push["type"] == "digits_game" and push["over"]


async def play(
    player: Player,
    done: Callable[[dict[str, Any]], bool] = game_over,
    *,
    bot: DigitsBot | None = None,
    match_id: str | None = None,
) -> list[dict[str, Any]]:
    """Play the socket's game with the module's bot until ``done(push)``; every push is kept.
    Focus and Training pages are answered wrong: a right answer faster than a person can give
    one voids the game (and its ghosts), a wrong one never does. With ``match_id``, another
    game's pushes (one left earlier) are passed over."""
    bot = bot or DigitsBot(Viewer(1))
    seen: list[dict[str, Any]] = []
    for _ in range(MAX_PUSHES):
        push = await next_game_push(player)
        if match_id is not None and push.get("match_id", match_id) != match_id:
            continue
        seen.append(push)
        bot.observe(push)
        if done(push):
            return seen
        if any(p["type"] != "lobby" for p in player.pushes):
            continue  # the game as it stands now is further on: reply to that
        reply = bot.reply(next(_seeds))
        if reply is None:
            continue
        if reply["type"] in ("digits_answer", "digits_train_answer"):
            reply["answer"] = reply["answer"] % 16 + 1
        kind = reply.pop("type")
        answer = await player.request(kind, **reply)
        assert answer["type"] == "ack" or answer["code"] in MOVED_ON, (kind, answer)
    raise AssertionError(f"the game did not end in {MAX_PUSHES} pushes")


def armies(pushes: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The army each round's Face-off showed."""
    return {
        p["round"]: p["faceoff"]["army"]
        for p in pushes
        if p["type"] == "digits_game" and "faceoff" in p
    }
