"""What is particular to each implementation: Redis key layout and prefixes, the factory."""

from __future__ import annotations

import asyncio
import secrets
import socket
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from arena_runtime.cache import CacheError, MemoryCache, open_cache
from arena_runtime.cache.redis import RedisCache
from arena_runtime.config import Settings


@pytest.mark.redis
async def test_prefixes_keep_deployments_apart(redis_url: str, redis_prefix: str) -> None:
    a_prefix = f"{redis_prefix}{secrets.token_hex(4)}:"
    b_prefix = f"{redis_prefix}{secrets.token_hex(4)}:"
    async with RedisCache(redis_url, a_prefix) as a, RedisCache(redis_url, b_prefix) as b:
        await a.set("player:1", b"online", ttl=60)
        assert await b.get("player:1") is None
        assert await a.allow("ip", rate=0.001, burst=1)
        assert await b.allow("ip", rate=0.001, burst=1)
        async with await b.subscribe("room") as sub:
            assert await a.publish("room", b"x") == 0
            assert await sub.get(wait=0.05) is None


@pytest.mark.redis
async def test_buckets_and_keys_expire_on_the_server(redis_url: str, redis_prefix: str) -> None:
    prefix = f"{redis_prefix}{secrets.token_hex(4)}:"
    raw = aioredis.from_url(redis_url)
    try:
        async with RedisCache(redis_url, prefix) as cache:
            await cache.allow("ip", rate=2, burst=10, cost=4)
            await cache.set("session", b"s", ttl=30)
        # A bucket lives until it would be full again: 4 tokens at 2/s is 2 s.
        assert 1900 <= await raw.pttl(f"{prefix}rate:ip") <= 2001
        assert 29_000 <= await raw.pttl(f"{prefix}key:session") <= 30_000
    finally:
        await raw.aclose()


async def test_a_cache_that_is_not_started_says_so() -> None:
    with pytest.raises(CacheError, match="not started"):
        await RedisCache("redis://127.0.0.1:1/0").get("k")


def test_the_settings_choose_the_cache(tmp_path: Path) -> None:
    assert isinstance(open_cache(Settings(data_dir=tmp_path)), MemoryCache)
    chosen = open_cache(
        Settings(data_dir=tmp_path, redis_url="redis://cache:6379/0", cache_prefix="blue:")
    )
    assert isinstance(chosen, RedisCache)
    assert (chosen.url, chosen.prefix) == ("redis://cache:6379/0", "blue:")


async def test_a_redis_cache_that_could_not_start_stays_unstarted() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        nothing_listens = sock.getsockname()[1]
    cache = RedisCache(f"redis://127.0.0.1:{nothing_listens}/0")
    with pytest.raises(aioredis.ConnectionError):
        await cache.start()
    with pytest.raises(CacheError, match="not started"):
        await cache.get("k")


@pytest.mark.redis
async def test_concurrent_allows_share_round_trips_and_keep_their_own_answers(
    redis_url: str, redis_prefix: str
) -> None:
    """Calls made while a round trip is out go together in the next pipeline: each still gets
    its own bucket's answer, in call order, and a caller that gave up costs the others nothing."""
    prefix = f"{redis_prefix}{secrets.token_hex(4)}:"
    async with RedisCache(redis_url, prefix) as cache:
        calls = [cache.allow("a", rate=0.001, burst=10) for _ in range(60)]
        calls += [cache.allow("b", rate=0.001, burst=3) for _ in range(20)]
        answers = await asyncio.gather(*calls)
        assert answers[:60] == [True] * 10 + [False] * 50
        assert answers[60:] == [True] * 3 + [False] * 17
        gone = asyncio.create_task(cache.allow("c", rate=0.001, burst=1))
        while True:  # until its call is queued for the next round trip
            if cache._asking:
                break
            await asyncio.sleep(0)
        gone.cancel()
        # Redis still took its token; the next caller is answered (refused), not left hanging.
        assert await asyncio.wait_for(cache.allow("c", rate=0.001, burst=1), 5) is False
        assert await cache.allow("d", rate=0.001, burst=1)  # and the cache goes on
