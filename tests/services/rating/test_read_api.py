"""The read API over real projections: profiles, paged history and leaderboards with their tie
order, a match's event log and replay, and the refusals (no token, bad input, unknown ids)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated

import httpx
import pytest
from arena_engine.maths_warriors import GameState, replay
from arena_games.maths_warriors import wire as mw_schema
from arena_games.registry import READING, STANDARD
from arena_gateway.read_api import create_read_router
from arena_rating.projections import rating_projections
from arena_rating.results import MatchSoFar, rate_match
from arena_rating.service import ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import new_command
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import ladder_stream, rate_command_id
from arena_runtime.sql import create_engine, session_factory, upgrade_head
from arena_runtime.sql.rebuild import runners
from fastapi import Depends, FastAPI, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.services.rating import matches

LADDER = ladder_stream("maths-warriors")
TOKEN = "good-token"
bearer = HTTPBearer(auto_error=False)


async def principal(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    """Stands in for the gateway's session lookup: TOKEN is p_reader's, ``as-<id>`` that
    player's."""
    if credentials is not None and credentials.credentials.startswith("as-p_"):
        return credentials.credentials.removeprefix("as-")
    if credentials is None or credentials.credentials != TOKEN:
        raise HTTPException(401, "a valid bearer token is required")
    return "p_reader"


@contextlib.asynccontextmanager
async def read_client(
    sessions: async_sessionmaker[AsyncSession], token: str | None = TOKEN
) -> AsyncIterator[httpx.AsyncClient]:
    """The read API over the read models of ``sessions``, as a client sending ``token`` as its
    bearer (None: no token)."""
    app = FastAPI()
    app.state.read_sessions = sessions
    app.include_router(create_read_router(principal))
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://arena", headers=headers
    ) as http:
        yield http


def ranked(match_id: str, winner: str, loser: str, ended_at_ms: int) -> pb.RateMatch:
    return pb.RateMatch(
        match_id=match_id,
        game="maths-warriors",
        mode="ranked",
        winner=pb.LadderPlayer(player_id=winner, display_name=winner.upper(), seat=1),
        loser=pb.LadderPlayer(player_id=loser, display_name=loser.upper(), seat=2),
        reason="all_captured",
        ended_at_ms=ended_at_ms,
    )


def final_winner(stream: list) -> int:
    return int(stream[-1].payload.winner)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, list]]:
    settings = Settings(data_dir=tmp_path)
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'read.sqlite3'}")
    await upgrade_head(engine)
    sessions = session_factory(engine)
    async with open_event_log(settings) as log:
        await topics.ensure_topics(log, 2)
        runner = ladder_runner(log)
        # a and c both reach 1012, a first; b and d both fall to 988, b first.
        results = [
            ranked("m1", "p_a", "p_b", 1_000),
            ranked("m2", "p_c", "p_d", 2_000),
            ranked("m3", "p_a", "p_e", 3_000),
            ranked("m4", "p_e", "p_a", 4_000),
        ]
        # A real game, logged as the match service logs it, recorded casual.
        game = matches.play(random.Random(3))
        seats = (matches.seat("p_a"), matches.seat("ai-easy", ai=True))
        stream = matches.match_events("m5", seats, match_pb2.MATCH_MODE_CASUAL, game)
        await matches.append(log, stream)
        # The same game again, still being played (its end not logged yet).
        await matches.append(
            log, matches.match_events("m6", seats, match_pb2.MATCH_MODE_CASUAL, game)[:-1]
        )
        so_far = MatchSoFar()
        for event in stream:
            so_far.admit(READING.decode_event(matches.LEGACY.encode_event(event)))
        assert so_far.opened is not None and so_far.ended is not None
        results.append(rate_match(so_far.opened, so_far.ended))
        for result in results:
            answer = await runner.handle(
                new_command(LADDER, result, command_id=rate_command_id(result.match_id))
            )
            assert answer.accepted
        for projection_runner in runners(settings, log, sessions, rating_projections(settings)):
            await projection_runner.catch_up()
        async with read_client(sessions) as http:
            yield http, stream
    await engine.dispose()


