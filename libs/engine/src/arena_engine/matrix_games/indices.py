"""The three indices, accumulated in integers at every resolution and reported at the end."""

from __future__ import annotations

from arena_engine.matrix_games.constants import SEATS
from arena_engine.matrix_games.variants import Variant, tdiv


class Indices:
    """Convention histogram, cooperation accumulator and per-seat exploitability accumulators."""

    __slots__ = (
        "convention_counts",
        "coop_mass",
        "interactions",
        "k",
        "opp_mix_sum",
        "realised_cp_sum",
        "resolutions",
        "row_sides",
        "total_mass",
    )

    def __init__(self, k: int) -> None:
        self.k = k
        self.convention_counts = [[0] * k for _ in range(k)]
        self.coop_mass = 0
        self.total_mass = 0
        self.interactions = 0
        self.resolutions = [0] * SEATS
        self.row_sides = [0] * SEATS
        self.opp_mix_sum = [[0] * k for _ in range(SEATS)]
        self.realised_cp_sum = [0] * SEATS

    def copy(self) -> Indices:
        new = Indices(self.k)
        new.convention_counts = [row[:] for row in self.convention_counts]
        new.coop_mass = self.coop_mass
        new.total_mass = self.total_mass
        new.interactions = self.interactions
        new.resolutions = self.resolutions[:]
        new.row_sides = self.row_sides[:]
        new.opp_mix_sum = [row[:] for row in self.opp_mix_sum]
        new.realised_cp_sum = self.realised_cp_sum[:]
        return new

    def note_resolution(
        self,
        variant: Variant,
        row: int,
        col: int,
        row_inv: list[int],
        col_inv: list[int],
        row_mix: list[int],
        col_mix: list[int],
        cell_row: int,
        cell_col: int,
        row_cp: int,
        col_cp: int,
    ) -> None:
        self.interactions += 1
        self.convention_counts[cell_row][cell_col] += 1
        if variant.coop_token >= 0:
            self.coop_mass += row_inv[variant.coop_token] + col_inv[variant.coop_token]
        self.total_mass += sum(row_inv) + sum(col_inv)
        self.resolutions[row] += 1
        self.row_sides[row] += 1
        self.realised_cp_sum[row] += row_cp
        self.resolutions[col] += 1
        self.realised_cp_sum[col] += col_cp
        row_sum = self.opp_mix_sum[row]
        col_sum = self.opp_mix_sum[col]
        for i in range(self.k):
            row_sum[i] += col_mix[i]
            col_sum[i] += row_mix[i]

    def coop_rate(self, variant: Variant) -> float | None:
        if variant.coop_token < 0 or self.total_mass <= 0:
            return None
        return self.coop_mass / self.total_mass

    def exploitability_cp(self, variant: Variant, slot: int) -> int | None:
        """Best pure reply's value against the average opponent mix, minus what was realised."""
        count = self.resolutions[slot]
        if count <= 0:
            return None
        k = self.k
        avg_opp = [tdiv(v, count) for v in self.opp_mix_sum[slot]]
        as_row = self.row_sides[slot] * 2 >= count
        best: int | None = None
        for own in range(k):
            if as_row:
                total = sum(variant.row_pay[own][opp] * avg_opp[opp] for opp in range(k))
            else:
                total = sum(variant.col_pay[opp][own] * avg_opp[opp] for opp in range(k))
            value = tdiv(total * 100, 1000)
            if best is None or value > best:
                best = value
        assert best is not None
        return best - tdiv(self.realised_cp_sum[slot], count)

    def exploitability(self, variant: Variant) -> list[int | None]:
        return [self.exploitability_cp(variant, s) for s in range(SEATS)]

    def conventions(self) -> list[list[int]]:
        return [list(row) for row in self.convention_counts]
