"""The puzzle trainer and the post-game review, as the read API serves them.

Both are the engine's (:mod:`arena_engine.maths_warriors.puzzles` and ``.review``); this module
gives them typed answers. A puzzle is named by its difficulty and seed, so the server keeps
nothing between showing a puzzle and checking an answer: the same pair gives the same puzzle.
The solutions are sent only with a checked answer (solved, or asked to be shown), never with the
puzzle itself.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Literal

from arena_engine.maths_warriors import DICE
from arena_engine.maths_warriors.events import Event as EngineEvent
from arena_engine.maths_warriors.events import MindAttacked, StrengthAttacked, TurnSkipped
from arena_engine.maths_warriors.puzzles import Difficulty as Difficulty
from arena_engine.maths_warriors.puzzles import Puzzle, answer_tokens, generate, hint
from arena_engine.maths_warriors.review import MoveReview, review
from arena_runtime.envelope import CODEC, Codec
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.readmodels.queries import match_record
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from arena_games.contract import unpack
from arena_games.maths_warriors import wire
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb

#: Seeds are 32-bit: the engine's roller takes any int, the wire keeps them short.
MAX_SEED = 2**32 - 1
#: What an answer may hold: die names and the Mind-attack symbols (checked by the schema).
AnswerToken = Literal["D4", "D6", "D8", "D10", "D12", "D20", "+", "-", "*", "/", "(", ")"]
MAX_TOKENS = 32
MOVES = (StrengthAttacked, MindAttacked, TurnSkipped)


class PuzzleDie(BaseModel):
    die: str = Field(examples=["D12"])
    value: int | None = Field(description="null where the puzzle has no such die")


class PuzzleView(BaseModel):
    """A hand of dice and a target to make with them (the solutions stay on the server)."""

    difficulty: Difficulty
    seed: int = Field(ge=0, le=MAX_SEED)
    dice: list[PuzzleDie]
    target: int = Field(ge=1, le=20)


class PuzzleAnswer(BaseModel):
    """An attempt: die names and symbols, as the expression builder lays them out."""

    difficulty: Difficulty
    seed: int = Field(ge=0, le=MAX_SEED)
    tokens: list[AnswerToken] = Field(max_length=MAX_TOKENS, examples=[["D4", "+", "D6"]])
    reveal: bool = Field(False, description="give up: send the solutions whatever the answer")


class PuzzleVerdict(BaseModel):
    solved: bool
    #: Why the answer does not make the target (a Mind-attack rejection code), when it does not.
    reason: str | None = None
    hint: str = Field(description="the dice of the easiest solution, without the expression")
    #: One shortest expression per set of dice that makes the target; only once solved or revealed.
    solutions: list[str] | None = None


def puzzle(difficulty: Difficulty, seed: int) -> PuzzleView:
    found = _generate(difficulty, seed)
    return PuzzleView(
        difficulty=difficulty,
        seed=seed,
        dice=[PuzzleDie(die=d.value, value=found.dice[d.position]) for d in DICE],
        target=found.target,
    )


def check(answer: PuzzleAnswer) -> PuzzleVerdict:
    """Whether the answer makes the target by the rules of a Mind attack."""
    found = _generate(answer.difficulty, answer.seed)
    rejection = found.check(answer_tokens(found, answer.tokens)) if answer.tokens else None
    solved = bool(answer.tokens) and rejection is None
    return PuzzleVerdict(
        solved=solved,
        reason=None if solved else (str(rejection.code) if rejection else "empty_expression"),
        hint=hint(found),
        solutions=_solutions(found) if solved or answer.reveal else None,
    )


@functools.lru_cache(maxsize=1024)
def _generate(difficulty: Difficulty, seed: int) -> Puzzle:
    # Finding a puzzle takes a tenth of a second or so; an answer checks the one just shown.
    return generate(difficulty, seed)


def _solutions(found: Puzzle) -> list[str]:
    return [solution.text() for solution in found.solutions]


class ReviewedMove(BaseModel):
    """One move of a match rated against the best one available (``review.py``'s verdicts)."""

    sequence: int = Field(description="the event's sequence in the match, as the replay has it")
    number: int
    player: int
    played: str
    best: str | None
    verdict: str = Field(examples=["best", "good", "inaccuracy", "mistake", "missed_capture"])
    loss: float


class MatchReview(BaseModel):
    match_id: str
    moves: list[ReviewedMove]


async def match_review(
    session: AsyncSession, match_id: str, codec: Codec = CODEC
) -> MatchReview | None:
    """Every move of a recorded match, rated; None for an unknown match."""
    record = await match_record(session, match_id, codec)
    if record is None:
        return None
    game_events: list[EngineEvent] = []
    sequences: list[int] = []
    for event in record.events:
        payload = event.payload
        if isinstance(payload, match_pb2.MatchEnded):
            payload = unpack(payload.detail, pb.GameEnded)
        if isinstance(payload, wire.GAME_EVENTS):
            game_events.append(wire.event_from_proto(payload))
            sequences.append(event.sequence)
    # review() rates the attacks and skips in order, one each: pair them with their sequences.
    moved = [seq for e, seq in zip(game_events, sequences, strict=True) if isinstance(e, MOVES)]
    # Rating a move scores every capture the mover had (exactly, near the end): off the loop.
    return MatchReview(
        match_id=match_id,
        moves=[
            _reviewed(m, seq)
            for m, seq in zip(await asyncio.to_thread(review, game_events), moved, strict=True)
        ],
    )


def _reviewed(move: MoveReview, sequence: int) -> ReviewedMove:
    return ReviewedMove(
        sequence=sequence,
        number=move.number,
        player=move.player,
        played=move.played,
        best=move.best,
        verdict=move.verdict.value,
        loss=round(move.loss, 1),
    )