async def test_the_games_are_the_registry_s_with_their_seats_and_room_forms(client) -> None:
    http, _ = client
    answer = await http.get("/v1/games")
    assert answer.status_code == 200
    games = {g["name"]: g for g in answer.json()["games"]}
    assert tuple(games) == tuple(STANDARD.names())
    for module in STANDARD:
        shown = games[module.name]
        assert shown["seats"]["seats"] == module.seats.seats
        assert shown["seats"]["scripted_policies"] == list(module.seats.scripted_policies)
        # The defaults are a form the game takes back as they are.
        module.lobby.from_form(module.lobby.form.model_validate(shown["defaults"]))
        assert set(shown["defaults"]) <= set(shown["form"]["properties"])
    matrix = games["matrix-games"]
    assert matrix["seats"]["default_fill"] == "counter"
    variant = matrix["form"]["properties"]["variant"]["anyOf"][0]
    assert "stag-hunt" in variant["examples"]


async def test_profile_counts_every_game_and_rates_only_ranked_ones(client) -> None:
    http, stream = client
    answer = await http.get("/v1/players/p_a")
    assert answer.status_code == 200
    body = answer.json()
    assert body["display_name"] == "P_A"
    (record,) = body["games"]
    # Ranked: m1 and m3 won, m4 lost. m5 (casual, against the AI) is counted but not rated.
    won_m5 = stream[-1].payload.winner == 1
    assert (record["games"], record["wins"], record["losses"], record["ranked_games"]) == (
        4,
        2 + won_m5,
        2 - won_m5,
        3,
    )
    m4 = (await http.get("/v1/players/p_a/matches", params={"limit": 2})).json()["matches"][1]
    assert record["rating"] == m4["rating_after"]
    assert record["tier"] == "Silver"


async def test_history_is_newest_first_and_pages_without_gaps(client) -> None:
    http, _ = client
    seen: list[dict] = []
    cursor = None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = (await http.get("/v1/players/p_a/matches", params=params)).json()
        seen.extend(page["matches"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [m["match_id"] for m in seen] == ["m5", "m4", "m3", "m1"]
    m5, m4, _, m1 = seen
    assert (m5["mode"], m5["rating_change"], m5["opponent_ai"]) == ("casual", None, True)
    assert (m4["result"], m4["opponent_id"]) == ("loss", "p_e")
    assert m4["rating_change"] == m4["rating_after"] - m4["rating_before"] < 0
    assert (m1["result"], m1["rating_before"], m1["rating_after"], m1["rating_change"]) == (
        "win",
        1000,
        1012,
        12,
    )


async def test_leaderboard_breaks_ties_by_who_reached_the_rating_first(client) -> None:
    http, _ = client
    board = (await http.get("/v1/leaderboards/maths-warriors", params={"limit": 100})).json()
    order = [(e["rank"], e["player_id"], e["rating"]) for e in board["entries"]]
    ratings = {pid: rating for _, pid, rating in order}
    assert ratings["p_c"] == 1012 and ratings["p_b"] == ratings["p_d"] == 988
    assert [pid for _, pid, _ in order].index("p_b") < [pid for _, pid, _ in order].index("p_d")
    assert [rank for rank, _, _ in order] == list(range(1, len(order) + 1))
    assert board["total"] == len(order) == 5
    for rank, player_id, _ in order:
        profile = (await http.get(f"/v1/players/{player_id}")).json()
        assert profile["games"][0]["rank"] == rank
    assert [r for _, _, r in order] == sorted((r for _, _, r in order), reverse=True)
    # Paged one at a time, the same order and ranks.
    paged, cursor = [], None
    while True:
        params = {"limit": 1} | ({"cursor": cursor} if cursor else {})
        page = (await http.get("/v1/leaderboards/maths-warriors", params=params)).json()
        paged.extend((e["rank"], e["player_id"], e["rating"]) for e in page["entries"])
        if (cursor := page["next_cursor"]) is None:
            break
    assert paged == order
    assert "ai-easy" not in ratings


async def test_a_match_log_and_its_replay_are_the_logged_events_and_the_engines_fold(
    client,
) -> None:
    http, stream = client
    log = (await http.get("/v1/matches/m5/events")).json()
    assert [e["sequence"] for e in log["events"]] == [e.sequence for e in stream]
    # The log as read through the seam: a record written before it (MatchCreated, GameEnded)
    # is shown as the type it reads as (MatchOpened, MatchEnded), its payload in that shape.
    read = [READING.decode_event(matches.LEGACY.encode_event(e)) for e in stream]
    assert [e["type"] for e in log["events"]] == [e.type for e in read]
    assert log["status"] == "over" and log["mode"] == "casual"
    assert log["seats"][1] == {
        "seat": 2,
        "player_id": "ai-easy",
        "display_name": "AI-EASY",
        "ai": True,
        "kind": "ai",
        "rank": 1 if final_winner(stream) == 2 else 2,
    }
    states = (await http.get("/v1/matches/m5/replay")).json()["states"]
    engine_events = [mw_schema.event_from_proto(e.payload) for e in stream[1:]]
    assert len(states) == len(engine_events)
    final: GameState = replay(engine_events)
    assert [d["value"] for d in states[-1]["dice1"]] == list(final.dice1)
    assert states[-1]["status"] == "over" and states[-1]["winner"] == final.winner
    assert states[0]["type"] == "arena.v1.GameStarted"


async def test_a_replay_mid_match_is_refused_in_progress_unless_asked_partial(client) -> None:
    http, _ = client
    playing = await http.get("/v1/matches/m6/replay")
    assert playing.status_code == 409
    assert playing.json()["detail"]["code"] == "match_in_progress"
    so_far = await http.get("/v1/matches/m6/replay", params={"partial": "true"})
    assert so_far.status_code == 200 and so_far.headers["arena-match-status"] == "playing"
    assert so_far.json()["states"][-1]["status"] != "over"
    over = await http.get("/v1/matches/m5/replay")
    assert over.status_code == 200 and over.headers["arena-match-status"] == "over"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/v1/players/p_nobody", 404),
        ("/v1/matches/nope/events", 404),
        ("/v1/matches/nope/replay", 404),
        ("/v1/leaderboards/chess", 404),
        ("/v1/players/p_a/matches?limit=0", 422),
        ("/v1/players/p_a/matches?limit=101", 422),
        ("/v1/players/p_a/matches?cursor=bm90LWEtY3Vyc29y", 400),
        ("/v1/leaderboards/maths-warriors?cursor=WzEsMl0", 400),
        ("/v1/leaderboards/Maths%20Warriors", 422),
        ("/v1/players/p%20a", 422),
        ("/v1/players/" + "p" * 201, 422),
    ],
)
async def test_bad_input_gets_a_typed_error(client, path: str, code: int) -> None:
    http, _ = client
    answer = await http.get(path)
    assert answer.status_code == code, answer.text
    if code in (400, 404):
        assert answer.json()["detail"]["code"] in (
            "invalid_cursor",
            "player_not_found",
            "match_not_found",
            "game_not_found",
        )


