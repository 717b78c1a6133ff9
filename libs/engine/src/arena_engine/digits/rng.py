"""Seeded draws: a small, portable generator so that every draw can be replayed anywhere.

Python's `random` is avoided on purpose: its helper methods are not promised to stay the same
across versions, and a recorded game must replay byte for byte. The stream for a purpose is
derived from the seed and labels with BLAKE2b, then runs SplitMix64.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1


def derive(seed: int | str, *labels: int | str) -> int:
    """A 64-bit state for the stream named by `labels` under `seed`."""
    text = ":".join(str(part) for part in (seed, *labels))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


class Rng:
    """SplitMix64: fast, tiny, and the same in every language."""

    __slots__ = ("_state",)

    def __init__(self, seed: int | str, *labels: int | str) -> None:
        self._state = derive(seed, *labels)

    def next64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

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
