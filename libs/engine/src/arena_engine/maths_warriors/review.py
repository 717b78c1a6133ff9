"""Post-game review: every move rated against the best move that was available.

The review replays the game's events. Before each move it lists every capture the player had (the
AI's move generator: Strength, and Mind with any parenthesisation) and scores them with the AI's
one-move evaluation; the played move is rated by how far it falls short of the best:

* ``best`` — as good as the best; ``good`` — within 10 points; ``inaccuracy`` — within 40;
* ``mistake`` — further behind; ``missed_capture`` — a skip while a capture was available;
* ``forced`` — a skip (or move-clock timeout) with no capture available.

The best move is shown with its expression, brackets included.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from .ai import Candidate, candidates, score_move
from .dice import Die
from .events import Event, MindAttacked, StrengthAttacked, TurnSkipped
from .expression import render
from .game import apply
from .moves import DieToken, Mind, Strength
from .state import GameState

GOOD_MARGIN = 10.0
INACCURACY_MARGIN = 40.0


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


def review(events: Iterable[Event]) -> list[MoveReview]:
    """Rate every move of a finished (or unfinished) game from its events."""
    reviews: list[MoveReview] = []
    state = GameState()
    for event in events:
        if isinstance(event, (StrengthAttacked, MindAttacked, TurnSkipped)):
            options = candidates(state)
            scored = sorted(((score_move(state, c), c) for c in options), key=lambda x: -x[0])
            best_text = describe(scored[0][1], state) if scored else None
            number = state.move_count + 1
            if isinstance(event, TurnSkipped):
                verdict = Verdict.MISSED_CAPTURE if scored else Verdict.FORCED
                loss = 0.0
                played = "skip" if event.reason == "skip" else "move clock ran out"
            else:
                mine = _played(state, event)
                played = describe(mine, state)
                loss = max(0.0, scored[0][0] - score_move(state, mine)) if scored else 0.0
                if loss <= 1e-9:
                    verdict = Verdict.BEST
                elif loss <= GOOD_MARGIN:
                    verdict = Verdict.GOOD
                elif loss <= INACCURACY_MARGIN:
                    verdict = Verdict.INACCURACY
                else:
                    verdict = Verdict.MISTAKE
            reviews.append(MoveReview(number, event.player, played, best_text, verdict, loss))
        state = apply(state, event)
    return reviews
