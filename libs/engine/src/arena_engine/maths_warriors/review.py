"""Post-game review: every move rated against the best move that was available.

The review replays the game's events. Before each move it lists every capture the player had (the
AI's move generator: Strength, and Mind with any parenthesisation) and scores them with the AI's
one-move evaluation; the played move is rated by how far it falls short of the best:

* ``best`` — as good as the best; ``good`` — within 10 points; ``inaccuracy`` — within 40;
* ``mistake`` — further behind; ``missed_capture`` — a skip while a capture was available;
* ``forced`` — a skip (or move-clock timeout) with no capture available.

With four dice or fewer left in all, moves are scored exactly instead: the winning chance in
percent after the move (:mod:`.endgame`, skipping included), with ``good`` within 5 points and
``inaccuracy`` within 15; a skip there is rated like any move.

The best move is shown with its expression, brackets included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from .ai import Candidate, candidates, score_move
from .dice import Die, count_active
from .endgame import EXACT_DICE, capture_value, skip_value
from .events import Event, MindAttacked, StrengthAttacked, TurnSkipped
from .expression import render
from .game import apply
from .moves import DieToken, Mind, Strength
from .state import GameState

GOOD_MARGIN = 10.0
INACCURACY_MARGIN = 40.0
EXACT_GOOD_MARGIN = 5.0
EXACT_INACCURACY_MARGIN = 15.0


class Verdict(StrEnum):
    BEST = "best"
    GOOD = "good"
    INACCURACY = "inaccuracy"
    MISTAKE = "mistake"
    MISSED_CAPTURE = "missed_capture"
    FORCED = "forced"


@dataclass(frozen=True)
class MoveReview:
    number: int
    player: int
    played: str
    best: str | None
    verdict: Verdict
    loss: float  # evaluation points given up against the best move


def describe(cand: Candidate, state: GameState) -> str:
    own = state.dice(state.to_move)
    theirs = state.dice(3 - state.to_move)
    target = f"{cand.target.value} ({theirs[cand.target.position]})"
    if isinstance(cand.move, Strength):
        attacker = cand.used[0]
        return f"Strength {attacker.value} ({own[attacker.position]}) takes {target}"
    values = [t.value if isinstance(t, DieToken) else t for t in cand.move.tokens]
    return f"Mind {render(values)} takes {target}"


def _played(state: GameState, event: StrengthAttacked | MindAttacked) -> Candidate:
    own = state.dice(event.player)
    if isinstance(event, StrengthAttacked):
        move: Strength | Mind = Strength(event.player, (event.attacker,), event.target)
        used: tuple[Die, ...] = (Die(event.attacker),)
    else:
        tokens = tuple(
            DieToken(t, own[Die(t).position] or 0) if t.startswith("D") else t for t in event.tokens
        )
        move = Mind(event.player, event.target, tokens)
        used = tuple(Die(t) for t in event.tokens if t.startswith("D"))
    return Candidate(Die(event.target), used, move)


def _exact_scores(
    state: GameState, options: list[Candidate]
) -> tuple[Callable[[Candidate], float], float] | None:
    """Winning-chance scorer (percent) and the skip's score, for positions solved exactly."""
    mover = state.to_move
    own, theirs = state.dice(mover), state.dice(3 - mover)
    if count_active(own) + count_active(theirs) > EXACT_DICE:
        return None
    first, clock = mover == state.first, state.clocks.game_seconds is not None

    def score(c: Candidate) -> float:
        used = tuple(d.position for d in c.used)
        return 100.0 * capture_value(
            own,
            theirs,
            c.target.position,
            used,
            mover_first=first,
            rules=state.ruleset,
            clock=clock,
        )

    skip = 100.0 * skip_value(own, theirs, mover_first=first, rules=state.ruleset, clock=clock)
    return score, skip


def _verdict(loss: float, good: float, inaccuracy: float) -> Verdict:
    if loss <= 1e-9:
        return Verdict.BEST
    if loss <= good:
        return Verdict.GOOD
    if loss <= inaccuracy:
        return Verdict.INACCURACY
    return Verdict.MISTAKE


def rate_move(state: GameState, event: StrengthAttacked | MindAttacked | TurnSkipped) -> MoveReview:
    options = candidates(state)
    number = state.move_count + 1
    exact = _exact_scores(state, options)
    score: Callable[[Candidate], float] = exact[0] if exact else (lambda c: score_move(state, c))
    scored = sorted(((score(c), c) for c in options), key=lambda x: -x[0])
    best_score = scored[0][0] if scored else None
    best_text = describe(scored[0][1], state) if scored else None
    good, inaccuracy = (
        (EXACT_GOOD_MARGIN, EXACT_INACCURACY_MARGIN) if exact else (GOOD_MARGIN, INACCURACY_MARGIN)
    )
    if isinstance(event, TurnSkipped):
        played = "skip" if event.reason == "skip" else "move clock ran out"
        if best_score is None:
            return MoveReview(number, event.player, played, None, Verdict.FORCED, 0.0)
        if exact is None:
            return MoveReview(number, event.player, played, best_text, Verdict.MISSED_CAPTURE, 0.0)
        skip = exact[1]
        if skip >= best_score:
            return MoveReview(number, event.player, played, "skip", Verdict.BEST, 0.0)
        loss = best_score - skip
        verdict = _verdict(loss, good, inaccuracy)
        if verdict is Verdict.MISTAKE:
            verdict = Verdict.MISSED_CAPTURE
        return MoveReview(number, event.player, played, best_text, verdict, loss)
    mine = _played(state, event)
    played = describe(mine, state)
    ceiling = max(best_score or 0.0, exact[1] if exact else float("-inf"))
    loss = max(0.0, ceiling - score(mine))
    if exact and exact[1] > (best_score or 0.0):
        best_text = "skip"
    return MoveReview(
        number, event.player, played, best_text, _verdict(loss, good, inaccuracy), loss
    )


def review(events: Iterable[Event]) -> list[MoveReview]:
    """Rate every move of a finished (or unfinished) game from its events."""
    reviews: list[MoveReview] = []
    state = GameState()
    for event in events:
        if isinstance(event, (StrengthAttacked, MindAttacked, TurnSkipped)):
            reviews.append(rate_move(state, event))
        state = apply(state, event)
    return reviews
