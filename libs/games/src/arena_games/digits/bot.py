"""A scripted Digits player: it reads only its seat's pushes (``digits_game``) and plays a whole
game with legal messages. It works out each Focus and Training page from its text (the view never
carries the answer), buys the best digits it can pay for (the bright offer first), trains its
first level 1 or 2 digit once a round, and at the Face-off picks the best of the 384
arrangements against the army shown (asking "Predict" first in the tutorial). Tests, benches,
`arena events simulate` and e2e runs seat it; a spectator's bot only watches."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from arena_engine.digits.faceoff import best_arrangement
from arena_engine.digits.slate import Digit, Slate

from arena_games.contract import Viewer

_OPERATORS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}


def work_out(text: str) -> int:
    """The value of a Focus or Training page (``12 ÷ 4 + 3``, ``(2 + 3) × 4 − 5``, ``7² − 5²``),
    evaluated as arithmetic only; a button (1..16)."""
    source = text.replace("−", "-").replace("×", "*").replace("÷", "//").replace("²", "**2")
    value = _evaluate(ast.parse(source, mode="eval").body)
    return max(1, min(16, value))


def _evaluate(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    raise ValueError(f"not a page's arithmetic: {ast.dump(node)}")


def slate_of(view: list[dict[str, Any] | None]) -> Slate:
    return tuple(None if d is None else Digit(d["kind"], d["level"]) for d in view)


class DigitsBot:
    """Plays seat 1 from its pushes."""

    def __init__(self, viewer: Viewer) -> None:
        self.seat = viewer.seat
        self.game: dict[str, Any] | None = None
        #: What was sent for the game as last pushed (nothing is sent twice for one state).
        self.sent = False
        self.predicted: set[int] = set()

    def observe(self, message: dict[str, Any]) -> None:
        if message.get("type") == "digits_game":
            self.game = message
            self.sent = False

    def reply(self, seed: int) -> dict[str, Any] | None:
        game = self.game
        if self.seat != 1 or game is None or game["over"] or self.sent:
            return None
        chosen = self._choose(game, seed)
        if chosen is not None:
            self.sent = True
        return chosen

    def _choose(self, game: dict[str, Any], seed: int) -> dict[str, Any] | None:
        phase = game["phase"]
        if phase == "focus":
            page = game["focus"]["page"]
            if page is None:
                return {"type": "digits_start_focus"}
            return {"type": "digits_answer", "answer": work_out(page["text"])}
        if phase == "shop":
            return self._shop(game)
        if phase == "faceoff":
            return self._faceoff(game)
        return None  # waiting for the army, or for a room's next round

    def _shop(self, game: dict[str, Any]) -> dict[str, Any]:
        shop, slate = game["shop"], game["slate"]
        if shop["training"] is not None:
            return {"type": "digits_train_answer", "answer": work_out(shop["training"]["text"])}
        if not shop["training_used"]:
            for cell, digit in enumerate(slate, start=1):
                if digit is not None and digit["level"] < 3:
                    return {"type": "digits_train", "cell": cell}
        if any(d is None for d in slate):
            offers: list[tuple[int, int | str]] = []
            if shop["bright"] is not None and shop["bright"]["price"] <= shop["gold"]:
                offers.append((99, "bright"))
            for number, offer in enumerate(shop["offers"]):
                if offer is not None and offer["price"] <= shop["gold"]:
                    offers.append((offer["tier"], number))
            if offers:
                return {"type": "digits_buy", "offer": max(offers, key=lambda o: o[0])[1]}
        return {"type": "digits_end_shop"}

    def _faceoff(self, game: dict[str, Any]) -> dict[str, Any]:
        faceoff = game["faceoff"]
        best = best_arrangement(slate_of(faceoff["saved"]), slate_of(faceoff["army"]["slate"]))
        if faceoff["predict"] and game["round"] not in self.predicted:
            self.predicted.add(game["round"])
            return {"type": "digits_predict", "arrangement": best}
        if faceoff["arrangement"] != best:
            return {"type": "digits_arrange", "arrangement": best}
        return {"type": "digits_fight"}


def bot(viewer: Viewer) -> DigitsBot:
    return DigitsBot(viewer)
