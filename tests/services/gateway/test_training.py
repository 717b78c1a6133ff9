"""The trainers' routes: puzzles as the engine makes them, answers checked by the Mind-attack
rules, the solutions held back until solved, a budget per player, and a match's review equal to
the engine's review of its logged events."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from arena_engine.maths_warriors.puzzles import generate
from arena_engine.maths_warriors.review import review
from arena_games.maths_warriors import wire as mw_schema
from arena_games.maths_warriors.training import MOVES
from arena_gateway.read_api import create_read_router
from arena_gateway.training import create_training_router
from arena_rating.projections import rating_projections
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.sql import create_engine, session_factory, upgrade_head
from arena_runtime.sql.rebuild import runners
from fastapi import FastAPI

from tests.e2e.servers import arena, settings_for
from tests.services.rating import matches

BURST = 6


@pytest.fixture(scope="module")
async def http(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[httpx.AsyncClient]:
    settings = settings_for(
        Path(tmp_path_factory.mktemp("training")), puzzle_rate=0.001, puzzle_burst=BURST
    )
    async with (
        arena(settings, services=("gateway",)) as base,
        httpx.AsyncClient(base_url=base) as client,
    ):
        yield client


async def a_guest(http: httpx.AsyncClient) -> dict[str, str]:
    token = (await http.post("/v1/guests")).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def words(tokens: object) -> list[str]:
    return [getattr(t, "die", t) for t in tokens]  # type: ignore[attr-defined]


async def test_a_puzzle_is_the_engines_and_hides_its_solutions(http: httpx.AsyncClient) -> None:
    caller = await a_guest(http)
    shown = (
        await http.get("/v1/puzzles/maths-warriors?difficulty=hard&seed=7", headers=caller)
    ).json()
    engine = generate("hard", 7)
    assert shown["target"] == engine.target and shown["seed"] == 7
    assert [d["value"] for d in shown["dice"]] == list(engine.dice)
    assert "solutions" not in shown
    drawn = (await http.get("/v1/puzzles/maths-warriors?difficulty=easy", headers=caller)).json()
    again = await http.get(
        f"/v1/puzzles/maths-warriors?difficulty=easy&seed={drawn['seed']}", headers=caller
    )
    assert again.json() == drawn  # the seed names the puzzle


async def test_an_answer_is_checked_by_the_rules_and_earns_the_solutions(
    http: httpx.AsyncClient,
) -> None:
    caller = await a_guest(http)
    engine = generate("medium", 11)
    right = words(engine.solutions[0].tokens)
    solved = (
        await http.post(
            "/v1/puzzles/maths-warriors/answers",
            json={"difficulty": "medium", "seed": 11, "tokens": right},
            headers=caller,
        )
    ).json()
    assert solved["solved"] is True and solved["reason"] is None
    assert solved["solutions"] == [s.text() for s in engine.solutions]
    wrong = (
        await http.post(
            "/v1/puzzles/maths-warriors/answers",
            json={"difficulty": "medium", "seed": 11, "tokens": right[:1]},
            headers=caller,
        )
    ).json()
    assert wrong["solved"] is False and wrong["reason"] == "mind_needs_two_dice"
    assert wrong["solutions"] is None and wrong["hint"].startswith("use ")
    shown = (
        await http.post(
            "/v1/puzzles/maths-warriors/answers",
            json={"difficulty": "medium", "seed": 11, "tokens": [], "reveal": True},
            headers=caller,
        )
    ).json()
    assert shown["solved"] is False and shown["solutions"] == solved["solutions"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"difficulty": "easy", "seed": 1, "tokens": ["D4", "+", "rm -rf"]}, "invalid_request"),
        ({"difficulty": "impossible", "seed": 1, "tokens": []}, "invalid_request"),
        ({"difficulty": "easy", "seed": -1, "tokens": []}, "invalid_request"),
        ({"difficulty": "easy", "seed": 1, "tokens": ["D4"] * 33}, "invalid_request"),
    ],
)
async def test_a_garbled_answer_gets_a_typed_refusal(
    http: httpx.AsyncClient, body: dict, code: str
) -> None:
    answer = await http.post(
        "/v1/puzzles/maths-warriors/answers", json=body, headers=await a_guest(http)
    )
    assert answer.status_code == 422 and answer.json()["detail"]["code"] == code, answer.text


async def test_puzzles_need_a_caller_and_are_budgeted_per_player(http: httpx.AsyncClient) -> None:
    assert (await http.get("/v1/puzzles/maths-warriors")).status_code == 401
    one, two = await a_guest(http), await a_guest(http)
    codes = [
        (await http.get("/v1/puzzles/maths-warriors?seed=3", headers=one)).status_code
        for _ in range(BURST + 1)
    ]
    assert codes == [200] * BURST + [429]
    refused = await http.get("/v1/puzzles/maths-warriors?seed=3", headers=one)
    assert refused.json()["detail"]["code"] == "rate_limited" and refused.headers["Retry-After"]
    assert (await http.get("/v1/puzzles/maths-warriors?seed=3", headers=two)).status_code == 200


async def test_a_review_is_the_engines_review_of_the_logged_moves(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'read.sqlite3'}")
    await upgrade_head(engine)
    sessions = session_factory(engine)
    async with open_event_log(settings) as log:
        await topics.ensure_topics(log, 2)
        game = matches.play(random.Random(5), max_moves=30)
        seats = (matches.seat("p_a"), matches.seat("p_b"))
        stream = matches.match_events("m1", seats, match_pb2.MATCH_MODE_CASUAL, game)
        await matches.append(log, stream)
        for runner in runners(settings, log, sessions, rating_projections(settings)):
            await runner.catch_up()
    app = FastAPI()
    app.state.read_sessions = sessions
    app.include_router(create_read_router(lambda: "p_reader"))
    app.include_router(create_training_router(lambda: "p_reader", lambda: None))  # type: ignore[arg-type,return-value]
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://arena"
    ) as client:
        body = (await client.get("/v1/matches/m1/review")).json()
        assert (await client.get("/v1/matches/nope/review")).json()["detail"][
            "code"
        ] == "match_not_found"
    await engine.dispose()
    logged = [e for e in stream if isinstance(e.payload, mw_schema.GAME_EVENTS)]
    expected = review([mw_schema.event_from_proto(e.payload) for e in logged])
    assert len(body["moves"]) == len(expected) > 0
    for got, want in zip(body["moves"], expected, strict=True):
        assert (got["player"], got["played"], got["best"], got["verdict"]) == (
            want.player,
            want.played,
            want.best,
            want.verdict.value,
        )
    moved = [e.sequence for e in logged if isinstance(mw_schema.event_from_proto(e.payload), MOVES)]
    assert [m["sequence"] for m in body["moves"]] == moved
