"""The puzzle trainer: a hand of dice and a target to make, graded by difficulty, with solutions.

Difficulty is that of the *easiest* solution (the solver's shortest expression):

* ``easy`` — two dice; ``medium`` — three dice, no brackets;
* ``hard`` — three dice that need brackets, or four dice; ``expert`` — five or six dice.

Puzzles are seeded: the same seed and difficulty always give the same puzzle. Answers are checked
by the same rules as a Mind attack (each die at most once, exact arithmetic, whole-number result).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .dice import DICE, Dice, Die, Roller, roll_all
from .errors import Rejection
from .moves import DieToken, Mind, MindToken
from .rules import check_move
from .solver import MindSolution, assign_dice, find, shortest_minds
from .state import GameState

MAX_ATTEMPTS = 20_000


class Difficulty(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    EXPERT = "expert"


def grade(dice_used: int, tokens: Sequence[object]) -> Difficulty:
    """The difficulty of a shortest solution with ``dice_used`` dice."""
    brackets = "(" in tokens
    if dice_used == 2:
        return Difficulty.EASY
    if dice_used == 3:
        return Difficulty.HARD if brackets else Difficulty.MEDIUM
    if dice_used == 4:
        return Difficulty.HARD
    return Difficulty.EXPERT


@dataclass(frozen=True)
class Puzzle:
    seed: int
    difficulty: Difficulty
    dice: Dice
    target: int
    #: One shortest expression for every set of dice that makes the target.
    solutions: tuple[MindSolution, ...]

    def check(self, tokens: Sequence[MindToken]) -> Rejection | None:
        """None if ``tokens`` make the target under the Mind-attack rules, else why not."""
        state = GameState.position(self.dice, _target_row(self.target), first=2, to_move=1)
        outcome = check_move(state, Mind(1, Die.D20.value, tuple(tokens)))
        return outcome if isinstance(outcome, Rejection) else None


def _target_row(target: int) -> Dice:
    # The target sits on an opponent D20 that also holds other dice, so no last-die rule applies.
    return (1, None, None, None, None, target)


def _all_solutions(dice: Dice, target: int) -> tuple[MindSolution, ...]:
    active = [d for d in DICE if dice[d.position] is not None]
    found: list[MindSolution] = []
    for size in range(2, len(active) + 1):
        for combo in itertools.combinations(active, size):
            values = tuple(sorted(dice[d.position] or 0 for d in combo))
            hit = find(values, target)
            if hit is not None:
                tokens = assign_dice(dice, combo, hit[0][1])
                found.append(MindSolution(Die.D20, combo, tokens))
    return tuple(found)


def generate(difficulty: Difficulty | str, seed: int, *, dice_count: int = 6) -> Puzzle:
    """A seeded puzzle of the given difficulty (dice values rolled, target 1..20)."""
    difficulty = Difficulty(difficulty)
    if not 2 <= dice_count <= 6:
        raise ValueError("a puzzle has 2 to 6 dice")
    roller = Roller(seed)
    for _ in range(MAX_ATTEMPTS):
        rolled = roll_all(roller)
        keep = set(range(6))
        while len(keep) > dice_count:
            keep.discard(sorted(keep)[roller.below(len(keep))])
        dice = tuple(v if i in keep else None for i, v in enumerate(rolled))
        target = roller.roll(20)
        best = shortest_minds(dice, [target]).get(target)
        if best is None:
            continue
        used, tokens = best
        if grade(len(used), tokens) is difficulty:
            return Puzzle(seed, difficulty, dice, target, _all_solutions(dice, target))
    raise RuntimeError(f"no {difficulty} puzzle found from seed {seed}")


def hint(puzzle: Puzzle) -> str:
    """The dice of the easiest solution, without the expression."""
    best = min(puzzle.solutions, key=lambda s: (len(s.dice), len(s.tokens)))
    return "use " + ", ".join(d.value for d in best.dice)


def answer_tokens(puzzle: Puzzle, text_tokens: Sequence[str]) -> tuple[MindToken, ...]:
    """Turn die names and symbols (``["D4", "+", "D6"]``) into checked Mind tokens."""
    out: list[MindToken] = []
    for tok in text_tokens:
        if tok in {d.value for d in DICE}:
            value = puzzle.dice[Die(tok).position]
            out.append(DieToken(tok, value if value is not None else 0))
        else:
            out.append(tok)
    return tuple(out)
