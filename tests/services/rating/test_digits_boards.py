"""Digits' daily leaderboard and a room's standings on the read side: real Digits games (played
through the module) written to the log as the match service writes them, the match index and
events projected, the boards made at query time by the read API (typed, in the OpenAPI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb
from arena_rating.projections import rating_projections
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.host import open_runtime
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.sql import session_factory
from arena_runtime.sql.rebuild import runners

from tests.services.rating import digits_games as dg
from tests.services.rating.test_read_api import read_client

#: 2026-12-01 10:00 Paris.
T0 = 1_796_115_600_000
MINUTE = 60_000
DAILY = pb.DigitsSettings(shop_seed=77)
#: Weak armies (won) then strong ones (lost).
WON_3_LOST_3 = [1000] * 6
WON_8 = [1000] * 16


def daily(match_id: str, player: str, start: int, armies: list[int]) -> list[Any]:
    """A daily game; with strong armies only from the middle of ``armies`` on."""
    timed = dg.play_game(start, armies, "daily", MINUTE, settings=DAILY)[1]
    return dg.events(match_id, player, timed, mode="daily")


async def test_the_daily_leaderboard_and_its_podium(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, partitions=2)
    # Bob wins eight; Ann and Cy each win three and lose three (Ann finishes first); Dee
    # forfeits after two rounds (not listed); Eve's game is voided (not listed); Fay's is on
    # the day before.
    games = {
        "d-ann": daily("d-ann", "p_ann", T0, WON_3_LOST_3),
        "d-bob": daily("d-bob", "p_bob", T0 + MINUTE, WON_8),
        "d-cy": daily("d-cy", "p_cy", T0 + 60 * MINUTE, WON_3_LOST_3),
        "d-dee": daily("d-dee", "p_dee", T0, [1000, 1000]),
        "d-fay": daily("d-fay", "p_fay", T0 - 86_400_000, WON_8),
    }
    eve = daily("d-eve", "p_eve", T0, WON_8)
    games["d-eve"] = eve + dg.voided("d-eve", eve, T0 + 300 * MINUTE)
    async with open_runtime(settings) as runtime:
        await topics.ensure_topics(runtime.log, settings.partitions)
        for written in games.values():
            await dg.append(runtime.log, written)
        sessions = session_factory(runtime.db)
        for runner in runners(settings, runtime.log, sessions, rating_projections(settings)):
            await runner.catch_up()
        async with read_client(sessions) as http:
            answer = await http.get("/v1/leaderboards/digits/daily/2026-12-01")
            assert answer.status_code == 200, answer.text
            board = answer.json()
            rows = [(p["place"], p["player_id"], p["wins"], p["losses"]) for p in board["places"]]
            assert rows == [(1, "p_bob", 8, 0), (2, "p_ann", 3, 3), (3, "p_cy", 3, 3)]
            assert board["podium"] == board["places"]
            assert board["places"][1]["finished"] < board["places"][2]["finished"]
            before = (await http.get("/v1/leaderboards/digits/daily/2026-11-30")).json()
            assert [p["player_id"] for p in before["places"]] == ["p_fay"]
            empty = (await http.get("/v1/leaderboards/digits/daily/2026-12-02")).json()
            assert empty["places"] == [] and empty["podium"] == []
            assert (await http.get("/v1/leaderboards/maze/daily/2026-12-01")).status_code == 404
            assert (await http.get("/v1/leaderboards/digits/daily/2026-02-30")).status_code == 404
            assert (await http.get("/v1/leaderboards/digits/daily/2026-13-01")).status_code == 422
            assert (await http.get("/v1/rooms/K7QX2/standings/digits")).status_code == 404
            paths = (await http.get("/openapi.json")).json()["paths"]
            daily_schema = paths["/v1/leaderboards/{game}/daily/{day}"]["get"]["responses"]["200"]
            assert "DailyBoard" in str(daily_schema)


def room_game(match_id: str, player: str, combats: list[tuple[str, int]], missed: int = 0) -> Any:
    """A room game's events as the board reads them (MatchOpened in mode room with its code,
    the missed rounds, each combat), written by hand: the room's clock is not what is tested."""
    opened = match_pb2.MatchOpened(
        match_id=match_id,
        game="digits",
        seats=[match_pb2.MatchSeat(player_id=player, display_name=player.upper(), kind=1)],
        mode=match_pb2.MATCH_MODE_ROOM,
        room_code="K7QX2",
    )
    payloads: list[tuple[Any, int]] = [(opened, T0)]
    if missed:
        payloads.append((pb.RoundsMissed(count=missed), T0))
    for number, (result, margin) in enumerate(combats, start=1):
        payloads.append(
            (pb.CombatFought(round=number, result=result, margin=margin), T0 + number * MINUTE)
        )
    return dg.stream(match_id, payloads)


async def test_a_rooms_standings(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, partitions=2)
    games = [
        room_game("r-ann", "p_ann", [("win", 5), ("win", 3), ("loss", -2)]),
        room_game("r-bob", "p_bob", [("win", 9), ("loss", -1), ("win", 2)]),
        room_game("r-cy", "p_cy", [("win", 4)], missed=2),  # joined late: two losses
    ]
    async with open_runtime(settings) as runtime:
        await topics.ensure_topics(runtime.log, settings.partitions)
        for written in games:
            await dg.append(runtime.log, written)
        sessions = session_factory(runtime.db)
        for runner in runners(settings, runtime.log, sessions, rating_projections(settings)):
            await runner.catch_up()
        async with read_client(sessions) as http:
            answer = await http.get("/v1/rooms/K7QX2/standings/digits")
            assert answer.status_code == 200, answer.text
            rows = [
                (p["place"], p["player_id"], p["wins"], p["losses"], p["margin"])
                for p in answer.json()["places"]
            ]
            # Bob and Ann: two wins, one loss; Bob's margin is larger. Cy: one win, two missed.
            assert rows == [(1, "p_bob", 2, 1, 10), (2, "p_ann", 2, 1, 6), (3, "p_cy", 1, 2, 4)]
            assert (await http.get("/v1/rooms/ABCDE/standings/digits")).status_code == 404
            assert (await http.get("/v1/rooms/abc/standings/digits")).status_code == 422
