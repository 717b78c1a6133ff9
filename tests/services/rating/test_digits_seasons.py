"""Digits' season leaderboard on the read side: the rating service (run as a service) rates real
Digits games from the log, the projection keeps each player's line per season (rating, ranked
combats, counted games), the read API serves the board with its prizes (keyset pages, typed
refusals), a voided game leaves it, and ``arena rebuild`` reproduces every table. Once on the
embedded log and SQLite, once on the broker and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_rating import ladder
from arena_rating.credits import PrizePayer
from arena_rating.projections import rating_projections
from arena_rating.seasons import SeasonClock
from arena_rating.service import ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import new_command
from arena_runtime.host import open_runtime
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import ladder_stream
from arena_runtime.sql import session_factory
from arena_runtime.sql.rebuild import runners

from tests.harness.tables import snapshot
from tests.services.rating import digits_games as dg
from tests.services.rating.backends import distributed_settings, rebuilt_equals_live
from tests.services.rating.test_read_api import read_client
from tests.services.rating.test_replay import run_service

#: 2026-12-01 10:00 Paris.
T0 = 1_796_115_600_000
HOUR = 3_600_000
#: 2027-01-01 00:00 Paris: December 2026 is over.
JANUARY = 1_798_758_000_000
LADDER = ladder_stream("digits")
#: Weak armies then strong ones: three wins, three losses, a lost game that counts.
ARMIES = [1000, 1000, 1000, 1000, 1000, 1000]
#: Counted games per player in December: Ann and Bob are listed (8 at least), Cy is not.
PLAYERS = {"p_ann": 9, "p_bob": 8, "p_cy": 3}


def streams() -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    start = T0
    for player, count in PLAYERS.items():
        for number in range(count):
            match_id = f"{player}-{number}"
            timed = dg.play(start, ARMIES, "ranked", step_ms=HOUR)
            out[match_id] = dg.events(match_id, player, timed)
            start = int(out[match_id][-1].time.timestamp() * 1000) + HOUR
    return out


async def board(http: httpx.AsyncClient, **params: Any) -> Any:
    answer = await http.get("/v1/leaderboards/digits/seasons/2026-12", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def check_seasons(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    written = streams()
    async with open_runtime(settings) as runtime:
        log = runtime.log
        await topics.ensure_topics(log, settings.partitions)
        sessions = session_factory(runtime.db)
        projections = rating_projections(settings)
        live = runners(settings, log, sessions, projections)
        for events in written.values():
            await dg.append(log, events)

        async def ladder_has(matches: int, voided: int = 0) -> bool:
            for runner in live:
                await runner.step()
            state: ladder.Ladder = (await ladder_runner(log).load(LADDER)).state
            return len(state.recorded) >= matches and len(state.voided) >= voided

        await run_service(runtime, lambda: ladder_has(len(written)), "every game recorded")
        for runner in live:
            await runner.catch_up()

        async with read_client(sessions) as http:
            first = await board(http)
            state = (await ladder_runner(log).load(LADDER)).state
            assert [e["player_id"] for e in first["entries"]] == sorted(
                ["p_ann", "p_bob"], key=lambda p: (-state.standings[p].rating, p)
            )
            for entry in first["entries"]:
                standing = state.standings[entry["player_id"]]
                assert entry["rating"] == standing.rating
                assert entry["ranked_combats"] == standing.season_units
                assert entry["ranked_games"] == PLAYERS[entry["player_id"]]
            assert [e["prize"] for e in first["entries"]] == [150, 100]
            assert [e["place"] for e in first["entries"]] == [1, 2] and first["total"] == 2
            paged = await board(http, limit=1)
            second = await board(http, limit=1, cursor=paged["next_cursor"])
            assert paged["entries"] + second["entries"] == first["entries"]
            assert second["next_cursor"] is None
            # Typed refusals.
            assert (await http.get("/v1/leaderboards/maze/seasons/2026-12")).status_code == 404
            assert (await http.get("/v1/leaderboards/digits/seasons/2026-13")).status_code == 422
            bad = await http.get("/v1/leaderboards/digits/seasons/2026-12?cursor=AAAA")
            assert bad.status_code == 400

            # One of Bob's games is voided: seven counted games, off the board; his rating is
            # the one he would have without it.
            voided = written["p_bob-3"]
            end = int(written["p_cy-2"][-1].time.timestamp() * 1000)
            await dg.append(log, dg.voided("p_bob-3", voided, end + HOUR))
            await run_service(
                runtime, lambda: ladder_has(len(written), voided=1), "the void taken back"
            )
            for runner in live:
                await runner.catch_up()
            after = await board(http)
            assert [e["player_id"] for e in after["entries"]] == ["p_ann"]
            assert after["entries"][0]["prize"] == 150

        # The season clock, controlled: one instant before the end, December is not closed;
        # at Paris midnight on the 1st it is, once, with its places and prizes.
        def at(ms: int) -> Any:
            return lambda: datetime.fromtimestamp(ms / 1000, UTC)

        assert await SeasonClock(log, clock=at(JANUARY - 1)).tick() == [
            "close-season:digits:2026-11"
        ]
        early = await ladder_runner(log).handle(
            new_command(
                LADDER,
                pb.CloseSeason(game="digits", season="2026-12", now_ms=JANUARY - 1),
                command_id="early",
            )
        )
        assert early.rejection is not None and early.rejection.code == "season_not_over"
        due = SeasonClock(log, clock=at(JANUARY))
        assert await due.tick() == ["close-season:digits:2026-12"]
        assert await due.tick() == []

        async def closed() -> bool:
            for runner in live:
                await runner.step()
            state: ladder.Ladder = (await ladder_runner(log).load(LADDER)).state
            return "2026-12" in state.closed

        await run_service(runtime, closed, "December closed")
        answer = await ladder_runner(log).handle(
            new_command(
                LADDER,
                pb.CloseSeason(game="digits", season="2026-12", now_ms=JANUARY),
                command_id="close-season:digits:2026-12",
            )
        )
        (event,) = answer.events
        assert isinstance(event.payload, pb.SeasonClosed) and event.payload.closed_at_ms == JANUARY
        state = (await ladder_runner(log).load(LADDER)).state
        assert [(p.place, p.player_id, p.prize) for p in event.payload.places] == [
            (1, "p_ann", 150)
        ]
        assert event.payload.places[0].rating == state.standings["p_ann"].rating

        # The prize goes to Ann's credits ledger, a stream of its own; paying again pays nothing.
        async def balance(player: str) -> Any:
            return (await ladder_runner(log).load(f"credits-{player}")).state.ledger

        async def paid() -> bool:
            return (await balance("p_ann")).balance == 150

        await run_service(runtime, paid, "Ann's prize credited")
        payer = PrizePayer(log)  # a redelivered SeasonClosed: the same movement again
        await payer.handle(event, None)  # type: ignore[arg-type]
        assert payer.paid == 1
        again = await ladder_runner(log).handle(
            new_command(
                "credits-p_ann",
                pb.CreditCredits(
                    movement_id="season-prize:2026-12:p_ann", amount=150, reason="season_prize"
                ),
                command_id="a-retry-under-another-id",
            )
        )
        assert again.rejection is None and again.events == ()
        ledger = await balance("p_ann")
        assert ledger.balance == 150 and ledger.seen == {"season-prize:2026-12:p_ann"}
        assert (await balance("p_bob")).balance == 0
        overdraw = await ladder_runner(log).handle(
            new_command(
                "credits-p_ann",
                pb.DebitCredits(movement_id="shop-1", amount=151, reason="shop"),
                command_id="shop-1",
            )
        )
        assert overdraw.rejection is not None
        assert overdraw.rejection.code == "insufficient_credits"
        assert (await balance("p_ann")).balance == 150
        for runner in live:
            await runner.catch_up()
        live_tables = await snapshot(sessions, projections)

    await rebuilt_equals_live(monkeypatch, settings, projections, live_tables)


async def test_season_board_on_the_embedded_log_and_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await check_seasons(Settings(data_dir=tmp_path, partitions=2), monkeypatch)


@pytest.mark.kafka
@pytest.mark.postgres
async def test_season_board_on_the_broker_and_postgresql(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = await distributed_settings(request, tmp_path)
    await check_seasons(settings, monkeypatch)
