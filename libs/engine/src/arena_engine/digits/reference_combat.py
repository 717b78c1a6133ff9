"""A plain, object-per-digit combat written straight from the rules text.

It is not used to play: it is the oracle the fast `combat.fight` is checked against on random
armies (tests) and the baseline the benchmark measures `fight` against. Keep it obvious rather
than quick.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalogue import Catalogue, load
from .combat import FIB, PRIMES, after_limit, both_emptied
from .slate import Slate
from .targeting import TARGET_ORDER


@dataclass
class Unit:
    kind: str
    level: int
    atk: int
    hp: int
    max_hp: int
    value: int
    reach: bool
    shield: int = 0


Side = list[Unit | None]


def _mate(cell: int) -> int:
    return cell + 4 if cell < 4 else cell - 4


def _target(side: Side, column: int) -> int | None:
    for cell in TARGET_ORDER[column]:
        if side[cell] is not None:
            return cell
    return None


def _units(slate: Slate, catalogue: Catalogue) -> Side:
    out: Side = []
    for digit in slate:
        if digit is None:
            out.append(None)
            continue
        kind = catalogue[digit.kind]
        hp = kind.hp_at(digit.level)
        out.append(
            Unit(
                digit.kind,
                digit.level,
                kind.atk_at(digit.level),
                hp,
                hp,
                kind.value_at(digit.level),
                kind.reach,
            )
        )
    return out


def _opening(sides: tuple[Side, Side]) -> None:
    # 1. Plus, Minus, Abacus, applied together.
    change: dict[tuple[int, int], int] = {}
    for s, side in enumerate(sides):
        for cell, unit in enumerate(side):
            if unit is None:
                continue
            if unit.kind in ("plus", "abacus") and side[_mate(cell)] is not None:
                key = (s, _mate(cell))
                change[key] = change.get(key, 0) + unit.value
            if unit.kind in ("minus", "abacus"):
                target = _target(sides[1 - s], cell % 4)
                if target is not None:
                    key = (1 - s, target)
                    change[key] = change.get(key, 0) - unit.value
    for (s, cell), amount in change.items():
        unit = sides[s][cell]
        assert unit is not None
        unit.atk = max(0, unit.atk + amount)
    # 2. Average: the highest level, then leftmost, then front.
    for side in sides:
        averages = [(c, u) for c, u in enumerate(side) if u is not None and u.kind == "average"]
        if not averages:
            continue
        _, chosen = min(averages, key=lambda cu: (-cu[1].level, cu[0] % 4, cu[0] // 4))
        units = [u for u in side if u is not None]
        mean = sum(unit.atk for unit in units) // len(units)
        for unit in units:
            if unit.atk < mean:
                unit.atk = mean + chosen.value
    # 3. Twins.
    for side in sides:
        twins = [u for u in side if u is not None and u.kind == "twins"]
        for twin in twins:
            gain = twin.value * (len(twins) - 1)
            twin.atk, twin.hp, twin.max_hp = twin.atk + gain, twin.hp + gain, twin.max_hp + gain
    # 4. Power, from the state before the step.
    for side in sides:
        gains = []
        for cell, power in enumerate(side):
            mate = side[_mate(cell)]
            if power is not None and power.kind == "power" and mate is not None:
                gains.append((mate, min(mate.atk * mate.atk - mate.atk, power.value)))
        for mate, gain in gains:
            mate.atk += gain
    # 5. Sigma.
    for side in sides:
        count = sum(u is not None for u in side)
        for sigma in side:
            if sigma is not None and sigma.kind == "sigma":
                sigma.atk += min(count - 1, sigma.value)
    # 6. Square.
    for side in sides:
        for cell, square in enumerate(side):
            if square is not None and square.kind == "square":
                for other in (square, side[_mate(cell)]):
                    if other is not None:
                        other.shield += square.value


def _hit(unit: Unit, cell: int, side: Side, target: Unit, exchange: int) -> int:
    hit = unit.atk
    if unit.kind == "fibo":
        hit += FIB[exchange + unit.value - 1] - 1
    if unit.kind == "even" and unit.hp % 2 == 0:
        hit += unit.value
    if unit.kind == "odd" and unit.hp % 2 == 1:
        hit += unit.value
    if unit.kind == "prime" and unit.hp in PRIMES:
        hit += unit.value
    if unit.kind == "delta":
        hit += min(unit.max_hp - unit.hp, unit.value)
    mate = side[_mate(cell)]
    if mate is not None and mate.kind == "double":
        hit *= mate.value
    if unit.kind == "half":
        hit = max(hit, target.hp // 2)
    return hit


def reference_fight(
    first: Slate, second: Slate, catalogue: Catalogue | None = None, max_exchanges: int = 12
) -> tuple[str, int, int]:
    """(result for `first`, margin, exchanges)."""
    catalogue = catalogue or load()
    sides = (_units(first, catalogue), _units(second, catalogue))
    _opening(sides)
    for exchange in range(1, max_exchanges + 1):
        start_hp = [sum(u.hp for u in side if u is not None) for side in sides]
        landing: list[tuple[int, int, int]] = []
        for s, side in enumerate(sides):
            enemy = sides[1 - s]
            for cell, unit in enumerate(side):
                if unit is None or (cell >= 4 and not unit.reach):
                    continue
                t = _target(enemy, cell % 4)
                if t is None:
                    continue
                target = enemy[t]
                assert target is not None
                hit = _hit(unit, cell, side, target, exchange)
                if hit <= 0:
                    continue
                if unit.kind == "pi" and exchange % 3 == 0:
                    row = range(0, 4) if t < 4 else range(4, 8)
                    landing += [(1 - s, c, hit) for c in row if enemy[c] is not None]
                elif unit.kind == "splitter" and t < 4 and enemy[t + 4] is not None:
                    half = (hit + 1) // 2
                    landing += [(1 - s, t, half), (1 - s, t + 4, half)]
                else:
                    landing.append((1 - s, t, hit))
        for s, cell, hit in landing:
            unit = sides[s][cell]
            assert unit is not None
            if unit.kind == "modulo" and hit % unit.value == 0:
                continue
            if unit.kind == "zero":
                hit = max(1, hit - unit.value)
            absorbed = min(unit.shield, hit)
            unit.shield -= absorbed
            unit.hp -= hit - absorbed
        for side in sides:
            fallen = [(c, u) for c, u in enumerate(side) if u is not None and u.hp <= 0]
            for cell, _ in fallen:
                side[cell] = None
            for cell, unit in fallen:
                if unit.kind != "carry":
                    continue
                receiver = side[_mate(cell)]
                if receiver is None:
                    t = _target(side, cell % 4)
                    receiver = None if t is None else side[t]
                if receiver is not None:
                    receiver.atk += unit.atk
            for column in range(4):
                if side[column] is None and side[column + 4] is not None:
                    side[column], side[column + 4] = side[column + 4], None
        alive = [any(u is not None for u in side) for side in sides]
        if not alive[0] and not alive[1]:
            return both_emptied(start_hp), 0, exchange
        if not all(alive):
            hp = [sum(u.hp for u in side if u is not None) for side in sides]
            return ("win" if alive[0] else "loss"), hp[0] - hp[1], exchange
    hp = [sum(u.hp for u in side if u is not None) for side in sides]
    atk = [sum(u.atk for u in side if u is not None) for side in sides]
    return after_limit(hp, atk), hp[0] - hp[1], max_exchanges
