"""The read API: profiles, match history, a match's event log and replay, leaderboards and
statistics boards.

Every answer comes from the SQL read models (``arena_runtime.readmodels``), which the rating
service's projections keep as the fold of the log. Every route requires a caller: the router is
built with the app's principal dependency (``create_read_router(get_principal)``), so the same
token check guards these routes as every other. Inputs are validated before any query: ids by
pattern and length, ``limit`` 1-100, and a ``cursor`` must be one a page of the same listing
handed out (otherwise 400, code ``invalid_cursor``). Errors are ``{"detail": {"code",
"message"}}``.

What depends on the game comes from its module (``arena_games.registry``): which games have an
Elo leaderboard or a statistics board (``ratings``), the tier beside a rating, a statistics
board's indices, and a match's replay (the module's ``replay``, made from the match's events read
through the seam).

The app provides the database as ``app.state.read_sessions`` (an ``async_sessionmaker``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Union

from arena_games.contract import GameModule
from arena_games.maths_warriors.replay import Replay
from arena_games.registry import READING, STANDARD, ladder_tier
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.readmodels import queries
from arena_runtime.readmodels.queries import (
    CreditsBalance,
    CreditsLedgerPage,
    HistoryPage,
    LeaderboardPage,
    MatchLog,
    PlayerProfile,
    SeasonLeaderboardPage,
    StatisticsPage,
)
from arena_runtime.schemas.lobby import duel_game
from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response, status
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from arena_gateway.refusals import documented, refusal

#: Player ids are the gateway's ``p_<hex>`` (or an AI seat's id); match ids are the match
#: service's. Both are short and URL-safe: anything else cannot name a row.
ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,200}$"
GAME_PATTERN = r"^[a-z0-9-]{1,64}$"

PlayerId = Annotated[str, Path(pattern=ID_PATTERN, description="A player id, e.g. p_0f3a…")]
MatchId = Annotated[str, Path(pattern=ID_PATTERN, description="A match id (without match-)")]
#: Games with an Elo leaderboard, and games with statistics boards (their modules say).
ELO_GAMES = tuple(m.name for m in STANDARD if m.ratings.ladder and m.ratings.elo)
STATISTICS_GAMES = tuple(m.name for m in STANDARD if m.ratings.ladder and not m.ratings.elo)
Game = Annotated[
    str, Path(pattern=GAME_PATTERN, description=f"A game with a ladder: {', '.join(ELO_GAMES)}")
]
StatisticsGame = Annotated[
    str,
    Path(
        pattern=GAME_PATTERN,
        description=f"A game with statistics boards: {', '.join(STATISTICS_GAMES)}",
    ),
]
#: Games with a per-combat ladder and seasons (``ratings.units``).
SEASON_GAMES = tuple(m.name for m in STANDARD if m.ratings.ladder and m.ratings.units)
SeasonGame = Annotated[
    str,
    Path(pattern=GAME_PATTERN, description=f"A game with seasons: {', '.join(SEASON_GAMES)}"),
]
Season = Annotated[
    str,
    Path(pattern=r"^[0-9]{4}-(0[1-9]|1[0-2])$", description="A season, e.g. 2026-12"),
]
#: Games with boards made at query time (the module's ``boards``: a daily leaderboard, rooms).
BOARD_GAMES = tuple(m.name for m in STANDARD if m.boards is not None)
#: What those boards answer (documented in the OpenAPI; one model per game and board).
DAILY_BOARD: Any = Union[tuple(m.boards.daily_model for m in STANDARD if m.boards)]  # noqa: UP007
ROOM_STANDINGS: Any = Union[tuple(m.boards.room_model for m in STANDARD if m.boards)]  # noqa: UP007
BoardGame = Annotated[
    str,
    Path(pattern=GAME_PATTERN, description=f"A game with daily boards: {', '.join(BOARD_GAMES)}"),
]
Day = Annotated[
    str,
    Path(
        pattern=r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
        description="A day (Digits: in Paris time), e.g. 2026-12-07",
    ),
]
RoomCode = Annotated[
    str, Path(pattern=r"^[23456789A-HJKMNP-Z]{5}$", description="A room's code, e.g. K7QX2")
]
Board = Annotated[
    str, Path(pattern=GAME_PATTERN, description="The board (Matrix Games: a variant)")
]
DuelId = Annotated[
    str | None,
    Query(
        pattern=ID_PATTERN,
        description="The duel (its id, without duel-) through which the caller, its other "
        "player, asks for this game of it",
    ),
]
#: The sharing preference that lets a duel's other player read a game after the duel.
LOGIN = "login"
#: The preference of an owner who never set one.
ANONYMOUS = "anonymous"


class GhostSharingSetting(BaseModel):
    player_id: str
    sharing: str = Field(description="login, anonymous (the default) or none")


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


NOT_FOUND = documented(404, description="No such player, match or game")
NO_REPLAY = documented(
    404,
    description="No such match (`match_not_found`), or its game keeps no replay (`no_replay`: "
    "Digits, the Maze; its events are served)",
)
NOT_YOURS = documented(
    403,
    description="Not the caller's to read: another account's credits (`not_your_account`), "
    "or a game whose log only its player (and whom they share it with) may read "
    "(`not_your_game`)",
)
BAD_CURSOR = documented(400, description="The cursor is not one we handed out")
IN_PROGRESS = documented(
    409,
    description="The match is still being played (`match_in_progress`): its replay is served "
    "once it ended, or as it stands with `?partial=true`",
)
#: The replay's response header saying whether the match is still being played.
MATCH_STATUS_HEADER = "Arena-Match-Status"
UNAUTHORIZED = documented(401, description="No valid bearer token")


async def read_session(request: Request) -> AsyncIterator[AsyncSession]:
    """A session on the read models for one request."""
    sessions: async_sessionmaker[AsyncSession] = request.app.state.read_sessions
    async with sessions() as session:
        yield session


Session = Annotated[AsyncSession, Depends(read_session)]


def _not_found(what: str, id_: str) -> HTTPException:
    return refusal(status.HTTP_404_NOT_FOUND, f"{what}_not_found", f"no {what} {id_}")


def _caller_id(caller: Any) -> str:
    """The caller's player id (the app's principal is a ``Principal``; a stand-in may give the
    id itself)."""
    return caller if isinstance(caller, str) else str(caller.player_id)


def _own_account(caller: Any, player_id: str) -> None:
    if _caller_id(caller) != player_id:
        raise refusal(
            status.HTTP_403_FORBIDDEN,
            "not_your_account",
            "only its owner reads an account's credits",
        )


def _bad_cursor(exc: queries.InvalidCursorError) -> HTTPException:
    return refusal(status.HTTP_400_BAD_REQUEST, "invalid_cursor", str(exc))


class GameSeats(BaseModel):
    seats: int
    min_humans: int
    max_humans: int
    ai_levels: list[str]
    scripted_policies: list[str]
    #: The policy of the seats nobody took at the start; None: every seat must be taken.
    default_fill: str | None


class GameInfo(BaseModel):
    name: str
    seats: GameSeats
    modes: list[str]
    #: A player in a live match of it plays nothing else meanwhile.
    exclusive: bool
    #: The JSON Schema of the room settings `create_room` takes (the game's lobby form).
    form: dict[str, Any]
    #: The settings a room gets for what the host leaves out, as that form.
    defaults: dict[str, Any]


class GameList(BaseModel):
    games: list[GameInfo]


def game_info(module: GameModule[Any]) -> GameInfo:
    plan = module.seats
    return GameInfo(
        name=module.name,
        seats=GameSeats(
            seats=plan.seats,
            min_humans=plan.min_humans,
            max_humans=plan.max_humans,
            ai_levels=list(plan.ai_levels),
            scripted_policies=list(plan.scripted_policies),
            default_fill=plan.default_fill,
        ),
        modes=sorted(module.modes),
        exclusive=module.exclusive,
        form=module.lobby.form.model_json_schema(),
        defaults=module.lobby.to_form(module.lobby.defaults()),
    )


def create_read_router(principal: Callable[..., Any]) -> APIRouter:
    """The read routes, each guarded by ``principal`` (the app's token check)."""
    # The caller, for the routes that answer its owner only (the same dependency as the
    # router's: resolved once a request).
    caller_dependency = Depends(principal)
    router = APIRouter(
        prefix="/v1",
        tags=["read"],
        dependencies=[Depends(principal)],
        responses=UNAUTHORIZED,
    )

    @router.get("/players/{player_id}", responses=NOT_FOUND)
    async def get_player(player_id: PlayerId, session: Session) -> PlayerProfile:
        """A player's rating, tier and game counts in every game they have played."""
        profile = await queries.player_profile(session, player_id, tier=ladder_tier)
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

    @router.get("/matches/{match_id}/events", responses={**NOT_FOUND, **NOT_YOURS})
    async def get_match_events(
        match_id: MatchId, session: Session, duel: DuelId = None, caller: Any = caller_dependency
    ) -> MatchLog:
        """Every event of the match stream in order, as logged. A game whose log is private
        (Digits): its player's only, or, with ``duel``, the duel's other player's once both
        games ended if the owner shares their login; anyone else 403 ``not_your_game``."""
        await _may_read_log(session, match_id, caller, duel)
        found = await queries.match_log(session, match_id)
        if found is None:
            raise _not_found("match", match_id)
        return found

    games = GameList(games=[game_info(module) for module in STANDARD])

    @router.get("/games")
    async def get_games() -> GameList:
        """The games this server hosts, from its registry: each one's seats (how many, how
        many people, its AI levels and scripted policies) and its room settings form (a JSON
        Schema, with the defaults), so a client can offer a room of any game."""
        return games

    @router.get(
        "/matches/{match_id}/replay",
        responses={**NO_REPLAY, **NOT_YOURS, **IN_PROGRESS},
        response_model=Replay,
    )
    async def get_match_replay(
        match_id: MatchId,
        session: Session,
        response: Response,
        duel: DuelId = None,
        partial: Annotated[
            bool,
            Query(description="Serve the replay of a match still being played, as it stands"),
        ] = False,
        caller: Any = caller_dependency,
    ) -> Any:
        """The match's replay, made by its game's module from its events: for Maths Warriors
        the game's state after each move (this schema); for Matrix Games its
        ``matrix.replay.v1`` document, byte for byte the engine's. A match still being played:
        409 ``match_in_progress``, or with ``partial=true`` its replay so far. The
        ``Arena-Match-Status`` header says ``playing`` or ``over``. Who may read a private log:
        as for the events."""
        await _may_read_log(session, match_id, caller, duel)
        record = await queries.match_record(session, match_id, READING)
        module = None if record is None else _game_of(record)
        if record is None or module is None:
            raise _not_found("match", match_id)
        if module.replay is None:
            # The match is there (its events are served): "not found" would send a client
            # looking for the wrong thing. Its game keeps no replay (Digits, the Maze).
            raise refusal(
                status.HTTP_404_NOT_FOUND,
                "no_replay",
                f"match {match_id} is a game of {module.name}, which has no replay: "
                "its events are at /v1/matches/{id}/events",
            )
        status_now = "over" if record.row["status"] == "over" else "playing"
        if status_now == "playing" and not partial:
            raise refusal(
                status.HTTP_409_CONFLICT,
                "match_in_progress",
                f"match {match_id} is still being played: its replay so far with partial=true",
            )
        made = module.replay(record)
        if isinstance(made, BaseModel):
            response.headers[MATCH_STATUS_HEADER] = status_now
            return made
        return Response(
            made,
            media_type=module.replay_media_type,
            headers={MATCH_STATUS_HEADER: status_now},
        )

    @router.get("/leaderboards/{game}", responses={**BAD_CURSOR, **NOT_FOUND})
    async def get_leaderboard(
        game: Game,
        session: Session,
        limit: Limit = queries.DEFAULT_PAGE,
        cursor: Cursor = None,
    ) -> LeaderboardPage:
        """Rating descending; ties go to whoever reached the rating first, then the player id."""
        if game not in ELO_GAMES:
            raise _not_found("game", game)
        try:
            return await queries.leaderboard(
                session, game, tier=ladder_tier, limit=limit, cursor=cursor
            )
        except queries.InvalidCursorError as exc:
            raise _bad_cursor(exc) from None

    @router.get("/leaderboards/{game}/seasons/{season}", responses={**BAD_CURSOR, **NOT_FOUND})
    async def get_season_leaderboard(
        game: SeasonGame,
        season: Season,
        session: Session,
        limit: Limit = queries.DEFAULT_PAGE,
        cursor: Cursor = None,
    ) -> SeasonLeaderboardPage:
        """A season's leaderboard (a calendar month; Digits: in Paris time): players with the
        season's minimum of counted ranked games, by rating, then most ranked combats, then the
        oldest; never a shared place; each place's prize. A voided game is out of it."""
        units = STANDARD.find(game).ratings.units if game in SEASON_GAMES else None
        if units is None:
            raise _not_found("game", game)
        try:
            return await queries.season_leaderboard(
                session,
                game,
                season,
                min_games=units.min_games,
                prizes=units.prizes,
                limit=limit,
                cursor=cursor,
            )
        except queries.InvalidCursorError as exc:
            raise _bad_cursor(exc) from None

    @router.get("/leaderboards/{game}/daily/{day}", responses=NOT_FOUND, response_model=DAILY_BOARD)
    async def get_daily_leaderboard(game: BoardGame, day: Day, session: Session) -> Any:
        """The day's leaderboard of its counted daily games (Digits: wins, then fewer losses,
        then margin, then the earliest finish; the same line shares a place) and its podium
        (places 1 to 3). A voided, forfeited or combat-less game is not listed."""
        boards = STANDARD.find(game).boards if game in BOARD_GAMES else None
        if boards is None:
            raise _not_found("game", game)
        try:
            since, until = boards.day_bounds(day)
        except ValueError:
            raise _not_found("day", day) from None
        records = await queries.match_records(
            session, mode="daily", since_ms=since, until_ms=until, codec=READING
        )
        return boards.daily(day, records)

    @router.get(
        "/rooms/{code}/standings/{game}", responses=NOT_FOUND, response_model=ROOM_STANDINGS
    )
    async def get_room_standings(code: RoomCode, game: BoardGame, session: Session) -> Any:
        """A room's standings from its players' games (Digits: wins, then fewer losses, missed
        rounds included, then margin; the same line shares a place)."""
        boards = STANDARD.find(game).boards if game in BOARD_GAMES else None
        if boards is None:
            raise _not_found("game", game)
        records = await queries.match_records(session, mode="room", room_code=code, codec=READING)
        if not records:
            raise _not_found("room", code)
        return boards.room(code, records)

    @router.get("/players/{player_id}/credits", responses=NOT_YOURS)
    async def get_credits(
        player_id: PlayerId, session: Session, caller: Any = caller_dependency
    ) -> CreditsBalance:
        """The caller's own credits: available (never below 0) and held for duels under way; 0
        for an account whose ledger has no movement yet. Another account's: 403."""
        _own_account(caller, player_id)
        return await queries.credits_balance(session, player_id)

    @router.get("/players/{player_id}/credits/ledger", responses={**BAD_CURSOR, **NOT_YOURS})
    async def get_credits_ledger(
        player_id: PlayerId,
        session: Session,
        limit: Limit = queries.DEFAULT_PAGE,
        cursor: Cursor = None,
        caller: Any = caller_dependency,
    ) -> CreditsLedgerPage:
        """The caller's own ledger, newest movement first: every credit, debit, hold, release
        and capture with the balance after it. Another account's: 403."""
        _own_account(caller, player_id)
        try:
            return await queries.credits_ledger(session, player_id, limit=limit, cursor=cursor)
        except queries.InvalidCursorError as exc:
            raise _bad_cursor(exc) from None

    @router.get("/players/{player_id}/ghost-sharing", responses={**NOT_YOURS, **NOT_FOUND})
    async def get_ghost_sharing(
        player_id: PlayerId,
        session: Session,
        caller: Any = caller_dependency,
        game: Annotated[
            str,
            Query(
                description="A game that keeps its players' armies: "
                f"{', '.join(STANDARD.ghost_games())}"
            ),
        ] = STANDARD.ghost_games()[0],
    ) -> GhostSharingSetting:
        """The caller's own setting for the ghosts their Digits games leave, as the read side
        has it (``anonymous`` until set; set it with the WebSocket's ``ghost_sharing``).
        Another player's: 403."""
        if _caller_id(caller) != player_id:
            raise refusal(
                status.HTTP_403_FORBIDDEN, "not_your_account", "only its owner reads a setting"
            )
        if game not in STANDARD.ghost_games():
            raise refusal(status.HTTP_404_NOT_FOUND, "unknown_game", f"no ghosts of {game!r}")
        found = await queries.ghost_sharing(session, game, player_id)
        return GhostSharingSetting(player_id=player_id, sharing=found or ANONYMOUS)

    @router.get("/statistics/{game}/{board}", responses={**BAD_CURSOR, **NOT_FOUND})
    async def get_statistics(
        game: StatisticsGame,
        board: Board,
        session: Session,
        limit: Limit = queries.DEFAULT_PAGE,
        cursor: Cursor = None,
    ) -> StatisticsPage:
        """A game's statistics board (Matrix Games: per variant, players and scripted
        policies): episodes, wins, mean score and the game's indices (cooperation index), best
        mean score first."""
        if game not in STATISTICS_GAMES:
            raise _not_found("game", game)
        indices = STANDARD.find(game).ratings.indices
        try:
            return await queries.statistics_board(
                session, game, board, indices=indices, limit=limit, cursor=cursor
            )
        except queries.InvalidCursorError as exc:
            raise _bad_cursor(exc) from None

    return router


async def _may_read_log(
    session: AsyncSession, match_id: str, caller: Any, duel: str | None
) -> None:
    """403 ``not_your_game`` unless the caller may read this match's log: anyone for a game
    whose log is public; else its own players, and a duel's other player (naming the duel) once
    both games ended, if the owner shares their login. An unknown match passes (404 follows)."""
    opened = await queries.first_event(session, match_id, READING)
    if opened is None or not isinstance(opened.payload, match_pb2.MatchOpened):
        return
    game = opened.payload.game
    if game not in STANDARD or not STANDARD.find(game).private_log:
        return
    me = _caller_id(caller)
    owners = await queries.seat_players(session, match_id)
    if me in owners:
        return
    shared = duel is not None and len(owners) == 1
    if shared and await _duel_shared(session, game, match_id, owners[0], me, str(duel)):
        return
    raise refusal(
        status.HTTP_403_FORBIDDEN,
        "not_your_game",
        "this game's log is shown to its player only (a duel's: to the other player after the "
        "duel if its owner shares their login)",
    )


async def _duel_shared(
    session: AsyncSession, game: str, match_id: str, owner: str, me: str, duel: str
) -> bool:
    """The caller's own game of ``duel`` exists, both games are over, and the owner of this one
    (the duel's other game) shares their login."""
    if duel_game(duel, owner) != match_id:
        return False
    mine = duel_game(duel, me)
    theirs, own = await queries.match_row(session, match_id), await queries.match_row(session, mine)
    if theirs is None or own is None or me not in await queries.seat_players(session, mine):
        return False
    if {theirs["mode"], own["mode"]} != {"duel"} or {theirs["status"], own["status"]} != {"over"}:
        return False
    return await queries.ghost_sharing(session, game, owner) == LOGIN


def _game_of(record: queries.MatchRecord) -> GameModule[Any] | None:
    """The game of a match, as its MatchOpened names it (a legacy MatchCreated reads as one)."""
    for event in record.events[:1]:
        if isinstance(event.payload, match_pb2.MatchOpened) and event.payload.game in STANDARD:
            return STANDARD.find(event.payload.game)
    return None
