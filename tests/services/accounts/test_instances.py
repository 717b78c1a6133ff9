"""Two gateway instances on the broker, PostgreSQL and Redis: a session opened on one works on
the other, survives losing its cache key (the projection answers), and a sign-out on either is
refused on both at once (its socket on the other instance closed) and stays refused when the
cache forgets the tombstone."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis.asyncio as redis
from arena_gateway.accounts.tables import account_sessions
from arena_gateway.connection import SESSION_ENDED
from arena_runtime.sql import create_engine
from sqlalchemy import select

from tests.e2e.client import Player
from tests.harness.postgres import database_of_its_own
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

PASSWORD = "correct horse battery"


@pytest.fixture
def two_gateways(
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_prefix: str,
    postgres_url: str,
    redis_url: str,
    redis_prefix: str,
) -> Iterator[tuple[str, str, str]]:
    """Two `arena gateway` processes (and `arena projections`) sharing broker, database, cache;
    their URLs and the database's."""
    database = database_of_its_own(postgres_url)
    shared = {
        "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "ARENA_TOPIC_PREFIX": f"{topic_prefix}acct{secrets.token_hex(3)}.",
        "ARENA_DATABASE_URL": database,
        "ARENA_REDIS_URL": redis_url,
        "ARENA_CACHE_PREFIX": redis_prefix,
        "ARENA_PARTITIONS": "2",
        "ARENA_PROJECTION_POLL_MS": "20",
        "ARENA_LOG_LEVEL": "WARNING",
    }
    processes: list[ArenaProcess] = []
    try:
        for number, name in enumerate(("projections", "gateway", "gateway")):
            env = arena_env(tmp_path / "var", free_port(), **shared)
            processes.append(ArenaProcess([name], env, tmp_path / f"{name}-{number}.log"))
            if number == 0:
                processes[0].wait_until("/readyz", 200)  # migrates the database first
        for process in processes:
            process.wait_until("/readyz", 200)
        yield processes[1].url, processes[2].url, database
    finally:
        for process in processes:
            process.terminate()


async def me(url: str, token: str) -> int:
    async with httpx.AsyncClient(base_url=url) as http:
        response = await http.get("/v1/me", headers={"Authorization": f"Bearer {token}"})
    return response.status_code


async def closed_in_projection(postgres_url: str, digest: str) -> None:
    engine = create_engine(postgres_url)
    try:
        for _ in range(400):
            async with engine.connect() as connection:
                closed = await connection.scalar(
                    select(account_sessions.c.closed).where(account_sessions.c.token_hash == digest)
                )
            if closed:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the projection never read the SessionClosed")
    finally:
        await engine.dispose()


async def test_sessions_and_sign_out_hold_across_instances(
    two_gateways: tuple[str, str, str], redis_url: str, redis_prefix: str
) -> None:
    a, b, database = two_gateways
    name = f"multi{secrets.token_hex(4)}"
    async with httpx.AsyncClient(base_url=a) as http:
        made = await http.post("/v1/accounts", json={"username": name, "password": PASSWORD})
    assert made.status_code == 201, made.text
    token = made.json()["token"]
    digest = hashlib.sha256(token.encode()).hexdigest()
    key = f"{redis_prefix}key:account-session:{digest}"  # RedisCache._key
    assert await me(b, token) == 200

    client = redis.from_url(redis_url)
    try:
        # The cache forgets the session (eviction, a Redis restart): the projection answers.
        assert await client.delete(key) == 1
        for _ in range(400):
            if await me(b, token) == 200:
                break
            await asyncio.sleep(0.05)
        assert await me(b, token) == 200 and await client.exists(key) == 1  # cached again

        socket = Player(a)
        socket.token = token
        assert (await socket.connect())["type"] == "ack"  # type: ignore[index]
        async with httpx.AsyncClient(base_url=b) as http:
            out = await http.delete(
                "/v1/sessions/current", headers={"Authorization": f"Bearer {token}"}
            )
        assert out.status_code == 204
        assert await me(a, token) == 401 and await me(b, token) == 401
        # Signed out on b, the socket on a is closed with the reason.
        assert await socket.closed(wait=10) == (SESSION_ENDED, "signed_out")
        await socket.close()

        # Once the projection has the SessionClosed, losing the tombstone changes nothing.
        await closed_in_projection(database, digest)
        assert await client.delete(key) == 1
        assert await me(a, token) == 401 and await me(b, token) == 401
    finally:
        await client.aclose()
