"""The Maths Warriors trainers: puzzles to solve, and a finished match's moves reviewed.

The work is the game module's (``arena_games.maths_warriors.training``); these routes give it a
caller, typed refusals and a budget. Finding a puzzle costs a tenth of a second of CPU or so, so
each player may ask ``ARENA_PUZZLE_RATE`` times a second (429 beyond), shared by every instance.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name
# dependencies local to create_training_router.
import secrets
from collections.abc import Callable
from typing import Annotated, Any

from arena_games.maths_warriors.training import (
    MAX_SEED,
    Difficulty,
    MatchReview,
    PuzzleAnswer,
    PuzzleVerdict,
    PuzzleView,
    check,
    match_review,
    puzzle,
)
from fastapi import APIRouter, Depends, Query, status
from starlette.concurrency import run_in_threadpool

from arena_gateway.gateway import Gateway
from arena_gateway.identity import Principal
from arena_gateway.read_api import NOT_FOUND, UNAUTHORIZED, MatchId, Session
from arena_gateway.refusals import documented, refusal, within_budget

RATE_LIMITED = documented(429, description="More puzzle requests than ARENA_PUZZLE_RATE allows")


def create_training_router(
    principal: Callable[..., Any], gateway: Callable[..., Gateway]
) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["training"], responses=UNAUTHORIZED)
    Caller = Annotated[Principal, Depends(principal)]
    TheGateway = Annotated[Gateway, Depends(gateway)]

    async def spend(gateway: Gateway, caller: Principal) -> None:
        settings = gateway.settings
        key, rate, burst = f"puzzle:{caller.player_id}", settings.puzzle_rate, settings.puzzle_burst
        await within_budget(gateway.cache, key, rate, burst, "too many puzzle requests")

    @router.get("/puzzles/maths-warriors", responses=RATE_LIMITED)
    async def get_puzzle(
        caller: Caller,
        gateway: TheGateway,
        difficulty: Difficulty = Difficulty.EASY,
        seed: Annotated[
            int | None, Query(ge=0, le=MAX_SEED, description="omit for a new puzzle")
        ] = None,
    ) -> PuzzleView:
        """A hand of dice and a target to make by Mind; the same difficulty and seed always
        give the same puzzle, so the seed names it (a link to share, an answer to check)."""
        await spend(gateway, caller)
        chosen = secrets.randbelow(MAX_SEED + 1) if seed is None else seed
        return await run_in_threadpool(puzzle, difficulty, chosen)

    @router.post("/puzzles/maths-warriors/answers", responses=RATE_LIMITED)
    async def check_answer(
        caller: Caller, gateway: TheGateway, answer: PuzzleAnswer
    ) -> PuzzleVerdict:
        """Whether the expression makes the puzzle's target by the rules of a Mind attack (each
        die once, exact arithmetic); the solutions come once solved, or with ``reveal``."""
        await spend(gateway, caller)
        return await run_in_threadpool(check, answer)

    @router.get("/matches/{match_id}/review", responses=NOT_FOUND)
    async def get_match_review(match_id: MatchId, session: Session, caller: Caller) -> MatchReview:
        """Every move of the match rated against the best one its player had (the AI's
        evaluation; exact near the end): best, good, inaccuracy, mistake, missed capture."""
        found = await match_review(session, match_id)
        if found is None:
            raise refusal(status.HTTP_404_NOT_FOUND, "match_not_found", f"no match {match_id}")
        return found

    return router
