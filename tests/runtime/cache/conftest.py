"""The cache conformance suite runs on the in-process cache (with a hand-moved clock) and on the
real Redis server (with real, short waits)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from arena_runtime.cache import Cache, MemoryCache
from arena_runtime.cache.redis import RedisCache


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Caches:
    """Two handles on one cache, as two instances of a service would hold, and a way to let
    time pass for it."""

    one: Cache
    two: Cache
    advance: Callable[[float], Awaitable[None]]


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def caches(request: pytest.FixtureRequest) -> AsyncIterator[Caches]:
    if request.param == "memory":
        clock = FakeClock()
        cache = MemoryCache(clock)

        async def advance(seconds: float) -> None:
            clock.now += seconds

        async with cache:
            yield Caches(cache, cache, advance)
        return
    url: str = request.getfixturevalue("redis_url")
    prefix = f"{request.getfixturevalue('redis_prefix')}{secrets.token_hex(4)}:"
    async with RedisCache(url, prefix) as one, RedisCache(url, prefix) as two:
        yield Caches(one, two, asyncio.sleep)


@pytest.fixture
def cache(caches: Caches) -> Cache:
    return caches.one
