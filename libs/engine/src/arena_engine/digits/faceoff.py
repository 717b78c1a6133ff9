"""The Face-off: 4! column orders × 2⁴ front/back swaps = 384 arrangements, and predict().

An arrangement is numbered 0..383: ``order_index * 16 + flips``, where ``order_index`` is the rank
of the column order among the 24 permutations in lexicographic order and bit c of ``flips`` swaps
the front and back of the arranged column c + 1. Arrangement 0 is the slate as saved.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from .combat import CombatResult, CombatRules, default_rules, fight
from .errors import DigitsError
from .slate import Slate

ORDERS: tuple[tuple[int, int, int, int], ...] = tuple(
    (p[0], p[1], p[2], p[3]) for p in permutations(range(4))
)
ARRANGEMENT_COUNT = len(ORDERS) * 16
#: The arrangement that leaves the saved slate as it is.
IDENTITY = 0


class ArrangementError(DigitsError):
    """An arrangement number outside 0..383."""


@dataclass(frozen=True, slots=True)
class Arrangement:
    """Column ``j`` (0..3) of the arranged slate is column ``order[j]`` of the saved slate."""

    order: tuple[int, int, int, int]
    flips: tuple[bool, bool, bool, bool]

    @property
    def index(self) -> int:
        bits = sum(1 << c for c in range(4) if self.flips[c])
        return ORDERS.index(self.order) * 16 + bits

    @classmethod
    def from_index(cls, index: int) -> Arrangement:
        if not isinstance(index, int) or not 0 <= index < ARRANGEMENT_COUNT:
            raise ArrangementError("bad_arrangement")
        order = ORDERS[index // 16]
        bits = index % 16
        flips = tuple(bool(bits >> c & 1) for c in range(4))
        return cls(order, (flips[0], flips[1], flips[2], flips[3]))


def arrange(slate: Slate, arrangement: Arrangement | int) -> Slate:
    """The slate in the given arrangement (each column keeps its two digits)."""
    if isinstance(arrangement, int):
        arrangement = Arrangement.from_index(arrangement)
    out = list(slate)
    for j, src in enumerate(arrangement.order):
        f, b = slate[src], slate[src + 4]
        if arrangement.flips[j]:
            f, b = b, f
        out[j], out[j + 4] = f, b
    return tuple(out)


def all_arrangements(slate: Slate) -> list[Slate]:
    return [arrange(slate, index) for index in range(ARRANGEMENT_COUNT)]


def predict(
    slate: Slate, arrangement: Arrangement | int, opponent: Slate, rules: CombatRules | None = None
) -> CombatResult:
    """The outcome of the combat if `slate` fights `opponent` in `arrangement` (no report)."""
    return fight(arrange(slate, arrangement), opponent, rules)


def predict_all(
    slate: Slate, opponent: Slate, rules: CombatRules | None = None
) -> list[CombatResult]:
    """Predict every arrangement, indexed 0..383. Duplicate arranged slates are fought once."""
    rules = rules or default_rules()
    seen: dict[Slate, CombatResult] = {}
    out = []
    for arranged in all_arrangements(slate):
        result = seen.get(arranged)
        if result is None:
            result = seen[arranged] = fight(arranged, opponent, rules)
        out.append(result)
    return out


def best_arrangement(slate: Slate, opponent: Slate, rules: CombatRules | None = None) -> int:
    """The arrangement with the best result, then the best margin, then the lowest index."""
    results = predict_all(slate, opponent, rules)
    rank = {"win": 2, "draw": 1, "loss": 0}
    return max(
        range(ARRANGEMENT_COUNT),
        key=lambda i: (rank[results[i].result], results[i].margin, -i),
    )
