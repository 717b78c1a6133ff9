"""The read API: profiles, match history, a match's event log and replay, leaderboards.

Every answer comes from the SQL read models (``arena_runtime.readmodels``), which the rating
service's projections keep as the fold of the log. Every route requires a caller: the router is
built with the app's principal dependency (``create_read_router(get_principal)``), so the same
token check guards these routes as every other. Inputs are validated before any query: ids by
pattern and length, ``limit`` 1-100, and a ``cursor`` must be one a page of the same listing
handed out (otherwise 400, code ``invalid_cursor``). Errors are ``{"detail": {"code",
"message"}}``.

The app provides the database as ``app.state.read_sessions`` (an ``async_sessionmaker``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from arena_runtime.readmodels import queries
from arena_runtime.readmodels.queries import (
    HistoryPage,
    LeaderboardPage,
    MatchLog,
    PlayerProfile,
    Replay,
)
from arena_runtime.schemas.rating import GAMES as LADDER_GAMES
from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, status
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

#: Player ids are the gateway's ``p_<hex>`` (or an AI seat's id); match ids are the match
#: service's. Both are short and URL-safe: anything else cannot name a row.
ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,200}$"
GAME_PATTERN = r"^[a-z0-9-]{1,64}$"

PlayerId = Annotated[str, Path(pattern=ID_PATTERN, description="A player id, e.g. p_0f3a…")]
MatchId = Annotated[str, Path(pattern=ID_PATTERN, description="A match id (without match-)")]
Game = Annotated[
    str, Path(pattern=GAME_PATTERN, description=f"A game with a ladder: {', '.join(LADDER_GAMES)}")
]
Limit = Annotated[
    int, Query(ge=1, le=queries.MAX_PAGE, description="Rows per page (1-100, default 20)")
]
Cursor = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=1000,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="The `next_cursor` of the previous page; omit for the first page",
    ),
]


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable, for programs", examples=["player_not_found"])
    message: str = Field(description="For people")


class ApiError(BaseModel):
    """An error answer (FastAPI's shape: everything under ``detail``)."""

    detail: ErrorDetail


#: OpenAPI ``responses`` entries, typed as FastAPI's parameters take them.
Responses = dict[int | str, dict[str, Any]]
NOT_FOUND: Responses = {404: {"model": ApiError, "description": "No such player, match or game"}}
BAD_CURSOR: Responses = {
    400: {"model": ApiError, "description": "The cursor is not one we handed out"}
}
UNAUTHORIZED: Responses = {401: {"description": "No valid bearer token"}}


async def read_session(request: Request) -> AsyncIterator[AsyncSession]:
    """A session on the read models for one request."""
    sessions: async_sessionmaker[AsyncSession] = request.app.state.read_sessions
    async with sessions() as session:
        yield session


Session = Annotated[AsyncSession, Depends(read_session)]


def _not_found(what: str, id_: str) -> HTTPException:
    return HTTPException(
        status.HTTP_404_NOT_FOUND, {"code": f"{what}_not_found", "message": f"no {what} {id_}"}
    )


def _bad_cursor(exc: queries.InvalidCursorError) -> HTTPException:
    return HTTPException(
        status.HTTP_400_BAD_REQUEST, {"code": "invalid_cursor", "message": str(exc)}
    )


def create_read_router(principal: Callable[..., Any]) -> APIRouter:
    """The read routes, each guarded by ``principal`` (the app's token check)."""
    router = APIRouter(
        prefix="/v1",
        tags=["read"],
        dependencies=[Depends(principal)],
        responses=UNAUTHORIZED,
    )

    @router.get("/players/{player_id}", responses=NOT_FOUND)
    async def get_player(player_id: PlayerId, session: Session) -> PlayerProfile:
        """A player's rating, tier and game counts in every game they have played."""
        profile = await queries.player_profile(session, player_id)
        if profile is None:
            raise _not_found("player", player_id)
        return profile

    @router.get("/players/{player_id}/matches", responses=BAD_CURSOR)
    async def get_player_matches(
        player_id: PlayerId,
        session: Session,
        limit: Limit = queries.DEFAULT_PAGE,
        cursor: Cursor = None,
    ) -> HistoryPage:
        """The player's finished games, newest first: opponent, result, reason, rating change."""
        try:
            return await queries.match_history(session, player_id, limit=limit, cursor=cursor)
        except queries.InvalidCursorError as exc:
            raise _bad_cursor(exc) from None

    @router.get("/matches/{match_id}/events", responses=NOT_FOUND)
    async def get_match_events(match_id: MatchId, session: Session) -> MatchLog:
        """Every event of the match stream in order, as logged."""
        found = await queries.match_log(session, match_id)
        if found is None:
            raise _not_found("match", match_id)
        return found

    @router.get("/matches/{match_id}/replay", responses=NOT_FOUND)
    async def get_match_replay(match_id: MatchId, session: Session) -> Replay:
        """The game's state after each move, folded from its events with the rules engine."""
        found = await queries.match_replay(session, match_id)
        if found is None:
            raise _not_found("match", match_id)
        return found

    @router.get("/leaderboards/{game}", responses={**BAD_CURSOR, **NOT_FOUND})
    async def get_leaderboard(
        game: Game,
        session: Session,
        limit: Limit = queries.DEFAULT_PAGE,
        cursor: Cursor = None,
    ) -> LeaderboardPage:
        """Rating descending; ties go to whoever reached the rating first, then the player id."""
        if game not in LADDER_GAMES:
            raise _not_found("game", game)
        try:
            return await queries.leaderboard(session, game, limit=limit, cursor=cursor)
        except queries.InvalidCursorError as exc:
            raise _bad_cursor(exc) from None

    return router
