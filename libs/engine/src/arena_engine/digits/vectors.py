"""The `digits` ops of the rule-vector format (see vectors/README.md, section "digits").

Besides the shared ops, `combat` takes explicit slates and reports the full result, and
`predict` an arrangement against an opponent; `vectors_play` adds whole games played from a
script and Paris time, `vectors_ladder` the ghost store's selection, the ladder, leaderboards,
duels and credits. All are used by the project's own vectors (docs/rules/digits.md lists them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import combat, economy, faceoff, status
from .catalogue import UnknownCatalogue, load
from .errors import DigitsError
from .slate import check_slate, slate_from_json
from .targeting import target_cell
from .vector_input import Case, VectorInputError
from .vector_input import int_field as _int
from .vectors_ladder import LADDER_OPS
from .vectors_play import PLAY_OPS


def _pair(case: Case, key: str) -> list[int]:
    raw = case.get(key)
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), int) for k in ("us", "them")):
        raise VectorInputError(f"bad_{key}")
    return [int(raw["us"]), int(raw["them"])]


def _income(case: Case) -> dict[str, Any]:
    return {"gold": economy.income(_int(case, "right"), _int(case, "carried"))}


def _tier_odds(case: Case) -> dict[str, Any]:
    return {"odds": list(economy.tier_odds(_int(case, "round")))}


def _price(case: Case) -> dict[str, Any]:
    tier = _int(case, "tier")
    return {"price": economy.price(tier), "sell": economy.sell_value(tier)}


def _question_seconds(case: Case) -> dict[str, Any]:
    return {"seconds": economy.question_seconds(_int(case, "stage"))}


def _game_status(case: Case) -> dict[str, Any]:
    room_rounds = case.get("room_rounds")
    return {
        "status": status.game_status(
            str(case.get("mode")),
            _int(case, "wins"),
            _int(case, "losses"),
            _int(case, "rounds_played"),
            room_rounds if isinstance(room_rounds, int) else None,
        )
    }


def _arrangements(case: Case) -> dict[str, Any]:
    return {"count": faceoff.ARRANGEMENT_COUNT}


def _target(case: Case) -> dict[str, Any]:
    column = _int(case, "column")
    front, back = case.get("front"), case.get("back")
    if not 1 <= column <= 4:
        raise VectorInputError("bad_column")
    if not (isinstance(front, list) and isinstance(back, list) and len(front) == len(back) == 4):
        raise VectorInputError("bad_rows")
    cell = target_cell(column - 1, [bool(x) for x in front + back])
    return {"cell": None if cell is None else cell + 1}


def _after_twelve(case: Case) -> dict[str, Any]:
    return {"result": combat.after_limit(_pair(case, "hp"), _pair(case, "atk"))}


def _both_emptied(case: Case) -> dict[str, Any]:
    return {"result": combat.both_emptied(_pair(case, "hp_at_start"))}


def _slates(case: Case) -> tuple[Any, Any, combat.CombatRules]:
    catalogue = load(str(case.get("catalogue", load().version)))
    us, them = slate_from_json(case.get("us")), slate_from_json(case.get("them"))
    check_slate(us, catalogue)
    check_slate(them, catalogue)
    return us, them, combat.compile_rules(catalogue)


def _combat(case: Case) -> dict[str, Any]:
    us, them, rules = _slates(case)
    result = combat.fight(us, them, rules, report=bool(case.get("report", False)))
    return result.to_json()


def _predict(case: Case) -> dict[str, Any]:
    us, them, rules = _slates(case)
    return faceoff.predict(us, _int(case, "arrangement"), them, rules).to_json()


OPS: dict[str, Callable[[Case], dict[str, Any]]] = {
    "income": _income,
    "tier_odds": _tier_odds,
    "price": _price,
    "question_seconds": _question_seconds,
    "game_status": _game_status,
    "arrangements": _arrangements,
    "target": _target,
    "after_twelve": _after_twelve,
    "both_emptied": _both_emptied,
    "combat": _combat,
    "predict": _predict,
    **PLAY_OPS,
    **LADDER_OPS,
}


def run_case(case: Case) -> dict[str, Any]:
    """The engine's answer to one case, or {"error": CODE} when the engine rejects its input."""
    op = OPS.get(str(case.get("op")))
    if op is None:
        return {"error": "unknown_op"}
    try:
        return op(case)
    except UnknownCatalogue:
        return {"error": "unknown_catalogue"}
    except DigitsError as exc:
        return {"error": exc.code}
