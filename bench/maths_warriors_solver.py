"""Maths Warriors complete move generator against the naive enumeration, on the same positions.

Positions are seeded random 6-against-6 openings (both players' six dice rolled). The solver is
timed cold (every memo cleared before each position) and warm (memos kept, as in a long-running
match service); the naive baseline enumerates every value of every subset with exact fractions.
Both must find the same capturable targets, and the speed-up compares their medians over the
same positions (the baseline's few: it takes seconds a position).
"""

from __future__ import annotations

import itertools
import statistics
import time
from fractions import Fraction

from arena_engine.maths_warriors import naive
from arena_engine.maths_warriors.dice import Dice, Roller, roll_all
from arena_engine.maths_warriors.solver import capturable, clear_caches

from bench.targets import target_line

SEED = 20260731


def unbracketed_targets(own: Dice, targets: Dice) -> set[int]:
    """Targets reachable without brackets (the old client's AI): a sum of signed terms, each term
    a chain of × and ÷ whose value is its first die times the others to the power ±1."""
    values = [v for v in own if v is not None]
    n = len(values)
    terms: dict[int, set[Fraction]] = {}
    for mask in range(1, 1 << n):
        members = [values[i] for i in range(n) if mask >> i & 1]
        found: set[Fraction] = set()
        for first in range(len(members)):
            rest = members[:first] + members[first + 1 :]
            for signs in itertools.product((1, -1), repeat=len(rest)):
                value = Fraction(members[first])
                for v, sign in zip(rest, signs, strict=True):
                    value = value * v if sign > 0 else value / v
                found.add(value)
        terms[mask] = found
    # signed[mask]: every ± sum of terms partitioning mask (the empty mask sums to 0).
    signed: dict[int, set[Fraction]] = {0: {Fraction(0)}}
    for mask in range(1, 1 << n):
        low = mask & -mask
        out: set[Fraction] = set()
        sub = mask
        while sub:
            if sub & low:  # the term holding the lowest die, so each partition is seen once
                for t in terms[sub]:
                    for s in signed[mask ^ sub]:
                        out.add(s + t)
                        out.add(s - t)
            sub = (sub - 1) & mask
        signed[mask] = out
    reach: set[Fraction] = set()
    for mask in range(1, 1 << n):
        if bin(mask).count("1") < 2:
            continue
        sub = mask
        while sub:  # the first term is positive
            for t in terms[sub]:
                for s in signed[mask ^ sub]:
                    reach.add(t + s)
            sub = (sub - 1) & mask
    return {t for t in targets if t is not None and Fraction(t) in reach}


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
    # Coverage also in later positions: 2 to 6 dice left on the mover's side.
    coverage_cases = [
        (tuple(None if (i * 7 + j) % 6 < i % 5 else v for j, v in enumerate(own)), targets)
        for i, (own, targets) in enumerate(cases[: 50 if quick else 250])
    ]
    complete = unbracketed = 0
    for own, targets in coverage_cases:
        found = capturable(own, targets)
        complete += len(found.mind)
        flat = unbracketed_targets(own, targets)
        unbracketed += sum(1 for d in found.mind if targets[d.position] in flat)
    ms = 1000.0
    cold_median = statistics.median(cold)
    naive_median = statistics.median(naive_times)
    # The speed-up on the very positions the baseline solved (the first ones, timed cold).
    same_median = statistics.median(cold[: len(baseline_cases)])
    speed_up = naive_median / same_median
    print(f"positions: {len(cases)} (baseline on the first {len(baseline_cases)}), seed {SEED}")
    print(
        f"solver cold : median {cold_median * ms:.3f} ms, p95 "
        f"{sorted(cold)[int(len(cold) * 0.95)] * ms:.3f} ms, max {max(cold) * ms:.2f} ms"
    )
    print(
        f"solver warm : median {statistics.median(warm) * ms:.3f} ms, max {max(warm) * ms:.2f} ms"
    )
    print(
        f"naive       : median {naive_median * ms:.1f} ms per position; the solver cold on "
        f"the same {len(baseline_cases)}: median {same_median * ms:.3f} ms"
    )
    print(
        f"speed-up    : {speed_up:,.0f}x (naive median / solver cold median, same positions)  "
        + target_line(speed_up, ">=", 100, "100x")
    )
    print(
        f"unbracketed : finds {unbracketed} of {complete} Mind captures "
        f"({100 * (complete - unbracketed) / max(1, complete):.1f}% need brackets) "
        f"on {len(coverage_cases)} positions with 2-6 dice"
    )
    print(
        f"cold median : {cold_median * ms:.3f} ms over all {len(cases)} positions  "
        + target_line(cold_median * ms, "<=", 5, "5 ms")
    )
