"""The ``rating`` game of the shared rule vectors."""

from __future__ import annotations

from typing import Any

from .rating import elo_digits, elo_maths_warriors, season_reset, tier


def _int(case: dict[str, Any], key: str) -> int:
    value = case[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be an integer")
    return value


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    op = case.get("op")
    if op == "elo_maths_warriors":
        mw = elo_maths_warriors(_int(case, "winner"), _int(case, "loser"))
        return {"delta": mw.delta, "winner_after": mw.winner_after, "loser_after": mw.loser_after}
    if op == "elo_digits":
        dg = elo_digits(
            _int(case, "rating"),
            _int(case, "army_rating"),
            float(case["score"]),
            _int(case, "ranked_combats_before"),
        )
        return {"delta": dg.delta, "after": dg.after}
    if op == "season_reset":
        return {"after": season_reset(_int(case, "rating"))}
    if op == "tier":
        return {"tier": tier(_int(case, "rating"))}
    raise ValueError(f"unknown rating op {op!r}")
