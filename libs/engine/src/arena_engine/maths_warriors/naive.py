"""The naive reference: every value of every subset of dice, with exact fractions.

Slow on purpose (no memoisation across multisets, no pruning, Fraction everywhere). It is the
baseline of the solver benchmark and the independent oracle the solver's tests compare against.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction


def subset_values(values: Sequence[int]) -> dict[int, set[Fraction]]:
    """Bitmask of dice -> every value an expression using exactly those dice can take."""
    n = len(values)
    found: dict[int, set[Fraction]] = {1 << i: {Fraction(v)} for i, v in enumerate(values)}
    for mask in sorted(range(1, 1 << n), key=lambda m: bin(m).count("1")):
        if mask in found:
            continue
        out: set[Fraction] = set()
        sub = (mask - 1) & mask
        while sub:
            rest = mask ^ sub
            if sub < rest:  # each unordered split once; both orders of - and / below
                for a in found[sub]:
                    for b in found[rest]:
                        out.update((a + b, a - b, b - a, a * b))
                        if b:
                            out.add(a / b)
                        if a:
                            out.add(b / a)
            sub = (sub - 1) & mask
        found[mask] = out
    return found


def mind_targets(own: Sequence[int | None], targets: Sequence[int | None]) -> set[int]:
    """Target values some expression of two or more of ``own`` reaches."""
    values = [v for v in own if v is not None]
    reach: set[Fraction] = set()
    for mask, vals in subset_values(values).items():
        if bin(mask).count("1") >= 2:
            reach |= vals
    return {t for t in targets if t is not None and Fraction(t) in reach}
