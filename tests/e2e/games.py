"""Playing whole games through the protocol: a mirror of the position kept from the pushes, and
moves chosen by the engine's AI (so every move a scripted player sends is legal)."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

from arena_engine.maths_warriors import DICE, DieToken, GameState, Mind, Skip, Strength
from arena_engine.maths_warriors.ai import choose_move

from tests.e2e.client import Player

MOVES = ("strength_attacked", "mind_attacked", "turn_skipped")
_seeds = itertools.count(1)


@dataclass
class Mirror:
    """The position as the pushes describe it."""

    dice: dict[int, dict[str, int | None]]
    first: int
    to_move: int
    over: dict[str, Any] | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, snapshot: dict[str, Any]) -> Mirror:
        dice = {int(seat): dict(values) for seat, values in snapshot["dice"].items()}
        return cls(dice, snapshot["first"], snapshot["to_move"])

    def apply(self, event: dict[str, Any]) -> None:
        self.seen.append(event)
        if event["type"] in ("strength_attacked", "mind_attacked"):
            mover = event["player"]
            self.dice[3 - mover][event["target"]] = None
            self.dice[mover].update(event["rerolls"])
        if event["type"] in MOVES:
            self.to_move = event["to_move"]
        if event["type"] == "game_over":
            self.over = event

    def state(self) -> GameState:
        def values(seat: int) -> tuple[int | None, ...]:
            return tuple(self.dice[seat][d.value] for d in DICE)

        return GameState.position(values(1), values(2), first=self.first, to_move=self.to_move)


def message_for(move: Strength | Mind | Skip) -> tuple[str, dict[str, Any]]:
    if isinstance(move, Strength):
        return "strength", {"attacker": move.attackers[0], "target": move.target}
    if isinstance(move, Mind):
        tokens = [
            {"die": t.die, "value": t.value} if isinstance(t, DieToken) else t for t in move.tokens
        ]
        return "mind", {"target": move.target, "tokens": tokens}
    return "skip", {}


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
