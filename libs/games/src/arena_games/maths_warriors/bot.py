"""A scripted Maths Warriors player: it keeps the position as its pushes describe it and answers
with the move the engine's AI would choose, so every message it sends is legal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena_engine.maths_warriors import DICE, DieToken, GameState, Mind, Move, Strength
from arena_engine.maths_warriors.ai import choose_move

from arena_games.contract import Viewer

MOVES = ("strength_attacked", "mind_attacked", "turn_skipped")


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
        mirror = cls(dice, snapshot["first"], snapshot["to_move"])
        if snapshot.get("status") == "over":
            mirror.over = snapshot
        return mirror

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


def message_for(move: Move) -> dict[str, Any]:
    """The client message of an engine move."""
    if isinstance(move, Strength):
        return {"type": "strength", "attacker": move.attackers[0], "target": move.target}
    if isinstance(move, Mind):
        tokens = [
            {"die": t.die, "value": t.value} if isinstance(t, DieToken) else t for t in move.tokens
        ]
        return {"type": "mind", "target": move.target, "tokens": tokens}
    return {"type": "skip"}


class MathsWarriorsBot:
    """Plays one seat at an AI level (a spectator's bot only watches)."""

    def __init__(self, viewer: Viewer, level: str = "medium") -> None:
        self.seat = viewer.seat
        self.level = level
        self.mirror: Mirror | None = None

    def observe(self, message: dict[str, Any]) -> None:
        if message["type"] == "snapshot":
            self.mirror = Mirror.of(message)
        elif self.mirror is not None and message["type"] in (*MOVES, "game_over"):
            self.mirror.apply(message)

    def reply(self, seed: int) -> dict[str, Any] | None:
        mirror = self.mirror
        if mirror is None or mirror.over is not None or mirror.to_move != self.seat:
            return None
        return message_for(choose_move(mirror.state(), self.level, seed))


def bot(viewer: Viewer) -> MathsWarriorsBot:
    return MathsWarriorsBot(viewer)
