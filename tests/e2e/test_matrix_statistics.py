"""Issue 14: the Matrix Games statistics board per variant, after an episode played over a real
WebSocket against every service in this process (embedded log): the person's seat and the
scripted policies, each with its episodes, mean score and cooperation index, as the episode's
end in the log says.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_games.contract import Viewer
from arena_games.matrix_games import wire
from arena_games.matrix_games.bot import MatrixGamesBot
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mg
from arena_runtime.config import Settings

from tests.e2e.client import signed_in
from tests.e2e.servers import arena, settings_for
from tests.e2e.test_relayed_games import final, match_events, matrix_room, play_seat

SERVICES = ("gateway", "match", "matchmaking", "rating", "projections")
VARIANT = "prisoners-dilemma"  # a variant with a cooperation token


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return settings_for(Path(tmp_path_factory.mktemp("statistics")), projection_poll_ms=50)


@pytest.fixture(scope="module")
async def url(settings: Settings) -> AsyncIterator[str]:
    async with arena(settings, SERVICES) as base:
        yield base


async def test_the_variant_board_shows_the_person_and_the_policies_of_a_played_episode(
    url: str, settings: Settings
) -> None:
    host = await signed_in(url)
    _, match_id, seats = await matrix_room(
        url, [host], variant=VARIANT, beats=2, ticks_per_beat=10, min_beat_seconds=0
    )
    (number,) = seats
    await play_seat(host, MatrixGamesBot(Viewer(number)), final)
    payloads = [wire.unwrapped(e.payload) for e in await match_events(settings, match_id)]
    (ended,) = [p for p in payloads if isinstance(p, mg.EpisodeEnded)]
    outcome = {s.seat: s for s in ended.seats}
    person = outcome[number]
    assert person.orders_given > 0  # the client's orders were played: the seat counts

    headers = {"Authorization": f"Bearer {host.token}"}
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    async with httpx.AsyncClient(base_url=url, headers=headers) as http:
        async with asyncio.timeout(30):  # the projections follow the log a moment behind
            while ("player", host.player_id) not in by_key:
                answer = await http.get(f"/v1/statistics/matrix-games/{VARIANT}")
                assert answer.status_code == 200, answer.text
                by_key = {(e["kind"], e["key"]): e for e in answer.json()["entries"]}
                await asyncio.sleep(0.1)
        other = await http.get("/v1/statistics/matrix-games/stag-hunt")
    assert set(by_key) == {("player", host.player_id), ("policy", "counter")}
    mine = by_key[("player", host.player_id)]
    assert (mine["name"], mine["episodes"]) == (host.name, 1)
    assert mine["mean_score"] == person.score_cp
    assert mine["indices"]["cooperation_index"] == (
        person.coop_mass / person.mass if person.mass else None
    )
    # The seven scripted seats, all `counter` (the room's default fill), summed seat by seat.
    scripted = [s for n, s in outcome.items() if n != number]
    counter = by_key[("policy", "counter")]
    assert counter["episodes"] == 7
    assert counter["mean_score"] == sum(s.score_cp for s in scripted) / 7
    mass, coop = sum(s.mass for s in scripted), sum(s.coop_mass for s in scripted)
    assert counter["indices"]["cooperation_index"] == (coop / mass if mass else None)
    # Another variant's board has nothing of it.
    assert other.status_code == 200 and other.json()["entries"] == []
    await host.close()
