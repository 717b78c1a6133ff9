"""Playing whole games through the protocol: a mirror of the position kept from the pushes (the
game's bot's, arena_games.maths_warriors.bot), and moves chosen by the engine's AI (so every move
a scripted player sends is legal)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from arena_engine.maths_warriors import Move
from arena_engine.maths_warriors.ai import choose_move
from arena_games.maths_warriors.bot import MOVES, Mirror
from arena_games.maths_warriors.bot import message_for as bot_message

from tests.e2e.client import Player

_seeds = itertools.count(1)


def message_for(move: Move) -> tuple[str, dict[str, Any]]:
    """The client message of an engine move: (type, fields)."""
    fields = bot_message(move)
    return fields.pop("type"), fields


async def play_move(player: Player, mirror: Mirror, level: str = "medium") -> list[dict[str, Any]]:
    """The player on move plays the AI's choice; returns the events of its ack."""
    move = choose_move(mirror.state(), level, next(_seeds))
    kind, fields = message_for(move)
    result = await player.ok(kind, **fields)
    for event in result["events"]:
        mirror.apply(event)
    return list(result["events"])


async def play_to_the_end(
    seats: dict[int, Player], mirror: Mirror, limit: int = 400
) -> dict[str, Any]:
    """Both seats human: whoever is on move plays until the game is over."""
    for _ in range(limit):
        if mirror.over is not None:
            return mirror.over
        await play_move(seats[mirror.to_move], mirror)
    raise AssertionError("the game did not end")


async def next_move_push(player: Player, wait: float = 30.0) -> dict[str, Any]:
    """The next match event pushed to ``player`` (a move or the end of the game)."""
    async with asyncio.timeout(wait):
        while True:
            for index, message in enumerate(player.pushes):
                if message["type"] in (*MOVES, "game_over"):
                    return player.pushes.pop(index)
            await asyncio.sleep(0.01)
