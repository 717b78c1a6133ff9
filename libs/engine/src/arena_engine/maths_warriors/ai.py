"""Computer opponents: ``easy``, ``medium``, ``hard`` and ``impossible``.

Every level is seeded: :func:`choose_move` takes the seed it draws from (the match service records
it with the move), so a game against the AI replays and verifies like any other.

How the levels play (the old client's levels, made precise):

* All levels generate the same moves: every Strength capture, and every Mind capture by any set of
  up to four dice (five and six dice only when no smaller set reaches that target). Skipping is
  chosen only when no capture exists.
* ``easy``, ``medium`` and ``hard`` take the near-best move with probability 0.3, 0.6 and 0.85,
  and otherwise a capture drawn uniformly at random. The near-best move maximises a one-move
  evaluation (below) with the spent dice counted at their expected reroll.
* ``impossible`` always plays its best move. With four dice or fewer left in all it solves the
  position exactly (:mod:`.endgame`: every capture, every reroll, and skipping) and plays
  perfectly. Otherwise it simulates: its eight most promising moves (by the evaluation) are each
  played out 24 times to the end of the game, with sampled rerolls and a fast greedy policy for
  both sides, switching to the exact solution once three dice or fewer are left; the move with the
  most wins is played. All candidates are simulated with the same seeds (common random numbers),
  so the comparison is not drowned in dice noise.

The evaluation favours, in this order: having more dice than the opponent; the opponent having
few dice that can still capture ours by Strength; high values on our dice (strong Strength attacks,
hard to take by Strength) and low values on theirs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .dice import DICE, Dice, Die, Roller, count_active, other
from .endgame import EXACT_DICE, capture_value, skip_value, win_chance
from .moves import Mind, Move, Skip, Strength
from .rules import penalty_applies, strength_allows, timeout_winner
from .ruleset import FirstPlayerPenalty
from .solver import assign_dice, find, shortest_minds
from .state import GameState

WIN = 1_000_000.0


class Level(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    IMPOSSIBLE = "impossible"


#: Chance of playing the near-best move (the old client's figures).
NEAR_BEST_CHANCE: dict[Level, float] = {
    Level.EASY: 0.3,
    Level.MEDIUM: 0.6,
    Level.HARD: 0.85,
    Level.IMPOSSIBLE: 1.0,
}

MAX_MIND_DICE = 4  # larger sets only as a fallback: more dice spent is rarely better
LOOKAHEAD_MOVES = 8


@dataclass(frozen=True)
class Candidate:
    """A capture: the target and the mover's dice it spends (rerolled)."""

    target: Die
    used: tuple[Die, ...]
    move: Strength | Mind


def candidates(state: GameState, player: int | None = None) -> list[Candidate]:
    """Every capture the AI considers for the player on move."""
    mover = state.to_move if player is None else player
    own, theirs = state.dice(mover), state.dice(other(mover))
    strict = penalty_applies(state, mover)
    mind_ok = not (
        strict and state.ruleset.first_player_penalty is FirstPlayerPenalty.STRENGTH_AND_MIND
    )
    mine = [d for d in DICE if own[d.position] is not None]
    found: list[Candidate] = []
    targets = [d for d in DICE if theirs[d.position] is not None]
    for target in targets:
        tv = theirs[target.position]
        assert tv is not None
        for attacker in mine:
            av = own[attacker.position]
            assert av is not None
            if strength_allows(av, tv, strict):
                move = Strength(mover, (attacker.value,), target.value)
                found.append(Candidate(target, (attacker,), move))
        if not mind_ok:
            continue
        hit_any = False
        for size in range(2, min(MAX_MIND_DICE, len(mine)) + 1):
            for combo in itertools.combinations(mine, size):
                values = tuple(sorted(own[d.position] or 0 for d in combo))
                hit = find(values, tv)
                if hit is None:
                    continue
                hit_any = True
                tokens = assign_dice(own, combo, hit[0][1])
                found.append(Candidate(target, combo, Mind(mover, target.value, tokens)))
        if not hit_any and len(mine) > MAX_MIND_DICE:
            solutions = shortest_minds(own, [tv])
            if tv in solutions:
                dice, value_tokens = solutions[tv]
                tokens = assign_dice(own, dice, value_tokens)
                found.append(Candidate(target, dice, Mind(mover, target.value, tokens)))
    return found


