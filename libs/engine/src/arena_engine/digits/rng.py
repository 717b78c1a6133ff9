"""Seeded draws for Digits: one SplitMix64 stream per purpose, replayable anywhere.

The stream for a purpose is derived from the seed and labels with BLAKE2b, so that adding a draw
for one purpose never shifts the draws of another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

from arena_engine.splitmix import SplitMix64

T = TypeVar("T")


def derive(seed: int | str, *labels: int | str) -> int:
    """A 64-bit state for the stream named by `labels` under `seed`."""
    text = ":".join(str(part) for part in (seed, *labels))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


class Rng(SplitMix64):
    """The stream named by `labels` under `seed`."""

    __slots__ = ()

    def __init__(self, seed: int | str, *labels: int | str) -> None:
        super().__init__(derive(seed, *labels))

    def below(self, n: int) -> int:
        """An integer in [0, n); the bias of the multiply-shift is below n / 2**64."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        return (self.next64() * n) >> 64

    def between(self, low: int, high: int) -> int:
        """An integer in [low, high], both included."""
        return low + self.below(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def chance(self, percent: int) -> bool:
        return self.below(100) < percent

    def weighted(self, weights: Sequence[int]) -> int:
        """An index drawn with the given integer weights (at least one above 0)."""
        roll = self.below(sum(weights))
        for index, weight in enumerate(weights):
            if roll < weight:
                return index
            roll -= weight
        raise AssertionError("unreachable: roll below the total weight")
