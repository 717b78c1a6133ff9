"""A scripted Matrix Games client: it joins, then orders each beat as one of the five scripted
policies would, reading only its seat's pushes (the reference's baselines read only the
observation), so every message it sends is legal. Tests, benches and e2e runs seat it."""

from __future__ import annotations

from typing import Any

from arena_engine.matrix_games.constants import ALIASES, PLAYER_PROTOCOL
from arena_engine.matrix_games.policies import check_policy, scripted_order

from arena_games.contract import Viewer

DEFAULT_POLICY = "counter"


class MatrixGamesBot:
    """Plays one seat with a scripted policy (a spectator's bot only watches)."""

    def __init__(self, viewer: Viewer, policy: str = DEFAULT_POLICY) -> None:
        self.seat = viewer.seat
        self.policy = check_policy(policy)
        self.joined = False
        self.observation: dict[str, Any] | None = None
        self.ordered: set[int] = set()
        self.over = False

    def observe(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "state" and message.get("protocol") == PLAYER_PROTOCOL:
            self.observation = message
        elif kind == "final":
            self.over = True

    def reply(self, seed: int) -> dict[str, Any] | None:
        if self.seat == 0 or self.over:
            return None
        if not self.joined:
            self.joined = True
            return {"type": "matrix_join"}
        observation = self.observation
        if observation is None or observation.get("deadline_ms") is None:
            return None
        beat = observation["beat"]
        if beat in self.ordered:
            return None
        self.ordered.add(beat)
        order = scripted_order(observation, self.policy)
        tokens = observation["rules"]["tokens"]
        return {
            "type": "matrix_order",
            "beat": beat,
            "intent": order.intent,
            "token": tokens[order.token] if order.token >= 0 else None,
            "target": ALIASES[order.target] if order.target >= 0 else None,
            "say": f"{ALIASES[self.seat - 1]} here, beat {beat}",
        }


def bot(viewer: Viewer) -> MatrixGamesBot:
    return MatrixGamesBot(viewer)
