"""Exact endgames: the chance that the player on move wins, with both sides playing perfectly.

Small positions (at most four dice in all) are solved by expectimax over every capture, every
reroll outcome and the option to skip. Two skips in a row stall the game until the game clock
runs out, so they score by the timeout rule — or as half a win in a game without a game clock,
which a stalled game can never leave. Dice are identified by (sides, value) only: which of two
equal dice is used does not change the game.
"""

from __future__ import annotations

import itertools
from functools import cache
from typing import TypeAlias

from .dice import DICE, Dice
from .rules import strength_allows, timeout_winner
from .ruleset import FirstPlayerPenalty, Ruleset
from .solver import find

#: Positions up to this many dice in all are solved exactly.
EXACT_DICE = 4

#: Sorted (sides, value) pairs of one side's active dice.
Side: TypeAlias = tuple[tuple[int, int], ...]
#: A capture: the index of the target and the indices of the mover's dice it spends.
Capture: TypeAlias = tuple[int, tuple[int, ...]]


def side(dice: Dice) -> Side:
    return tuple(sorted((d.sides, v) for d, v in zip(DICE, dice, strict=True) if v is not None))


def _captures(own: Side, theirs: Side, strict: bool, mind_ok: bool) -> set[Capture]:
    found: set[Capture] = set()
    for j, (_, tv) in enumerate(theirs):
        for i, (_, av) in enumerate(own):
            if strength_allows(av, tv, strict):
                found.add((j, (i,)))
        if not mind_ok:
            continue
        for size in range(2, len(own) + 1):
            for combo in itertools.combinations(range(len(own)), size):
                if find(tuple(sorted(own[i][1] for i in combo)), tv) is not None:
                    found.add((j, combo))
    return found


def _stalled(own: Side, theirs: Side, mover_first: bool, rules: Ruleset, clock: bool) -> float:
    if not clock:
        return 0.5
    first = 1 if mover_first else 2
    return 1.0 if timeout_winner(len(own), len(theirs), first, rules) == 1 else 0.0


@cache
def _win(
    own: Side, theirs: Side, mover_first: bool, passed: bool, rules: Ruleset, clock: bool
) -> float:
    if not theirs:
        return 1.0
    if not own:
        return 0.0
    strict = mover_first and len(theirs) == 1
    mind_ok = not (strict and rules.first_player_penalty is FirstPlayerPenalty.STRENGTH_AND_MIND)
    if passed:
        best = _stalled(own, theirs, mover_first, rules, clock)  # skipping again stalls
    else:
        best = 1.0 - _win(theirs, own, not mover_first, True, rules, clock)
    for target, used in _captures(own, theirs, strict, mind_ok):
        remaining = theirs[:target] + theirs[target + 1 :]
        if not remaining:
            return 1.0
        total = 0.0
        outcomes = list(itertools.product(*(range(1, own[i][0] + 1) for i in used)))
        for rolls in outcomes:
            after = list(own)
            for i, value in zip(used, rolls, strict=True):
                after[i] = (own[i][0], value)
            total += 1.0 - _win(
                remaining, tuple(sorted(after)), not mover_first, False, rules, clock
            )
        best = max(best, total / len(outcomes))
    return best


def win_chance(
    own: Dice, theirs: Dice, *, mover_first: bool, rules: Ruleset, clock: bool
) -> float | None:
    """Exact winning chance of the player on move holding ``own``, or None for a position of
    more than :data:`EXACT_DICE` dice."""
    a, b = side(own), side(theirs)
    if len(a) + len(b) > EXACT_DICE:
        return None
    return _win(a, b, mover_first, False, rules, clock)


def capture_value(
    own: Dice,
    theirs: Dice,
    target: int,
    used: tuple[int, ...],
    *,
    mover_first: bool,
    rules: Ruleset,
    clock: bool,
) -> float:
    """Exact winning chance after capturing ``theirs[target]`` with ``own[used]`` (canonical die
    positions), averaged over the rerolls."""
    remaining = tuple(None if i == target else v for i, v in enumerate(theirs))
    if all(v is None for v in remaining):
        return 1.0
    outcomes = list(itertools.product(*(range(1, DICE[i].sides + 1) for i in used)))
    total = 0.0
    for rolls in outcomes:
        after = list(own)
        for i, value in zip(used, rolls, strict=True):
            after[i] = value
        total += 1.0 - _win(
            side(remaining), side(tuple(after)), not mover_first, False, rules, clock
        )
    return total / len(outcomes)


def skip_value(own: Dice, theirs: Dice, *, mover_first: bool, rules: Ruleset, clock: bool) -> float:
    """Exact winning chance after skipping."""
    return 1.0 - _win(side(theirs), side(own), not mover_first, True, rules, clock)
