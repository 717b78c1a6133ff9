"""Maths Warriors complete move generator against the naive enumeration, on the same positions.

Positions are seeded random 6-against-6 openings (both players' six dice rolled). The solver is
timed cold (every memo cleared before each position) and warm (memos kept, as in a long-running
match service); the naive baseline enumerates every value of every subset with exact fractions.
Both must find the same capturable targets.
"""

from __future__ import annotations

import statistics
import time

from arena_engine.maths_warriors import naive
from arena_engine.maths_warriors.dice import Dice, Roller, roll_all
from arena_engine.maths_warriors.solver import capturable, clear_caches

SEED = 20260731


def positions(count: int) -> list[tuple[Dice, Dice]]:
    roller = Roller(SEED)
    return [(roll_all(roller), roll_all(roller)) for _ in range(count)]


def _time_solver(cases: list[tuple[Dice, Dice]], cold: bool) -> list[float]:
    times = []
    for own, targets in cases:
        if cold:
            clear_caches()
        started = time.perf_counter()
        capturable(own, targets)
        times.append(time.perf_counter() - started)
    return times


def run(quick: bool = False) -> None:
    cases = positions(60 if quick else 500)
    baseline_cases = cases[: 3 if quick else 9]
    cold = _time_solver(cases, cold=True)
    warm = _time_solver(cases, cold=False)
    naive_times = []
    for own, targets in baseline_cases:
        started = time.perf_counter()
        expected = naive.mind_targets(own, targets)
        naive_times.append(time.perf_counter() - started)
        found = capturable(own, targets)
        got = {targets[d.position] for d in found.mind}
        if got != expected:
            raise AssertionError(f"solver and baseline disagree on {own} vs {targets}")
    ms = 1000.0
    cold_median = statistics.median(cold)
    naive_median = statistics.median(naive_times)
    print(f"positions: {len(cases)} (baseline on the first {len(baseline_cases)}), seed {SEED}")
    print(
        f"solver cold : median {cold_median * ms:.3f} ms, p95 "
        f"{sorted(cold)[int(len(cold) * 0.95)] * ms:.3f} ms, max {max(cold) * ms:.2f} ms"
    )
    print(
        f"solver warm : median {statistics.median(warm) * ms:.3f} ms, max {max(warm) * ms:.2f} ms"
    )
    print(f"naive       : median {naive_median * ms:.1f} ms per position")
    print(f"speed-up    : {naive_median / cold_median:.0f}x (cold median vs naive median)")
    print(
        f"targets     : median <= 5 ms {'MET' if cold_median <= 0.005 else 'MISSED'}, "
        f">= 100x {'MET' if naive_median / cold_median >= 100 else 'MISSED'}"
    )
