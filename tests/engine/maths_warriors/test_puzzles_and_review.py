"""Puzzle trainer and post-game review."""

from __future__ import annotations

import pytest
from arena_engine.maths_warriors import ErrorCode
from arena_engine.maths_warriors.events import MindAttacked, StrengthAttacked, TurnSkipped
from arena_engine.maths_warriors.puzzles import Difficulty, answer_tokens, generate, grade, hint
from arena_engine.maths_warriors.review import Verdict, review

from .conftest import play_ai_game


@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_puzzles_have_their_difficulty_and_solutions(difficulty: Difficulty) -> None:
    puzzle = generate(difficulty, seed=3)
    assert puzzle == generate(difficulty, seed=3)
    assert puzzle.solutions
    easiest = min(puzzle.solutions, key=lambda s: (len(s.dice), len(s.tokens)))
    assert grade(len(easiest.dice), easiest.tokens) is difficulty
    for solution in puzzle.solutions:
        assert puzzle.check(solution.tokens) is None
    assert hint(puzzle).startswith("use ")


def test_puzzle_answers_are_checked_like_mind_attacks() -> None:
    puzzle = generate(Difficulty.EASY, seed=1)
    solution = puzzle.solutions[0]
    names = [t if isinstance(t, str) else t.die for t in solution.tokens]
    assert puzzle.check(answer_tokens(puzzle, names)) is None
    first = names[0]
    twice = answer_tokens(puzzle, [first, "+", first])
    rejection = puzzle.check(twice)
    assert rejection is not None and rejection.code is ErrorCode.DIE_USED_TWICE


def test_review_rates_every_move() -> None:
    _, events, _ = play_ai_game("easy", "impossible", seed=8)
    moves = [e for e in events if isinstance(e, (StrengthAttacked, MindAttacked, TurnSkipped))]
    reviews = review(events)
    assert [r.player for r in reviews] == [e.player for e in moves]
    assert [r.number for r in reviews] == list(range(1, len(moves) + 1))
    for r in reviews:
        assert r.loss >= 0
        if r.verdict is Verdict.FORCED:
            assert r.best is None
        else:
            assert r.best is not None
    assert any(r.verdict is Verdict.BEST for r in reviews)
    # The easy side plays a random capture 70% of the time: it gives something away.
    assert any(r.player == 1 and r.loss > 0 for r in reviews)
