"""The maths-warriors vector handler on cases beyond the shared file."""

from __future__ import annotations

from typing import Any

import pytest
from arena_engine.maths_warriors.vectors import run_case
from arena_engine.vectors import check_case

WORKED = {"1": [2, 4, 6, 3, 11, 7], "2": [1, 5, 8, 10, 10, 19]}


def case(op: str, expect: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"id": op, "game": "maths-warriors", "op": op, "expect": expect, **fields}


@pytest.mark.parametrize(
    "vector",
    [
        case("evaluate", {"value": 20}, expr="((2 + 3)) * 4"),
        case("evaluate", {"error": "unbalanced_parentheses"}, expr="2 + 3)"),
        case(
            "first_player",
            {"first": 2},
            dice={"1": [1, 6, 2, 9, 7, 14], "2": [1, 5, 8, 4, 12, 20]},
            rules={"first_player_compare": "by_die_type"},
        ),
        case(
            "move",
            {"error": "game_over"},
            state={"dice": WORKED, "first": 2, "to_move": 1, "over": True},
            move={"player": 2, "kind": "skip"},
        ),
        case(
            "move",
            {"error": "attacker_captured"},
            state={
                "dice": {"1": [None, 4, 6, 3, 11, 7], "2": [1, 5, 8, 10, 10, 19]},
                "first": 2,
                "to_move": 1,
                "over": False,
            },
            move={"player": 1, "kind": "strength", "attacker": "D4", "target": "D4"},
        ),
        case(
            "move",
            {"error": "strength_needs_one_die"},
            state={"dice": WORKED, "first": 2, "to_move": 1, "over": False},
            move={"player": 1, "kind": "strength", "attacker": ["D12", "D20"], "target": "D4"},
        ),
        case(
            "move",
            {"ok": True, "captured": "D20", "rerolled": ["D4", "D12", "D8"]},
            state={"dice": WORKED, "first": 2, "to_move": 1, "over": False},
            move={
                "player": 1,
                "kind": "mind",
                "target": "D20",
                "tokens": [
                    "(",
                    {"die": "D12", "value": 11},
                    "+",
                    {"die": "D8", "value": 6},
                    ")",
                    "+",
                    {"die": "D4", "value": 2},
                ],
            },
            seed=9,
        ),
        case("timeout_winner", {"winner": 1}, remaining={"1": 2, "2": 2}, first=2),
        case(
            "capturable",
            {"mind": [], "strength": ["D8"]},
            own=[2, 6, 5, 1, 7, 3],
            targets=[None, None, 6, None, None, None],
            first=1,
            mover=1,
            rules={"first_player_penalty": "strength_and_mind"},
        ),
    ],
    ids=lambda v: f"{v['op']}:{v['expect']}",
)
def test_extra_cases_pass(vector: dict[str, Any]) -> None:
    result = check_case(vector)
    assert result.status == "passed", (result.actual, result.reason)


def test_rolloff_needs_a_seed_and_is_reproducible() -> None:
    same = {"1": [4] * 6, "2": [4] * 6}
    rules = {"all_equal_start": "rolloff"}
    with pytest.raises(ValueError, match="seed"):
        run_case(case("first_player", {}, dice=same, rules=rules))
    one = run_case(case("first_player", {}, dice=same, rules=rules, seed=5))
    assert one == run_case(case("first_player", {}, dice=same, rules=rules, seed=5))
    assert one["first"] in (1, 2) and one["rolloff"]


def test_unknown_op_and_bad_rules() -> None:
    with pytest.raises(ValueError, match="unknown maths-warriors op"):
        run_case(case("teleport", {}))
    bad = run_case(case("timeout_winner", {}, remaining={"1": 1, "2": 2}, first=1, rules={"x": 1}))
    assert bad == {"error": "invalid_ruleset"}
    assert check_case(case("evaluate", {"value": 7}, expr="3 + 3")).status == "failed"
