"""Deterministic combat between two arranged slates, with an optional step-by-step report.

The loop works on plain lists of ints (kind code, ATK, HP, max HP, shield, level, effect value
per cell) because predict() runs 384 combats at a time and the balance tool millions: a
dataclass per digit would cost several times more. `fight()` is the only public entry point.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from .catalogue import Catalogue, load
from .errors import DigitsError
from .slate import CELLS, Digit, Slate
from .targeting import TARGET_ORDER

# Effect codes, by kind name; the catalogue gives the numbers, the code gives the rule.
KIND_CODES: dict[str, int] = {
    name: code
    for code, name in enumerate(
        (
            *("plus", "minus", "twins", "even", "odd", "abacus", "zero", "carry", "prime"),
            *("splitter", "average", "sigma", "square", "fibo", "modulo", "power", "delta"),
            *("double", "half", "pi"),
        )
    )
}
(
    PLUS,
    MINUS,
    TWINS,
    EVEN,
    ODD,
    ABACUS,
    ZERO,
    CARRY,
    PRIME,
    SPLITTER,
    AVERAGE,
    SIGMA,
    SQUARE,
    FIBO,
    MODULO,
    POWER,
    DELTA,
    DOUBLE,
    HALF,
    PI,
) = range(20)
EMPTY = -1

_FIB = [0, 1, 1]
while len(_FIB) < 40:
    _FIB.append(_FIB[-1] + _FIB[-2])
FIB: tuple[int, ...] = tuple(_FIB)  # FIB[1] = FIB[2] = 1, FIB[3] = 2, ...
PRIMES = frozenset(n for n in range(2, 400) if all(n % d for d in range(2, int(n**0.5) + 1)))

WIN, LOSS, DRAW = "win", "loss", "draw"


class CombatError(DigitsError):
    """A side that cannot fight (a slate of the wrong size, an unknown kind)."""


@dataclass(frozen=True, slots=True)
class CombatRules:
    """The catalogue compiled for the combat loop.

    Per digit: (effect code, ATK, HP, effect value, level, reach).
    """

    version: str
    stats: dict[Digit, tuple[int, int, int, int, int, bool]]


@cache
def compile_rules(catalogue: Catalogue) -> CombatRules:
    stats: dict[Digit, tuple[int, int, int, int, int, bool]] = {}
    for kind in catalogue.kinds:
        code = KIND_CODES.get(kind.kind)
        if code is None:
            raise CombatError("unknown_kind")
        for level in (1, 2, 3):
            stats[Digit(kind.kind, level)] = (
                code,
                kind.atk_at(level),
                kind.hp_at(level),
                kind.value_at(level),
                level,
                kind.reach,
            )
    return CombatRules(catalogue.version, stats)


@cache
def default_rules() -> CombatRules:
    """The current catalogue compiled once (hashing a Catalogue per combat would cost more than
    a short combat)."""
    return compile_rules(load())


@dataclass(frozen=True, slots=True)
class CombatResult:
    """The outcome for the first side: result, margin (its HP left minus the other's)."""

    result: str
    margin: int
    exchanges: int
    hp: tuple[int, int]
    end: str  # "emptied" | "both_emptied" | "after_limit"
    report: tuple[dict[str, Any], ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "result": self.result,
            "margin": self.margin,
            "exchanges": self.exchanges,
            "hp": list(self.hp),
            "end": self.end,
        }
        if self.report is not None:
            out["report"] = list(self.report)
        return out


def _snapshot(
    K: list[list[int]],
    A: list[list[int]],
    H: list[list[int]],
    S: list[list[int]],
    L: list[list[int]],
    names: tuple[str, ...],
) -> list[list[dict[str, Any] | None]]:
    return [
        [
            None
            if K[s][i] < 0
            else {
                "kind": names[K[s][i]],
                "level": L[s][i],
                "atk": A[s][i],
                "hp": H[s][i],
                "shield": S[s][i],
            }
            for i in range(CELLS)
        ]
        for s in (0, 1)
    ]


_NAMES: tuple[str, ...] = tuple(sorted(KIND_CODES, key=KIND_CODES.__getitem__))


def fight(
    first: Slate,
    second: Slate,
    rules: CombatRules | None = None,
    *,
    report: bool = False,
    max_exchanges: int = 12,
) -> CombatResult:
    """Fight `first` (already arranged) against `second`; the result is `first`'s."""
    if rules is None:
        rules = default_rules()
    stats = rules.stats
    K: list[list[int]] = [[EMPTY] * CELLS, [EMPTY] * CELLS]
    A: list[list[int]] = [[0] * CELLS, [0] * CELLS]
    H: list[list[int]] = [[0] * CELLS, [0] * CELLS]
    M: list[list[int]] = [[0] * CELLS, [0] * CELLS]
    S: list[list[int]] = [[0] * CELLS, [0] * CELLS]
    L: list[list[int]] = [[0] * CELLS, [0] * CELLS]
    V: list[list[int]] = [[0] * CELLS, [0] * CELLS]
    R: list[list[bool]] = [[False] * CELLS, [False] * CELLS]
    codes: set[int] = set()
    for s, slate in enumerate((first, second)):
        if len(slate) != CELLS:
            raise CombatError("bad_slate_size")
        for i, digit in enumerate(slate):
            if digit is None:
                continue
            entry = stats.get(digit)
            if entry is None:
                raise CombatError("unknown_digit")
            code, atk, hp, value, level, reach = entry
            K[s][i] = code
            codes.add(code)
            A[s][i] = atk
            H[s][i] = M[s][i] = hp
            V[s][i] = value
            L[s][i] = level
            R[s][i] = reach
    log: list[dict[str, Any]] | None = [] if report else None
    if log is not None:
        log.append({"type": "start", "sides": _snapshot(K, A, H, S, L, _NAMES)})

    # Opening.  Each step reads the state left by the previous one; inside a step the effects of
    # both sides are worked out first and applied together, so no side acts first.
    _opening(K, A, H, M, S, L, V, codes, log)

    # Running HP totals per side: the "HP at the start of the exchange" of the both-emptied rule.
    total = [sum(H[0]), sum(H[1])]
    for ex in range(1, max_exchanges + 1):
        hp_start = [total[0], total[1]]
        hits: list[tuple[int, int, int, int, int]] = []
        for s in (0, 1):
            o = 1 - s
            Ks, As, Hs, Vs, Rs = K[s], A[s], H[s], V[s], R[s]
            Ko, Ho = K[o], H[o]
            for i in range(CELLS):
                k = Ks[i]
                if k < 0 or (i >= 4 and not Rs[i]):
                    continue
                for t in TARGET_ORDER[i & 3]:
                    if Ko[t] >= 0:
                        break
                else:
                    continue
                h = As[i]
                if k == FIBO:
                    h += FIB[ex + Vs[i] - 1] - 1
                elif k == EVEN:
                    if Hs[i] % 2 == 0:
                        h += Vs[i]
                elif k == ODD:
                    if Hs[i] % 2 == 1:
                        h += Vs[i]
                elif k == PRIME:
                    if Hs[i] in PRIMES:
                        h += Vs[i]
                elif k == DELTA:
                    h += min(M[s][i] - Hs[i], Vs[i])
                mate = i ^ 4
                if Ks[mate] == DOUBLE:
                    h *= Vs[mate]
                if k == HALF and Ho[t] // 2 > h:
                    h = Ho[t] // 2
                if h <= 0:
                    continue
                if k == PI and ex % 3 == 0:
                    row = 0 if t < 4 else 4
                    for c in range(row, row + 4):
                        if Ko[c] >= 0:
                            hits.append((o, c, h, s, i))
                elif k == SPLITTER and t < 4 and Ko[t + 4] >= 0:
                    part = (h + 1) // 2
                    hits.append((o, t, part, s, i))
                    hits.append((o, t + 4, part, s, i))
                else:
                    hits.append((o, t, h, s, i))

        taken_log: list[dict[str, Any]] | None = [] if log is not None else None
        for o, t, h, s, i in hits:
            kind = K[o][t]
            ignored = False
            absorbed = 0
            if kind == MODULO and h % V[o][t] == 0:
                ignored = True
                dealt = 0
            else:
                dealt = h
                if kind == ZERO:
                    dealt = max(1, dealt - V[o][t])
                shield = S[o][t]
                if shield:
                    absorbed = shield if shield < dealt else dealt
                    S[o][t] = shield - absorbed
                    dealt -= absorbed
                H[o][t] -= dealt
                total[o] -= dealt
            if taken_log is not None:
                taken_log.append(
                    {
                        "from": [s, i + 1],
                        "to": [o, t + 1],
                        "hit": h,
                        "ignored": ignored,
                        "shield": absorbed,
                        "damage": dealt,
                    }
                )

        falls: list[list[int]] = []
        carries: list[dict[str, Any]] = []
        fallen_carry: list[tuple[int, int, int]] = []
        # Only a digit that took a hit can fall; side then cell order keeps the report stable.
        for s, i in sorted({(o, t) for o, t, _, _, _ in hits}):
            Ks, Hs = K[s], H[s]
            if Ks[i] >= 0 and Hs[i] <= 0:
                if Ks[i] == CARRY:
                    fallen_carry.append((s, i, A[s][i]))
                total[s] -= Hs[i]  # the damage beyond 0 HP was never there to lose
                Ks[i] = EMPTY
                falls.append([s, i + 1])
        for s, i, atk in fallen_carry:
            Ks = K[s]
            receiver = -1
            if Ks[i ^ 4] >= 0:
                receiver = i ^ 4
            else:
                for t in TARGET_ORDER[i & 3]:
                    if Ks[t] >= 0:
                        receiver = t
                        break
            if receiver >= 0:
                A[s][receiver] += atk
                carries.append({"from": [s, i + 1], "to": [s, receiver + 1], "atk": atk})

        moves: list[list[int]] = []
        # After exchange 1 a front cell can only empty by a fall; at exchange 1 a slate may have
        # been saved with a back digit behind an empty front cell.
        if falls or ex == 1:
            for s in (0, 1):
                Ks = K[s]
                for c in range(4):
                    if Ks[c] < 0 and Ks[c + 4] >= 0:
                        b = c + 4
                        for arr in (K[s], A[s], H[s], M[s], S[s], L[s], V[s]):
                            arr[c] = arr[b]
                        R[s][c] = R[s][b]
                        Ks[b] = EMPTY
                        moves.append([s, b + 1, c + 1])

        if log is not None:
            log.append(
                {
                    "type": "exchange",
                    "n": ex,
                    "hits": taken_log,
                    "falls": falls,
                    "carries": carries,
                    "moves": moves,
                    "sides": _snapshot(K, A, H, S, L, _NAMES),
                }
            )

        alive = [max(K[0]) >= 0, max(K[1]) >= 0]
        if alive[0] and alive[1]:
            continue
        if not alive[0] and not alive[1]:
            return _finish(both_emptied(hp_start), "both_emptied", ex, [0, 0], A, K, log)
        hp_left = [_total(K[0], H[0]), _total(K[1], H[1])]
        return _finish(WIN if alive[0] else LOSS, "emptied", ex, hp_left, A, K, log)

    hp_left = [_total(K[0], H[0]), _total(K[1], H[1])]
    atk_left = [_total(K[0], A[0]), _total(K[1], A[1])]
    return _finish(after_limit(hp_left, atk_left), "after_limit", max_exchanges, hp_left, A, K, log)


def after_limit(hp: list[int], atk: list[int]) -> str:
    """Both standing after the last exchange: more HP (shields excluded), then more ATK."""
    if hp[0] != hp[1]:
        return WIN if hp[0] > hp[1] else LOSS
    if atk[0] != atk[1]:
        return WIN if atk[0] > atk[1] else LOSS
    return DRAW


def both_emptied(hp_at_start: list[int]) -> str:
    if hp_at_start[0] == hp_at_start[1]:
        return DRAW
    return WIN if hp_at_start[0] > hp_at_start[1] else LOSS


def _total(kinds: list[int], values: list[int]) -> int:
    return sum(values[i] for i in range(CELLS) if kinds[i] >= 0)


def _finish(
    result: str,
    end: str,
    exchanges: int,
    hp: list[int],
    A: list[list[int]],
    K: list[list[int]],
    log: list[dict[str, Any]] | None,
) -> CombatResult:
    if log is not None:
        log.append(
            {
                "type": "end",
                "result": result,
                "end": end,
                "hp": list(hp),
                "atk": [_total(K[0], A[0]), _total(K[1], A[1])],
            }
        )
    return CombatResult(
        result=result,
        margin=hp[0] - hp[1],
        exchanges=exchanges,
        hp=(hp[0], hp[1]),
        end=end,
        report=None if log is None else tuple(log),
    )


def _sides(codes: set[int], kind: int) -> tuple[int, ...]:
    """Both sides when `kind` is on the field, else none: skips a step nobody triggers."""
    return (0, 1) if kind in codes else ()


def _opening(
    K: list[list[int]],
    A: list[list[int]],
    H: list[list[int]],
    M: list[list[int]],
    S: list[list[int]],
    L: list[list[int]],
    V: list[list[int]],
    codes: set[int],
    log: list[dict[str, Any]] | None,
) -> None:
    """The six opening steps; a step whose kinds are absent from both sides is skipped."""

    def note(step: str, effects: list[dict[str, Any]]) -> None:
        if log is not None and effects:
            log.append(
                {
                    "type": "opening",
                    "step": step,
                    "effects": effects,
                    "sides": _snapshot(K, A, H, S, L, _NAMES),
                }
            )

    # 1. Additions and subtractions (Plus, Minus, Abacus); no ATK below 0.
    if codes.isdisjoint((PLUS, MINUS, ABACUS, AVERAGE, TWINS, POWER, SIGMA, SQUARE)):
        return
    delta = [[0] * CELLS, [0] * CELLS]
    effects: list[dict[str, Any]] = []
    touched = False
    for s in (0, 1):
        o = 1 - s
        for i in range(CELLS):
            k = K[s][i]
            if k in (PLUS, ABACUS):
                mate = i ^ 4
                if K[s][mate] >= 0:
                    delta[s][mate] += V[s][i]
                    touched = True
                    effects.append({"by": [s, i + 1], "to": [s, mate + 1], "atk": V[s][i]})
            if k in (MINUS, ABACUS):
                for t in TARGET_ORDER[i & 3]:
                    if K[o][t] >= 0:
                        delta[o][t] -= V[s][i]
                        touched = True
                        effects.append({"by": [s, i + 1], "to": [o, t + 1], "atk": -V[s][i]})
                        break
    if touched:
        for s in (0, 1):
            for i in range(CELLS):
                if delta[s][i] and K[s][i] >= 0:
                    A[s][i] = max(0, A[s][i] + delta[s][i])
        note("additions", effects)

    # 2. Average: one per side, the highest level, then the leftmost (then front before back).
    effects = []
    for s in _sides(codes, AVERAGE):
        best = -1
        for i in sorted(range(CELLS), key=lambda c: (c & 3, c >> 2)):
            if K[s][i] == AVERAGE and (best < 0 or L[s][i] > L[s][best]):
                best = i
        if best < 0:
            continue
        cells = [i for i in range(CELLS) if K[s][i] >= 0]
        average = sum(A[s][i] for i in cells) // len(cells)
        raised_to = average + V[s][best]
        for i in cells:
            if A[s][i] < average:
                A[s][i] = raised_to
                effects.append({"by": [s, best + 1], "to": [s, i + 1], "atk_set": raised_to})
    note("average", effects)

    # 3. Twins.
    effects = []
    for s in _sides(codes, TWINS):
        twins = [i for i in range(CELLS) if K[s][i] == TWINS]
        for i in twins:
            gain = V[s][i] * (len(twins) - 1)
            if gain:
                A[s][i] += gain
                H[s][i] += gain
                M[s][i] += gain
                effects.append({"by": [s, i + 1], "to": [s, i + 1], "atk": gain, "hp": gain})
    note("twins", effects)

    # 4. Power: worked out from the state before the step, then applied.
    effects = []
    for s in _sides(codes, POWER):
        gains = []
        for i in range(CELLS):
            mate = i ^ 4
            if K[s][i] == POWER and K[s][mate] >= 0:
                a = A[s][mate]
                gains.append((mate, min(a * a - a, V[s][i]), i))
        for mate, gain, i in gains:
            A[s][mate] += gain
            effects.append({"by": [s, i + 1], "to": [s, mate + 1], "atk": gain})
    note("power", effects)

    # 5. Sum: each Sigma.
    effects = []
    for s in _sides(codes, SIGMA):
        others = sum(1 for k in K[s] if k >= 0) - 1
        for i in range(CELLS):
            if K[s][i] == SIGMA:
                gain = min(others, V[s][i])
                A[s][i] += gain
                effects.append({"by": [s, i + 1], "to": [s, i + 1], "atk": gain})
    note("sigma", effects)

    # 6. Shields: Square, on itself and the other digit of its column.
    effects = []
    for s in _sides(codes, SQUARE):
        for i in range(CELLS):
            if K[s][i] == SQUARE:
                for c in (i, i ^ 4):
                    if K[s][c] >= 0:
                        S[s][c] += V[s][i]
                        effects.append({"by": [s, i + 1], "to": [s, c + 1], "shield": V[s][i]})
    note("shields", effects)
