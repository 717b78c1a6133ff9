"""The six dice, players, and the seeded roller every roll comes from.

Rolls come from SplitMix64 (:mod:`arena_engine.splitmix`) so that a recorded seed reproduces the
same values in any language and any Python version; every roll is recorded in the events anyway,
so replay never needs the generator, only verification does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import TypeAlias

from arena_engine.splitmix import SplitMix64


class Die(StrEnum):
    D4 = "D4"
    D6 = "D6"
    D8 = "D8"
    D10 = "D10"
    D12 = "D12"
    D20 = "D20"

    @property
    def sides(self) -> int:
        return int(self.value[1:])

    @property
    def position(self) -> int:
        return DICE.index(self)


#: The dice in their canonical order (the order of every dice list in states and vectors).
DICE: tuple[Die, ...] = (Die.D4, Die.D6, Die.D8, Die.D10, Die.D12, Die.D20)
DIE_NAMES: frozenset[str] = frozenset(d.value for d in DICE)

#: One player's dice in canonical order; ``None`` marks a captured die.
Dice: TypeAlias = tuple[int | None, ...]

PLAYERS: tuple[int, int] = (1, 2)


def other(player: int) -> int:
    return 3 - player


def active(dice: Dice) -> list[Die]:
    return [die for die, value in zip(DICE, dice, strict=True) if value is not None]


def count_active(dice: Dice) -> int:
    return sum(1 for value in dice if value is not None)


class Roller(SplitMix64):
    """SplitMix64 stream from a seed (taken modulo 2**64), with unbiased die rolls."""

    __slots__ = ()

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next64()
            if x < limit:
                return x % n

    def roll(self, sides: int) -> int:
        return 1 + self.below(sides)

    def random(self) -> float:
        """Uniform float in [0, 1) (53 bits)."""
        return (self.next64() >> 11) / float(1 << 53)

    def choice(self, n: int) -> int:
        return self.below(n)


def roll_all(roller: Roller) -> Dice:
    return tuple(roller.roll(d.sides) for d in DICE)


def reroll(roller: Roller, dice: Iterable[Die]) -> tuple[tuple[Die, int], ...]:
    """New values for ``dice``, in canonical die order so the draw order is well defined."""
    ordered = sorted(set(dice), key=lambda d: d.position)
    return tuple((d, roller.roll(d.sides)) for d in ordered)


def with_values(dice: Dice, changes: Sequence[tuple[Die, int | None]]) -> Dice:
    values = list(dice)
    for die, value in changes:
        values[die.position] = value
    return tuple(values)