@pytest.mark.parametrize("token", [None, "wrong"])
async def test_every_route_needs_a_valid_token(client, token: str | None) -> None:
    http, _ = client
    headers = {"Authorization": f"Bearer {token}"} if token else {"Authorization": ""}
    for path in (
        "/v1/players/p_a",
        "/v1/players/p_a/matches",
        "/v1/matches/m5/events",
        "/v1/matches/m5/replay",
        "/v1/leaderboards/maths-warriors",
    ):
        assert (await http.get(path, headers=headers)).status_code == 401


def test_the_openapi_document_describes_every_route() -> None:
    app = FastAPI()
    app.include_router(create_read_router(principal))
    spec = app.openapi()
    paths = spec["paths"]
    assert set(paths) == {
        "/v1/players/{player_id}",
        "/v1/players/{player_id}/matches",
        "/v1/matches/{match_id}/events",
        "/v1/matches/{match_id}/replay",
        "/v1/leaderboards/{game}",
        "/v1/leaderboards/{game}/seasons/{season}",
        "/v1/statistics/{game}/{board}",
        "/v1/players/{player_id}/credits",
        "/v1/players/{player_id}/credits/ledger",
        "/v1/leaderboards/{game}/daily/{day}",
        "/v1/rooms/{code}/standings/{game}",
        "/v1/games",
        "/v1/players/{player_id}/ghost-sharing",
    }
    for item in paths.values():
        operation = item["get"]
        assert operation["description"] or operation["summary"]
        assert "200" in operation["responses"] and "401" in operation["responses"]
        assert "$ref" in str(operation["responses"]["200"])
