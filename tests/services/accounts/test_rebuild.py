"""The accounts projection rebuilt by ``arena rebuild`` equals the live one, row for row."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from arena_gateway.accounts.projection import AccountsProjection
from arena_gateway.accounts.tables import account_sessions, accounts
from arena_runtime.sql import session_factory
from arena_runtime.sql.engine import engine_from_settings
from sqlalchemy import func, select

from tests.e2e.servers import arena, settings_for
from tests.runtime.sql.test_rebuild import arena as arena_cli
from tests.runtime.sql.test_rebuild import snapshot

PASSWORD = "correct horse battery"


async def test_rebuilt_accounts_equal_the_live_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path, projection_poll_ms=20, sign_in_burst=50)
    async with arena(settings, services=("gateway", "projections")) as url:
        async with httpx.AsyncClient(base_url=url, timeout=10) as http:
            tokens = []
            for name in ("Ann", "ben", "Cat", "ann"):  # the second "ann" is refused
                body = {"username": name, "password": PASSWORD}
                made = await http.post("/v1/accounts", json=body)
                if made.status_code == 201:
                    tokens.append(made.json()["token"])
            for name in ("ann", "BEN"):
                body = {"username": name, "password": PASSWORD}
                tokens.append((await http.post("/v1/sessions", json=body)).json()["token"])
            guest = (await http.post("/v1/guests")).json()
            body = {"username": "Dan", "password": PASSWORD}
            headers = {"Authorization": f"Bearer {guest['token']}"}
            assert (await http.post("/v1/accounts/upgrade", json=body, headers=headers)).is_success
            for token in tokens[::2]:
                headers = {"Authorization": f"Bearer {token}"}
                assert (await http.delete("/v1/sessions/current", headers=headers)).is_success
        engine = engine_from_settings(settings)
        sessions = session_factory(engine)
        try:
            for _ in range(200):  # the projection follows the log within a few polls
                async with sessions() as session:
                    closed = await session.scalar(
                        select(func.count()).where(account_sessions.c.closed)
                    )
                    rows = await session.scalar(select(func.count()).select_from(accounts))
                if closed == 3 and rows == 4:
                    break
                await asyncio.sleep(0.05)
        finally:
            await engine.dispose()
    # Taken once the arena has stopped: the other projections commit their offsets on their
    # own polls, and one committed between this snapshot and the rebuild's would differ.
    engine = engine_from_settings(settings)
    try:
        live = await snapshot(session_factory(engine), [AccountsProjection()])
    finally:
        await engine.dispose()
    assert len(live["account_sessions"]) == 6
    assert await arena_cli(monkeypatch, settings, "rebuild", "--projection", "accounts") == 0
    engine = engine_from_settings(settings)
    try:
        assert await snapshot(session_factory(engine), [AccountsProjection()]) == live
    finally:
        await engine.dispose()
