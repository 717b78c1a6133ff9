"""Rule-vector ops for ``game: matrix-games`` (see shared/vectors/README.md)."""

from __future__ import annotations

from typing import Any

from arena_engine.matrix_games.episode import play_scripted
from arena_engine.matrix_games.errors import MatrixGamesError
from arena_engine.matrix_games.settings import Settings
from arena_engine.matrix_games.variants import payoff_cp, variant_named


def _inventory(value: Any, k: int, name: str) -> list[int]:
    if (
        not isinstance(value, list)
        or len(value) != k
        or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value)
    ):
        raise MatrixGamesError("bad_inventory", f"{name} must be {k} non-negative integers")
    return list(value)


def _payoff(case: dict[str, Any]) -> dict[str, Any]:
    variant = variant_named(str(case["variant"]))
    row = _inventory(case.get("row_inv"), variant.k, "row_inv")
    col = _inventory(case.get("col_inv"), variant.k, "col_inv")
    row_cp, col_cp = payoff_cp(variant, row, col)
    return {"row_cp": row_cp, "col_cp": col_cp}


def _episode(case: dict[str, Any]) -> dict[str, Any]:
    settings = Settings(
        matrix=str(case["variant"]), seed=case.get("seed", 0), beats=case.get("beats", 12)
    )
    sim = play_scripted(settings, list(case["policies"]), record_frames=False)
    idx = sim.indices
    v = sim.variant
    return {
        "scores_cp": list(sim.score),
        "interactions": idx.interactions,
        "per_seat_interactions": list(sim.interactions),
        "convention_counts": idx.conventions(),
        "coop_rate": idx.coop_rate(v),
        "exploitability_cp": idx.exploitability(v),
        "spawners": [[s.x, s.y, s.token] for s in sim.spawners],
    }


OPS = {"payoff": _payoff, "episode": _episode}


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    op = OPS.get(str(case.get("op")))
    if op is None:
        return {"error": "unknown_op"}
    try:
        return op(case)
    except MatrixGamesError as exc:
        return {"error": exc.code}
    except KeyError as exc:
        return {"error": "missing_field", "field": str(exc)}
