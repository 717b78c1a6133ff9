"""A player's credits on the read side: the ledger's movements (a stream of their own, decided by
the rating service's runner) projected into ``credit_movements``, served as the balance and the
ledger's pages by the read API; a refused movement changes neither; ``arena rebuild`` gives the
same rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from arena_rating.projections import rating_projections
from arena_rating.service import ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import new_command
from arena_runtime.host import open_runtime
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.sql import session_factory
from arena_runtime.sql.rebuild import runners

from tests.harness.tables import snapshot
from tests.services.rating.backends import distributed_settings, rebuilt_equals_live
from tests.services.rating.test_read_api import TOKEN, read_client

MOVES: list[Any] = [
    pb.CreditCredits(movement_id="season-prize:2026-11:p_ann", amount=150, reason="season_prize"),
    pb.HoldCredits(hold_id="duel-1", amount=40, reason="duel_stake"),
    pb.DebitCredits(movement_id="shop-1", amount=500, reason="shop"),  # refused: not enough
    pb.HoldCredits(hold_id="duel-2", amount=30, reason="duel_stake"),
    pb.ReleaseCredits(hold_id="duel-1"),  # a full tie: the stake comes back
    pb.CaptureCredits(hold_id="duel-2", reason="duel_lost"),
]


async def check_credits(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    async with open_runtime(settings) as runtime:
        log = runtime.log
        await topics.ensure_topics(log, settings.partitions)
        runner = ladder_runner(log)
        codes = []
        for number, move in enumerate(MOVES):
            answer = await runner.handle(
                new_command("credits-p_ann", move, command_id=f"m{number}")
            )
            codes.append(answer.rejection.code if answer.rejection else None)
        assert codes == [None, None, "insufficient_credits", None, None, None]
        sessions = session_factory(runtime.db)
        projections = rating_projections(settings)
        for projection_runner in runners(settings, log, sessions, projections):
            await projection_runner.catch_up()
        async with read_client(sessions, "as-p_ann") as http:
            # Only the account's owner reads its credits: anyone else is refused, typed.
            for path in ("/v1/players/p_ann/credits", "/v1/players/p_ann/credits/ledger"):
                other = await http.get(path, headers={"Authorization": f"Bearer {TOKEN}"})
                assert other.status_code == 403, (path, other.text)
                assert other.json()["detail"]["code"] == "not_your_account"
            balance = (await http.get("/v1/players/p_ann/credits")).json()
            # 150 - 40 - 30 + 40 (released); the captured 30 is gone.
            assert balance == {"player_id": "p_ann", "balance": 120, "held": 0, "movements": 5}
            nobody = (
                await http.get(
                    "/v1/players/p_nobody/credits", headers={"Authorization": "Bearer as-p_nobody"}
                )
            ).json()
            assert nobody["balance"] == 0 and nobody["movements"] == 0
            page = (await http.get("/v1/players/p_ann/credits/ledger", params={"limit": 3})).json()
            assert [m["kind"] for m in page["movements"]] == ["captured", "released", "held"]
            assert [m["balance"] for m in page["movements"]] == [120, 120, 80]
            assert [m["held"] for m in page["movements"]] == [0, 30, 70]
            rest = await http.get(
                "/v1/players/p_ann/credits/ledger",
                params={"limit": 3, "cursor": page["next_cursor"]},
            )
            older = rest.json()
            assert [m["kind"] for m in older["movements"]] == ["held", "credited"]
            assert older["movements"][1]["reason"] == "season_prize"
            assert older["next_cursor"] is None
            bad = await http.get("/v1/players/p_ann/credits/ledger", params={"cursor": "AAAA"})
            assert bad.status_code == 400 and bad.json()["detail"]["code"] == "invalid_cursor"
            assert (await http.get("/v1/players/bad%20id/credits")).status_code == 422
            spec = (await http.get("/openapi.json")).json()
            ledger = spec["paths"]["/v1/players/{player_id}/credits/ledger"]["get"]
            assert "403" in ledger["responses"]
        live_tables = await snapshot(sessions, projections)
    await rebuilt_equals_live(monkeypatch, settings, projections, live_tables)


async def test_credits_routes_on_the_embedded_log_and_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await check_credits(Settings(data_dir=tmp_path, partitions=2), monkeypatch)


@pytest.mark.kafka
@pytest.mark.postgres
async def test_credits_routes_on_the_broker_and_postgresql(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The distributed parts: Kafka (Tansu) and PostgreSQL, the migration to the credits table
    included."""
    settings = await distributed_settings(request, tmp_path)
    await check_credits(settings, monkeypatch)