def _expected(die: Die) -> float:
    return (die.sides + 1) / 2


def evaluate(own: Dice, theirs: Dice, *, own_first: bool) -> float:
    """How good ``own`` is against ``theirs`` with the opponent about to move (higher: better)."""
    n_own, n_theirs = count_active(own), count_active(theirs)
    if n_theirs == 0:
        return WIN
    if n_own == 0:
        return -WIN
    own_values = [v for v in own if v is not None]
    their_values = [v for v in theirs if v is not None]
    score = 100.0 * (n_own - n_theirs)
    # Their Strength threats: how many of our dice each of theirs could take next turn.
    threats = sum(1 for t in their_values for o in own_values if t >= o)
    # Our Strength reach against theirs (strict only matters on a last die).
    reach = sum(1 for o in own_values for t in their_values if o >= t)
    score += 4.0 * reach - 4.0 * threats
    score += 1.5 * sum(own_values) / n_own - 1.5 * sum(their_values) / n_theirs
    # A lone die can only attack by Strength: being down to one die is a heavy handicap.
    if n_own == 1:
        score -= 60.0
    if n_theirs == 1:
        score += 60.0
        last = their_values[0]
        if not any(strength_allows(o, last, own_first) for o in own_values) and n_own == 1:
            score -= 80.0
    return score


def _after(state: GameState, cand: Candidate, rolls: dict[Die, int] | None) -> tuple[Dice, Dice]:
    mover = state.to_move
    own = list(state.dice(mover))
    theirs = list(state.dice(other(mover)))
    theirs[cand.target.position] = None
    for die in cand.used:
        own[die.position] = rolls[die] if rolls is not None else round(_expected(die))
    return tuple(own), tuple(theirs)


def score_move(state: GameState, cand: Candidate) -> float:
    """The one-move evaluation of a capture for the player on move (spent dice at their mean)."""
    mover = state.to_move
    own, theirs = _after(state, cand, None)
    if count_active(theirs) == 0:
        return WIN
    score = evaluate(own, theirs, own_first=mover == state.first)
    # Prefer spending dice that show less than they would reroll to on average.
    score += sum(_expected(d) - (state.dice(mover)[d.position] or 0) for d in cand.used) * 0.5
    return score


ROLLOUTS = 24
ROLLOUT_EXACT_DICE = 3  # cheap enough to solve inside every simulated game
FAST_GAIN = 0.5
ROLLOUT_PLIES = 40


def _fast_capture(
    own: Dice, theirs: Dice, strict_last: bool, mind_ok: bool
) -> tuple[Die, tuple[Die, ...]] | None:
    """The rollout policy: a cheap stand-in for the evaluation. Prefer removing high dice and
    spending dice that show less than their mean; Mind by pairs and triples only."""
    mine = [d for d in DICE if own[d.position] is not None]
    targets = [d for d in DICE if theirs[d.position] is not None]
    strict = strict_last and len(targets) == 1
    best: tuple[float, Die, tuple[Die, ...]] | None = None
    gains = {d: _expected(d) - (own[d.position] or 0) for d in mine}
    combos = [c for size in (2, 3) for c in itertools.combinations(mine, size)]
    for target in targets:
        tv = theirs[target.position] or 0
        for attacker in mine:
            if strength_allows(own[attacker.position] or 0, tv, strict):
                score = tv + FAST_GAIN * gains[attacker]
                if best is None or score > best[0]:
                    best = (score, target, (attacker,))
        if not mind_ok and strict:
            continue
        for combo in combos:
            score = tv + FAST_GAIN * sum(gains[d] for d in combo)
            if best is not None and score <= best[0]:
                continue
            values = tuple(sorted(own[d.position] or 0 for d in combo))
            if find(values, tv) is not None:
                best = (score, target, combo)
    return None if best is None else (best[1], best[2])


def _has_clock(state: GameState) -> bool:
    """Whether a stalled game ends (on the game clock) rather than never."""
    return state.clocks.game_seconds is not None


