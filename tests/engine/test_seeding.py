"""Pins the seeded generators' outputs: recorded seeds must replay the same draws for ever."""

from arena_engine.digits.rng import Rng, derive
from arena_engine.maths_warriors.dice import Roller


def test_splitmix64_matches_the_published_reference() -> None:
    # The first output of SplitMix64 from state 0 (Vigna's reference implementation).
    assert Roller(0).next64() == 0xE220A8397B1DCDAF


def test_digits_streams_are_pinned() -> None:
    assert derive(42, "shop", 3) == 4938406920296580220
    rng = Rng(42, "shop", 3)
    assert [rng.next64() for _ in range(3)] == [
        17574855571708625225,
        6924072002401188361,
        10452222737956569697,
    ]
    assert [rng.below(10) for _ in range(5)] == [0, 8, 9, 0, 6]
    assert rng.between(5, 9) == 6
    assert rng.choice("abcdef") == "b"
    assert rng.chance(50) is False
    assert rng.weighted([1, 0, 3]) == 2
    named = Rng("seed-x")
    assert [named.next64() for _ in range(2)] == [9613771095503868708, 15290472982235829220]


def test_maths_warriors_rolls_are_pinned() -> None:
    roller = Roller(2026)
    assert [roller.next64() for _ in range(3)] == [
        15824617304438902051,
        8699989649721214301,
        12310341597754734734,
    ]
    assert [roller.roll(20) for _ in range(6)] == [7, 2, 20, 7, 18, 1]
    assert roller.random() == 0.2300639741778534
    assert roller.choice(7) == 2
    negative = Roller(-1)  # seeds are taken modulo 2**64
    assert [negative.next64() for _ in range(2)] == [16490336266968443936, 16834447057089888969]
    assert [negative.below(3) for _ in range(5)] == [1, 0, 0, 1, 1]
