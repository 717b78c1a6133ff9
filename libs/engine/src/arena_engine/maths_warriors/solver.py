"""The complete move generator.

Mind attacks are searched over every sub-multiset of two or more of the mover's dice, with all
four operators, every parenthesisation and exact rational arithmetic. For each capturable target
it reports one *shortest* expression: fewest dice first, then fewest parentheses (the token count
is ``2 × dice − 1 + 2 × parentheses``).

How it stays fast: every reachable value of a multiset of at most three dice is tabulated once and
memoised by the sorted values (there are only 1,540 such multisets of values 1..20). Larger
multisets are searched target-first: ``t = a ∘ b`` over a split ``A | B`` fixes the value ``a``
must take for each value ``b`` of the smaller side, so only those values are looked up (or
searched for, recursively). Sizes are tried in increasing order and a target found with ``k`` dice
is not searched with more, so the common position never looks past three dice. Integers stay
Python ints; :class:`~fractions.Fraction` appears only for non-integral intermediates.

Parenthesis counts are minimised exactly: for every value the search keeps the cheapest expression
in each of three contexts (anywhere; as an operand of × ÷ or right of −; right of ÷), which is all
that decides whether an operand needs brackets.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import TypeAlias

from .dice import DICE, Dice, Die, count_active
from .expression import Token, render
from .moves import DieToken, Mind, MindToken, Strength
from .rules import strength_allows
from .ruleset import DEFAULT_RULESET, FirstPlayerPenalty, Ruleset

Value: TypeAlias = int | Fraction
#: An expression over die *values*: (parentheses, tokens).
Entry: TypeAlias = tuple[int, tuple[Token, ...]]
#: The cheapest expression of a value in each context: (anywhere, no-additive, atomic).
Contexts: TypeAlias = tuple[Entry, Entry, Entry]
Table: TypeAlias = dict[Value, Contexts]

_ATOM, _ADD, _MUL = 0, 1, 2
_SMALL = 3  # multisets up to this size are tabulated in full


def _div(a: Value, b: Value) -> Value:
    if isinstance(a, int) and isinstance(b, int):
        q, r = divmod(a, b)
        if r == 0:
            return q
        return Fraction(a, b)
    v = Fraction(a) / b
    return v.numerator if v.denominator == 1 else v


def _norm(v: Value) -> Value:
    if isinstance(v, Fraction) and v.denominator == 1:
        return v.numerator
    return v


def _contexts(cells: Sequence[Entry | None]) -> Contexts:
    """From the cheapest entry per top-level class to the cheapest entry per context."""
    best_any: Entry | None = None
    for cell in cells:
        if cell is not None and (best_any is None or cell[0] < best_any[0]):
            best_any = cell
    assert best_any is not None

    def wrapped(cell: Entry) -> Entry:
        return cell[0] + 1, ("(", *cell[1], ")")

    atom, add, mul = cells
    options_noadd = [c for c in (atom, mul) if c is not None]
    if add is not None:
        options_noadd.append(wrapped(add))
    noadd = min(options_noadd, key=lambda c: c[0])
    options_atomic = [atom] if atom is not None else []
    options_atomic += [wrapped(c) for c in (add, mul) if c is not None]
    atomic = min(options_atomic, key=lambda c: c[0])
    return best_any, noadd, atomic


class _Cells:
    """Cheapest expression per (value, class) while combining."""

    def __init__(self) -> None:
        self.cells: dict[Value, list[Entry | None]] = {}

    def offer(self, value: Value, cls: int, cost: int, build: tuple[Token, ...]) -> None:
        row = self.cells.get(value)
        if row is None:
            row = self.cells[value] = [None, None, None]
        cur = row[cls]
        if cur is None or cost < cur[0]:
            row[cls] = (cost, build)

    def improves(self, value: Value, cls: int, cost: int) -> bool:
        row = self.cells.get(value)
        if row is None:
            return True
        cur = row[cls]
        return cur is None or cost < cur[0]

    def table(self) -> Table:
        return {v: _contexts(row) for v, row in self.cells.items()}


def _combine(ta: Table, tb: Table, out: _Cells) -> None:
    for va, (a_any, a_na, a_at) in ta.items():
        for vb, (b_any, b_na, b_at) in tb.items():
            for value, cls, left, op, right in (
                (va + vb, _ADD, a_any, "+", b_any),
                (va - vb, _ADD, a_any, "-", b_na),
                (vb - va, _ADD, b_any, "-", a_na),
                (va * vb, _MUL, a_na, "*", b_na),
            ):
                value = _norm(value)
                cost = left[0] + right[0]
                if out.improves(value, cls, cost):
                    out.offer(value, cls, cost, (*left[1], op, *right[1]))
            if vb != 0:
                value, cost = _div(va, vb), a_na[0] + b_at[0]
                if out.improves(value, _MUL, cost):
                    out.offer(value, _MUL, cost, (*a_na[1], "/", *b_at[1]))
            if va != 0:
                value, cost = _div(vb, va), b_na[0] + a_at[0]
                if out.improves(value, _MUL, cost):
                    out.offer(value, _MUL, cost, (*b_na[1], "/", *a_at[1]))


def _splits(values: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Distinct unordered splits of a sorted multiset into two non-empty sub-multisets,
    the first at least as large as the second."""
    n = len(values)
    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    result = []
    for size in range((n + 1) // 2, n):
        for idx in itertools.combinations(range(n), size):
            a = tuple(values[i] for i in idx)
            chosen = set(idx)
            b = tuple(values[i] for i in range(n) if i not in chosen)
            key = (a, b) if len(a) > len(b) or a >= b else (b, a)
            if key not in seen:
                seen.add(key)
                result.append(key)
    return result


_splits_cached = cache(_splits)


@cache
def table(values: tuple[int, ...]) -> Table:
    """Every value a sorted multiset of at most three dice reaches using all of them."""
    if len(values) == 1:
        entry: Entry = (0, (values[0],))
        return {values[0]: (entry, entry, entry)}
    out = _Cells()
    for a, b in _splits_cached(values):
        _combine(table(a), table(b), out)
    return out.table()


_find_memo: dict[tuple[tuple[int, ...], Value], Contexts | None] = {}


def find(values: tuple[int, ...], target: Value) -> Contexts | None:
    """The cheapest expressions of ``target`` using all of ``values`` (sorted), or None."""
    if len(values) <= _SMALL:
        return table(values).get(target)
    key = (values, target)
    if key in _find_memo:
        return _find_memo[key]
    out = _Cells()
    for a, b in _splits_cached(values):
        tb = table(b)
        for vb, (b_any, b_na, b_at) in tb.items():
            # t = a + b | a - b | b - a | a * b | a / b | b / a, solved for a.
            wanted: list[tuple[Value, int, bool, str, int]] = [
                (_norm(target - vb), _ADD, True, "+", 0),
                (_norm(target + vb), _ADD, True, "-", 1),
                (_norm(vb - target), _ADD, False, "-", 1),
            ]
            if vb != 0:
                wanted.append((_div(target, vb), _MUL, True, "*", 1))
                wanted.append((_norm(target * vb), _MUL, True, "/", 2))
                if target != 0:
                    wanted.append((_div(vb, target), _MUL, False, "/", 2))
            for va, cls, a_left, op, ctx_right in wanted:
                found = find(a, va)
                if found is None:
                    continue
                if a_left:
                    left = found[1] if op in "*/" else found[0]
                    right = (b_any, b_na, b_at)[ctx_right]
                else:
                    left = b_na if op == "/" else b_any
                    right = found[ctx_right]
                cost = left[0] + right[0]
                if out.improves(target, cls, cost):
                    out.offer(target, cls, cost, (*left[1], op, *right[1]))
    result = out.table().get(target)
    _find_memo[key] = result
    if len(_find_memo) > 500_000:  # bound the memory of a long-running process
        _find_memo.clear()
    return result


def reachable(values: Iterable[int], target: int) -> tuple[Token, ...] | None:
    """A shortest expression using *all* ``values`` that equals ``target``, or None."""
    found = find(tuple(sorted(values)), target)
    return None if found is None else found[0][1]


@dataclass(frozen=True)
class MindSolution:
    target: Die
    dice: tuple[Die, ...]
    tokens: tuple[MindToken, ...]

    def text(self) -> str:
        return render([t.die if isinstance(t, DieToken) else t for t in self.tokens])

    def value_text(self) -> str:
        return render([t.value if isinstance(t, DieToken) else t for t in self.tokens])


def assign_dice(own: Dice, used: Sequence[Die], tokens: Sequence[Token]) -> tuple[MindToken, ...]:
    """Give every value leaf in ``tokens`` a distinct die of ``used`` showing that value."""
    pool = list(used)
    out: list[MindToken] = []
    for tok in tokens:
        if isinstance(tok, int):
            die = next(d for d in pool if own[d.position] == tok)
            pool.remove(die)
            out.append(DieToken(die.value, tok))
        else:
            out.append(tok)
    return tuple(out)


def _subsets(own: Dice, size: int) -> Iterable[tuple[tuple[int, ...], tuple[Die, ...]]]:
    """Distinct value-multisets of ``size`` of the active dice, with one choice of dice each."""
    dice = sorted(
        (d for d in DICE if own[d.position] is not None), key=lambda d: own[d.position] or 0
    )
    seen: set[tuple[int, ...]] = set()
    for combo in itertools.combinations(dice, size):
        values = tuple(own[d.position] or 0 for d in combo)
        if values not in seen:
            seen.add(values)
            yield values, combo


def shortest_minds(
    own: Dice, targets: Iterable[int]
) -> dict[int, tuple[tuple[Die, ...], tuple[Token, ...]]]:
    """For each target value some Mind attack reaches, one shortest (dice, value tokens)."""
    left = set(targets)
    found: dict[int, tuple[tuple[Die, ...], tuple[Token, ...]]] = {}
    for size in range(2, count_active(own) + 1):
        if not left:
            break
        best: dict[int, tuple[int, tuple[Die, ...], tuple[Token, ...]]] = {}
        for values, dice in _subsets(own, size):
            for t in left:
                hit = find(values, t)
                if hit is not None and (t not in best or hit[0][0] < best[t][0]):
                    best[t] = (hit[0][0], dice, hit[0][1])
        for t, (_, dice, tokens) in best.items():
            found[t] = (dice, tokens)
        left -= set(best)
    return found


@dataclass(frozen=True)
class Capturable:
    strength: list[Die] = field(default_factory=list)
    mind: list[Die] = field(default_factory=list)
    #: One shortest Mind expression (die names) per Mind-capturable target.
    expressions: dict[Die, str] = field(default_factory=dict)
    strength_moves: list[tuple[Die, Die]] = field(default_factory=list)  # (attacker, target)
    mind_moves: list[MindSolution] = field(default_factory=list)


def capturable(
    own: Dice, targets: Dice, *, mover_is_first: bool = False, ruleset: Ruleset = DEFAULT_RULESET
) -> Capturable:
    """Every legal capture: each Strength (attacker, target) pair and one shortest Mind attack
    per capturable target (dice in canonical order in the lists)."""
    last_die = count_active(targets) == 1
    strict = mover_is_first and last_die
    result = Capturable()
    for target in DICE:
        tv = targets[target.position]
        if tv is None:
            continue
        for attacker in DICE:
            av = own[attacker.position]
            if av is not None and strength_allows(av, tv, strict):
                result.strength_moves.append((attacker, target))
        if any(m[1] == target for m in result.strength_moves):
            result.strength.append(target)
    mind_barred = strict and ruleset.first_player_penalty is FirstPlayerPenalty.STRENGTH_AND_MIND
    if mind_barred:
        return result
    wanted = {tv for tv in targets if tv is not None}
    solutions = shortest_minds(own, wanted)
    for target in DICE:
        tv = targets[target.position]
        if tv is None or tv not in solutions:
            continue
        dice, tokens = solutions[tv]
        solution = MindSolution(target, dice, assign_dice(own, dice, tokens))
        result.mind.append(target)
        result.mind_moves.append(solution)
        result.expressions[target] = solution.text()
    return result


def legal_captures(
    own: Dice,
    targets: Dice,
    player: int,
    *,
    mover_is_first: bool = False,
    ruleset: Ruleset = DEFAULT_RULESET,
) -> list[Strength | Mind]:
    """The complete move generator as moves: every Strength capture and one shortest Mind
    capture per target."""
    found = capturable(own, targets, mover_is_first=mover_is_first, ruleset=ruleset)
    moves: list[Strength | Mind] = [
        Strength(player, (a.value,), t.value) for a, t in found.strength_moves
    ]
    moves += [Mind(player, s.target.value, s.tokens) for s in found.mind_moves]
    return moves


def clear_caches() -> None:
    """Forget every memoised table (benchmarks measure the cold solver this way)."""
    table.cache_clear()
    _splits_cached.cache_clear()
    _find_memo.clear()
