"""The results object (``results.json`` and the replay's ``results``)."""

from __future__ import annotations

from typing import Any

from arena_engine.matrix_games.constants import ALIASES, SEATS, camp_label
from arena_engine.matrix_games.kernel import Sim


def scores(sim: Sim) -> list[float]:
    return [cp / 100.0 for cp in sim.score]


def results_json(sim: Sim) -> dict[str, Any]:
    v = sim.variant
    points = scores(sim)
    best = max(points)
    exploit = sim.indices.exploitability(v)
    return {
        "names": list(sim.policy_names),
        "scores": points,
        "win": [p == best for p in points],
        "aliases": list(ALIASES),
        "camps": [camp_label(s, v.cross_camp_only) for s in range(SEATS)],
        "variant": v.name,
        "interactions": sim.indices.interactions,
        "perSeatInteractions": list(sim.interactions),
        "meanPayoff": [
            points[s] / sim.interactions[s] if sim.interactions[s] > 0 else 0.0
            for s in range(SEATS)
        ],
        "exploitability": [None if e is None else e / 100.0 for e in exploit],
        "coopRate": sim.indices.coop_rate(v),
        "conventionCounts": sim.indices.conventions(),
        "tokens": list(v.tokens),
        "beats": sim.beat,
        "ticks": sim.tick,
        "reason": sim.reason,
        "ending": sim.ending,
    }
