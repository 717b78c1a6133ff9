"""PCG32 (XSH-RR) seeded as ``pcg32_srandom(seed, seed)``: the reference's only randomness."""

from __future__ import annotations

from typing import Final

_MASK64: Final = (1 << 64) - 1
_MULT: Final = 6364136223846793005


class Pcg32:
    __slots__ = ("_inc", "_state")

    def __init__(self, seed: int) -> None:
        raw = seed & _MASK64  # two's complement for negative seeds
        self._inc = ((raw << 1) | 1) & _MASK64
        self._state = 0
        self._state = (self._state * _MULT + self._inc) & _MASK64
        self._state = (self._state + raw) & _MASK64
        self._state = (self._state * _MULT + self._inc) & _MASK64

    def next_u32(self) -> int:
        old = self._state
        self._state = (old * _MULT + self._inc) & _MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def below(self, bound: int) -> int:
        """A draw in 0..bound-1 by plain modulo; a bound of 0 or 1 consumes nothing."""
        if bound <= 1:
            return 0
        return self.next_u32() % bound
