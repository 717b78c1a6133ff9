"""The seven variants: token names, payoff matrices, cooperation token, camps."""

from __future__ import annotations

from dataclasses import dataclass, field

from arena_engine.matrix_games.errors import SettingsError

Matrix = tuple[tuple[int, ...], ...]


def _transpose(m: Matrix) -> Matrix:
    return tuple(tuple(row[j] for row in m) for j in range(len(m)))


def argmax_lowest(values: list[int] | tuple[int, ...]) -> int:
    """Index of the largest value, ties to the lowest index (0 for an empty list)."""
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return best


@dataclass(frozen=True)
class Variant:
    name: str
    display_name: str
    description: str
    tokens: tuple[str, ...]
    row_pay: Matrix
    col_pay: Matrix
    coop_token: int = -1
    cross_camp_only: bool = False
    best_response_row: tuple[int, ...] = field(init=False)
    best_response_col: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        k = self.k
        # bestResponseRow[j] = argmax_i rowPay[i][j]; bestResponseCol[i] = argmax_j colPay[i][j].
        row = tuple(argmax_lowest([self.row_pay[i][j] for i in range(k)]) for j in range(k))
        col = tuple(argmax_lowest(list(self.col_pay[i])) for i in range(k))
        object.__setattr__(self, "best_response_row", row)
        object.__setattr__(self, "best_response_col", col)

    @property
    def k(self) -> int:
        return len(self.tokens)


def _symmetric(
    name: str,
    display: str,
    description: str,
    tokens: tuple[str, ...],
    row_pay: Matrix,
    coop: int = -1,
) -> Variant:
    return Variant(name, display, description, tokens, row_pay, _transpose(row_pay), coop)


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        _symmetric(
            "running-with-scissors",
            "Running With Scissors",
            "Cyclic zero-sum: no fixed policy survives.",
            ("rock", "paper", "scissors"),
            ((0, -3, 3), (3, 0, -3), (-3, 3, 0)),
        ),
        _symmetric(
            "prisoners-dilemma",
            "Prisoners Dilemma",
            "Conditional cooperation with strangers.",
            ("cooperate", "defect"),
            ((3, 0), (5, 1)),
            coop=0,
        ),
        _symmetric(
            "chicken",
            "Chicken",
            "Anti-coordination: who yields, with no words.",
            ("dove", "hawk"),
            ((3, 1), (4, 0)),
            coop=0,
        ),
        _symmetric(
            "stag-hunt",
            "Stag Hunt",
            "Assurance: risk- versus payoff-dominant equilibria.",
            ("stag", "hare"),
            ((4, 0), (2, 2)),
            coop=0,
        ),
        Variant(
            "bach-or-stravinsky",
            "Bach Or Stravinsky",
            "Asymmetric camps; interactions only cross-camp.",
            ("bach", "stravinsky"),
            ((3, 0), (0, 2)),
            ((2, 0), (0, 3)),
            cross_camp_only=True,
        ),
        _symmetric(
            "pure-coordination",
            "Pure Coordination",
            "Three matches, all paying 1.",
            ("red", "green", "blue"),
            ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
        ),
        _symmetric(
            "rationalizable-coordination",
            "Rationalizable Coordination",
            "Three matches, paying 1 / 2 / 3.",
            ("bronze", "silver", "gold"),
            ((1, 0, 0), (0, 2, 0), (0, 0, 3)),
        ),
    )
}

DEFAULT_VARIANT = "running-with-scissors"


def variant_named(name: str) -> Variant:
    """The variant for a name, matched trimmed and lowercased; unknown names are an error."""
    variant = VARIANTS.get(name.strip().lower())
    if variant is None:
        raise SettingsError(
            "unknown_variant", f"unknown matrix {name!r}; expected one of {', '.join(VARIANTS)}"
        )
    return variant


def tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (the reference's ``div``), not Python's floor."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def payoff_cp(variant: Variant, row_inv: list[int], col_inv: list[int]) -> tuple[int, int]:
    """(rowCp, colCp): the expected payoff of the two inventory mixes, in truncated centipoints."""
    n_total = sum(row_inv)
    m_total = sum(col_inv)
    if n_total <= 0 or m_total <= 0:
        return 0, 0
    k = variant.k
    row_sum = 0
    col_sum = 0
    for i in range(k):
        ni = row_inv[i]
        if ni == 0:
            continue
        rp = variant.row_pay[i]
        cp = variant.col_pay[i]
        for j in range(k):
            w = ni * col_inv[j]
            row_sum += w * rp[j]
            col_sum += w * cp[j]
    denom = n_total * m_total
    return tdiv(row_sum * 100, denom), tdiv(col_sum * 100, denom)


def mix_permille(inv: list[int]) -> list[int]:
    """Each entry n_i * 1000 div N (need not sum to 1000)."""
    total = sum(inv)
    if total <= 0:
        return [0] * len(inv)
    return [v * 1000 // total for v in inv]
