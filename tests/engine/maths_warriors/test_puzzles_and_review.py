"""Puzzle trainer and post-game review."""

from __future__ import annotations

import pytest
from arena_engine.maths_warriors import Context, ErrorCode, GameState, decide
from arena_engine.maths_warriors.ai import candidates
from arena_engine.maths_warriors.endgame import capture_value, skip_value
from arena_engine.maths_warriors.events import MindAttacked, StrengthAttacked, TurnSkipped
from arena_engine.maths_warriors.puzzles import Difficulty, answer_tokens, generate, grade, hint
from arena_engine.maths_warriors.review import Verdict, rate_move, review

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


def test_review_scores_endgames_exactly() -> None:
    # Four dice in all: every option is scored by its exact winning chance, in percent.
    state = GameState.position(
        (2, None, None, None, 7, None), (None, None, None, 5, None, 6), first=1, to_move=1
    )
    own, theirs = state.dice1, state.dice2
    options = candidates(state)
    chances = [
        100.0
        * capture_value(
            own,
            theirs,
            c.target.position,
            tuple(d.position for d in c.used),
            mover_first=True,
            rules=state.ruleset,
            clock=False,
        )
        for c in options
    ]
    skip = 100.0 * skip_value(own, theirs, mover_first=True, rules=state.ruleset, clock=False)
    best = max([*chances, skip])
    for option, chance in zip(options, chances, strict=True):
        events = decide(state, option.move, Context(seed=3))
        assert isinstance(events, list)
        rating = rate_move(state, events[0])  # type: ignore[arg-type]
        assert rating.loss == pytest.approx(best - chance)
        assert (rating.verdict is Verdict.BEST) == (rating.loss <= 1e-9)
    assert max(chances) > min(chances)  # the choice matters in this position
