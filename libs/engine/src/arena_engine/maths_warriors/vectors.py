"""The ``maths-warriors`` game of the shared rule vectors (see vectors/README.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .commands import Context
from .dice import DICE, Dice, Roller
from .errors import MathsWarriorsError, Rejection
from .events import GameEnded, MindAttacked, StrengthAttacked
from .expression import ExpressionError, evaluate
from .game import apply, decide
from .moves import move_from_dict
from .rules import first_player, timeout_winner
from .ruleset import Ruleset
from .solver import capturable
from .state import GameState


def _dice(values: Any) -> Dice:
    if not isinstance(values, list) or len(values) != len(DICE):
        raise ValueError(f"dice must be a list of {len(DICE)} values: {values!r}")
    return tuple(None if v is None else int(v) for v in values)


def _pair(data: Mapping[str, Any]) -> tuple[Dice, Dice]:
    return _dice(data["1"]), _dice(data["2"])


def _evaluate(case: Mapping[str, Any], rules: Ruleset) -> dict[str, Any]:
    try:
        return {"value": evaluate(str(case["expr"]))}
    except ExpressionError as exc:
        return {"error": exc.code.value}


def _first_player(case: Mapping[str, Any], rules: Ruleset) -> dict[str, Any]:
    dice1, dice2 = _pair(case["dice"])
    seed = case.get("seed")
    result = first_player(dice1, dice2, rules, None if seed is None else Roller(int(seed)))
    return {"first": result.player, "rolloff": [list(r) for r in result.rolloff]}


def _move(case: Mapping[str, Any], rules: Ruleset) -> dict[str, Any]:
    spec = case["state"]
    dice1, dice2 = _pair(spec["dice"])
    state = GameState.position(
        dice1,
        dice2,
        first=int(spec["first"]),
        to_move=int(spec["to_move"]),
        over=bool(spec.get("over", False)),
        ruleset=rules,
    )
    try:
        move = move_from_dict(case["move"])
    except MathsWarriorsError as exc:
        return {"error": exc.code.value}
    outcome = decide(state, move, Context(seed=int(case.get("seed", 0))))
    if isinstance(outcome, Rejection):
        return outcome.to_dict()
    captured: str | None = None
    rerolled: list[str] = []
    winner: int | None = None
    for event in outcome:
        if isinstance(event, (StrengthAttacked, MindAttacked)):
            captured = event.target
            rerolled = [die for die, _ in event.rerolls]
        elif isinstance(event, GameEnded):
            winner = event.winner
        state = apply(state, event)
    return {
        "ok": True,
        "captured": captured,
        "rerolled": rerolled,
        "winner": winner,
        "to_move": state.to_move,
        "dice": {"1": list(state.dice1), "2": list(state.dice2)},
    }


def _timeout_winner(case: Mapping[str, Any], rules: Ruleset) -> dict[str, Any]:
    remaining = case["remaining"]
    winner = timeout_winner(int(remaining["1"]), int(remaining["2"]), int(case["first"]), rules)
    return {"winner": winner}


def _capturable(case: Mapping[str, Any], rules: Ruleset) -> dict[str, Any]:
    own, targets = _dice(case["own"]), _dice(case["targets"])
    first, mover = case.get("first"), case.get("mover")
    is_first = first is not None and mover is not None and int(first) == int(mover)
    result = capturable(own, targets, mover_is_first=is_first, ruleset=rules)
    return {
        "mind": [d.value for d in result.mind],
        "strength": [d.value for d in result.strength],
        "expressions": {d.value: e for d, e in result.expressions.items()},
    }


_OPS = {
    "evaluate": _evaluate,
    "first_player": _first_player,
    "move": _move,
    "timeout_winner": _timeout_winner,
    "capturable": _capturable,
}


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    op = case.get("op")
    handler = _OPS.get(str(op))
    if handler is None:
        raise ValueError(f"unknown maths-warriors op {op!r}")
    try:
        rules = Ruleset.from_dict(case.get("rules"))
    except MathsWarriorsError as exc:
        return {"error": exc.code.value}
    return handler(case, rules)