def _rollout(state: GameState, own: Dice, theirs: Dice, me: int, roller: Roller) -> float:
    """Play the rest of the game with the rollout policy; 1.0 if ``me`` wins."""
    dice = {me: list(own), other(me): list(theirs)}
    clock = _has_clock(state)
    mover = other(me)
    skips = 0
    mind_barred = state.ruleset.first_player_penalty is FirstPlayerPenalty.STRENGTH_AND_MIND
    for _ in range(ROLLOUT_PLIES):
        mover_first = mover == state.first
        own_now, theirs_now = tuple(dice[mover]), tuple(dice[other(mover)])
        exact = None
        if count_active(own_now) + count_active(theirs_now) <= ROLLOUT_EXACT_DICE:
            exact = win_chance(
                own_now, theirs_now, mover_first=mover_first, rules=state.ruleset, clock=clock
            )
        if exact is not None:
            return exact if mover == me else 1.0 - exact
        capture = _fast_capture(
            tuple(dice[mover]),
            tuple(dice[other(mover)]),
            mover_first,
            not (mover_first and mind_barred),
        )
        if capture is None:
            skips += 1
            if skips >= 2:
                if not clock:
                    return 0.5
                r = {p: sum(1 for v in dice[p] if v is not None) for p in (1, 2)}
                winner = timeout_winner(r[1], r[2], state.first, state.ruleset)
                return 1.0 if winner == me else 0.0
        else:
            skips = 0
            target, used = capture
            dice[other(mover)][target.position] = None
            for d in used:
                dice[mover][d.position] = roller.roll(d.sides)
            if all(v is None for v in dice[other(mover)]):
                return 1.0 if mover == me else 0.0
        mover = other(mover)
    return 0.5


def _rollout_value(state: GameState, cand: Candidate, seeds: Sequence[int]) -> float:
    """Share of simulated games won after ``cand``. Every candidate is simulated with the same
    seeds (common random numbers), so their differences are not drowned in dice noise."""
    mover = state.to_move
    if count_active(state.dice(other(mover))) == 1:
        return WIN
    total = 0.0
    for seed in seeds:
        roller = Roller(seed)
        rolls = {d: roller.roll(d.sides) for d in cand.used}
        own, theirs = _after(state, cand, rolls)
        total += _rollout(state, own, theirs, mover, roller)
    return total / len(seeds)


def _best(
    state: GameState, moves: list[Candidate], level: Level, roller: Roller
) -> Candidate | None:
    """The level's best move; None when skipping is strictly better (exact endgames only)."""
    ranked = sorted(moves, key=lambda c: score_move(state, c), reverse=True)
    if level is not Level.IMPOSSIBLE:
        return ranked[0]
    mover, first = state.to_move, state.to_move == state.first
    clock = _has_clock(state)
    own, theirs = state.dice(mover), state.dice(other(mover))
    if count_active(own) + count_active(theirs) <= EXACT_DICE:
        values = {
            id(c): capture_value(
                own,
                theirs,
                c.target.position,
                tuple(d.position for d in c.used),
                mover_first=first,
                rules=state.ruleset,
                clock=clock,
            )
            for c in moves
        }
        best = max(moves, key=lambda c: values[id(c)])
        if (
            skip_value(own, theirs, mover_first=first, rules=state.ruleset, clock=clock)
            > values[id(best)]
        ):
            return None
        return best
    shortlist = ranked[:LOOKAHEAD_MOVES]
    seeds = [roller.next64() for _ in range(ROLLOUTS)]
    return max(shortlist, key=lambda c: _rollout_value(state, c, seeds))


def choose_move(state: GameState, level: Level | str, seed: int) -> Move:
    """The AI's move for the player on move in ``state``; deterministic for a given seed."""
    level = Level(level)
    roller = Roller(seed)
    moves = candidates(state)
    if not moves:
        return Skip(state.to_move)
    if roller.random() < NEAR_BEST_CHANCE[level]:
        chosen = _best(state, moves, level, roller)
        return Skip(state.to_move) if chosen is None else chosen.move
    return moves[roller.below(len(moves))].move
