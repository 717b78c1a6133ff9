"""rating_0002_any_seats on SQLite and on the real PostgreSQL: the two seat columns of each
match become seat rows (``match_seats``), ranks from the winner, and the columns go; a history
row gains its player's rank (from its result) and the match's two seats."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from arena_runtime.sql import create_engine, upgrade_head
from arena_runtime.sql.migrate import alembic_config, for_migrations, wait_for_turn
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.harness.postgres import empty_postgres


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'projections.sqlite3'}"
    url: str = request.getfixturevalue("postgres_url")
    await empty_postgres(url)
    return url


async def upgrade_to(engine: AsyncEngine, revision: str) -> None:
    config = alembic_config()

    def upgrade(connection: Connection) -> None:
        wait_for_turn(connection)
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    async with for_migrations(engine).begin() as connection:
        await connection.run_sync(upgrade)


OLD_ROW = (
    "INSERT INTO match_index (match_id, mode, room_code, seat1_id, seat1_name, seat1_ai, "
    "seat2_id, seat2_name, seat2_ai, status, winner, reason, created_at_ms, ended_at_ms, "
    "events, last_sequence, last_batch_id) VALUES (:match_id, 'casual', '', :a, 'A', false, "
    ":b, 'B', :b_ai, :status, :winner, :reason, 1, NULL, 3, 3, 'x')"
)

OLD_HISTORY = (
    "INSERT INTO rating_history (player_id, match_id, game, ladder_seq, ended_at_ms, mode, "
    "result, reason, opponent_id, opponent_name, opponent_ai, rating_before, rating_after, "
    "rating_change) VALUES (:player, 'm1', 'maths-warriors', 1, 5, 'casual', :result, "
    "'all_captured', 'x', 'X', false, NULL, NULL, NULL)"
)


async def test_seat_columns_become_seat_rows(db_url: str) -> None:
    engine = create_engine(db_url)
    try:
        await upgrade_to(engine, "rating_0001_readmodels")
        async with engine.begin() as connection:
            for row in (
                {"match_id": "m1", "a": "p_a", "b": "ai-hard", "b_ai": True, "status": "over"}
                | {"winner": 2, "reason": "all_captured"},
                {"match_id": "m2", "a": "p_c", "b": "p_d", "b_ai": False, "status": "playing"}
                | {"winner": None, "reason": None},
                # A stream that did not start with its match's opening: no seat was known.
                {"match_id": "m3", "a": "", "b": "", "b_ai": False, "status": "playing"}
                | {"winner": None, "reason": None},
            ):
                await connection.execute(text(OLD_ROW), row)
            for player, result in (("p_a", "loss"), ("ai-hard", "win")):
                await connection.execute(text(OLD_HISTORY), {"player": player, "result": result})
        await upgrade_head(engine)
        async with engine.connect() as connection:
            seats = (
                await connection.execute(
                    text(
                        "SELECT match_id, seat, player_id, display_name, kind, rank "
                        "FROM match_seats ORDER BY match_id, seat"
                    )
                )
            ).all()
            columns = await connection.run_sync(
                lambda c: {col["name"] for col in inspect(c).get_columns("match_index")}
            )
            index = (
                await connection.execute(
                    text("SELECT match_id, status, winner FROM match_index ORDER BY match_id")
                )
            ).all()
        assert [tuple(r) for r in seats] == [
            ("m1", 1, "p_a", "A", "human", 2),
            ("m1", 2, "ai-hard", "B", "ai", 1),
            ("m2", 1, "p_c", "A", "human", None),
            ("m2", 2, "p_d", "B", "human", None),
        ]
        assert not {c for c in columns if c.startswith("seat")}
        async with engine.connect() as connection:
            history = (
                await connection.execute(
                    text("SELECT player_id, rank, seats FROM rating_history ORDER BY player_id")
                )
            ).all()
        assert [tuple(r) for r in history] == [("ai-hard", 1, 2), ("p_a", 2, 2)]
        assert [tuple(r) for r in index] == [
            ("m1", "over", 2),
            ("m2", "playing", None),
            ("m3", "playing", None),
        ]
    finally:
        await engine.dispose()
