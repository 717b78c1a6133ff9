"""Who may read a Digits game's log (its slates and answers): its player; a duel's other player
after the duel, naming it, if the owner shares their login (the ghost store's preference,
projected into ``ghost_sharing``); nobody else (403 ``not_your_game``). Real Digits games
(played through the module) and the ghost store's events on the log, the read models projected,
the read API answering."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb
from arena_games.registry import READING
from arena_rating.projections import rating_projections
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import Event, new_id
from arena_runtime.host import open_runtime
from arena_runtime.schemas.lobby import duel_game
from arena_runtime.sql import session_factory
from arena_runtime.sql.rebuild import runners

from tests.services.rating import digits_games as dg
from tests.services.rating.backends import distributed_settings
from tests.services.rating.test_read_api import read_client

T0 = 1_796_115_600_000
MINUTE = 60_000


def game(match_id: str, player: str, mode: str, over: bool = True) -> list[Event]:
    timed = dg.play_game(T0, [1000, 1000], "ranked", MINUTE)[1]
    written = dg.events(match_id, player, timed, mode=mode)
    return written if over else written[:-1]  # not over: no MatchEnded yet


def sharing(choices: list[tuple[str, str]]) -> list[Event]:
    """The ghost store's stream with these preferences set, as matchmaking writes it."""
    return [
        Event(
            event_id=new_id(),
            stream="ghosts-digits",
            sequence=number,
            type=READING.schemas.type_of(payload),
            payload=payload,
            time=datetime.fromtimestamp(T0 / 1000, UTC),
            batch_id=new_id(),
        )
        for number, payload in enumerate(
            (pb.GhostSharingSet(player_id=p, sharing=s) for p, s in choices), start=1
        )
    ]


async def check_privacy(settings: Settings) -> None:
    ann1, bob1 = duel_game("d1", "p_ann"), duel_game("d1", "p_bob")
    ann2, bob2 = duel_game("d2", "p_ann"), duel_game("d2", "p_bob")
    games = [
        game(ann1, "p_ann", "duel"),
        game(bob1, "p_bob", "duel"),
        game(ann2, "p_ann", "duel"),
        game(bob2, "p_bob", "duel", over=False),  # duel d2 is not over
        game("r-cy", "p_cy", "ranked"),
    ]
    # Bob shares his login; Ann chose login then went back to anonymous.
    choices = [("p_bob", "login"), ("p_ann", "login"), ("p_ann", "anonymous")]
    async with open_runtime(settings) as runtime:
        await topics.ensure_topics(runtime.log, settings.partitions)
        for written in games:
            await dg.append(runtime.log, written)
        store = sharing(choices)
        await runtime.log.append(
            topics.MATCHMAKING_EVENTS, [READING.event_record(e) for e in store]
        )
        sessions = session_factory(runtime.db)
        for runner in runners(settings, runtime.log, sessions, rating_projections(settings)):
            await runner.catch_up()
        async with read_client(sessions, None) as http:

            async def read(who: str, match_id: str, duel: str | None = None) -> int:
                params = {"duel": duel} if duel else {}
                answer = await http.get(
                    f"/v1/matches/{match_id}/events",
                    params=params,
                    headers={"Authorization": f"Bearer as-{who}"},
                )
                if answer.status_code == 403:
                    assert answer.json()["detail"]["code"] == "not_your_game", answer.text
                return answer.status_code

            # Each player reads their own games, finished or not.
            assert await read("p_ann", ann1) == 200
            assert await read("p_bob", bob2) == 200
            assert await read("p_cy", "r-cy") == 200
            # Nobody else, without a duel to name: a ranked game, a duel's game.
            assert await read("p_ann", "r-cy") == 403
            assert await read("p_reader", ann1) == 403
            assert await read("p_ann", bob1) == 403
            # After duel d1, Ann reads Bob's game (he shares his login), not Bob hers.
            assert await read("p_ann", bob1, duel="d1") == 200
            assert await read("p_bob", ann1, duel="d1") == 403
            # Not someone who played no game of that duel, nor through another duel.
            assert await read("p_cy", bob1, duel="d1") == 403
            assert await read("p_ann", bob1, duel="d2") == 403
            # Duel d2 is not over: Bob's game stays his.
            assert await read("p_ann", bob2, duel="d2") == 403
            # The replay is held to the same rule (Digits has none: 404 `no_replay` for its player).
            replay = await http.get(
                f"/v1/matches/{ann1}/replay", headers={"Authorization": "Bearer as-p_cy"}
            )
            assert replay.status_code == 403
            own = await http.get(
                f"/v1/matches/{ann1}/replay", headers={"Authorization": "Bearer as-p_ann"}
            )
            assert own.status_code == 404 and own.json()["detail"]["code"] == "no_replay"
            spec = (await http.get("/openapi.json")).json()["paths"][
                "/v1/matches/{match_id}/events"
            ]["get"]
            assert "403" in spec["responses"]
            assert "duel" in [p["name"] for p in spec["parameters"]]


async def test_who_reads_a_digits_games_log_on_the_embedded_log_and_sqlite(
    tmp_path: Path,
) -> None:
    await check_privacy(Settings(data_dir=tmp_path, partitions=2))


@pytest.mark.kafka
@pytest.mark.postgres
async def test_who_reads_a_digits_games_log_on_the_broker_and_postgresql(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The distributed parts: Kafka (Tansu) and PostgreSQL, the migration to the sharing table
    included."""
    settings = await distributed_settings(request, tmp_path)
    await check_privacy(settings)
