"""SplitMix64, the seeded generator behind every Digits draw and Maths Warriors roll.

Python's `random` is avoided on purpose: its helper methods are not promised to stay the same
across versions, and a recorded game must replay byte for byte. SplitMix64 is tiny, fast and gives
the same numbers in every language, so a recorded seed can be checked anywhere.

Each game keeps its own way of seeding the state and of drawing below a bound (Digits derives the
state with BLAKE2b and uses multiply-shift, Maths Warriors takes the seed as is and uses rejection
sampling): both are part of what the recorded seeds mean, so neither may change.
"""

from __future__ import annotations

MASK64 = (1 << 64) - 1
_GOLDEN_GAMMA = 0x9E3779B97F4A7C15


class SplitMix64:
    __slots__ = ("_state",)

    def __init__(self, state: int) -> None:
        self._state = state & MASK64

    def next64(self) -> int:
        """The next 64-bit output."""
        self._state = (self._state + _GOLDEN_GAMMA) & MASK64
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)
