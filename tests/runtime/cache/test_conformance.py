"""One behaviour for both caches: token buckets, keys with a TTL, and pub/sub fan-out."""

from __future__ import annotations

import asyncio
import math

import pytest
from arena_runtime.cache import Cache, InvalidRequestError, Message

from tests.runtime.cache.conftest import Caches

SLOW = 0.001  # tokens per second: no refill within a test


# -- rate limits ---------------------------------------------------------------------------


async def test_a_bucket_allows_its_burst_then_refuses(cache: Cache) -> None:
    results = [await cache.allow("ip:1", rate=SLOW, burst=3) for _ in range(5)]
    assert results == [True, True, True, False, False]
    assert await cache.allow("ip:2", rate=SLOW, burst=3)  # another key, another bucket


async def test_a_cost_takes_that_many_tokens_and_a_refusal_takes_none(cache: Cache) -> None:
    assert await cache.allow("k", rate=SLOW, burst=5, cost=3)
    assert not await cache.allow("k", rate=SLOW, burst=5, cost=3)  # 2 left: refused
    assert await cache.allow("k", rate=SLOW, burst=5, cost=2)  # the refusal took nothing
    assert not await cache.allow("k", rate=SLOW, burst=5, cost=0.5)


async def test_tokens_come_back_at_the_rate(caches: Caches) -> None:
    cache = caches.one
    assert await cache.allow("k", rate=10, burst=1)
    assert not await cache.allow("k", rate=10, burst=1)
    await caches.advance(0.15)
    assert await cache.allow("k", rate=10, burst=1)


async def test_a_bucket_never_holds_more_than_its_burst(caches: Caches) -> None:
    cache = caches.one
    assert await cache.allow("k", rate=5, burst=2)
    await caches.advance(0.5)  # 2.5 tokens' worth of time: capped at 2
    assert await cache.allow("k", rate=5, burst=2)
    assert await cache.allow("k", rate=5, burst=2)
    assert not await cache.allow("k", rate=5, burst=2)


async def test_instances_share_one_bucket_and_take_tokens_atomically(caches: Caches) -> None:
    calls = [
        (caches.one if i % 2 else caches.two).allow("shared", rate=SLOW, burst=10)
        for i in range(40)
    ]
    results = await asyncio.gather(*calls)
    assert sum(results) == 10


@pytest.mark.parametrize(
    ("key", "rate", "burst", "cost"),
    [
        ("", 1, 1, 1),
        ("k", 0, 1, 1),
        ("k", -1, 1, 1),
        ("k", math.nan, 1, 1),
        ("k", 1, 0, 1),
        ("k", 1, math.inf, 1),
        ("k", 1, 2, 0),
        ("k", 1, 2, 3),
        ("k", True, 2, 1),
    ],
)
async def test_bad_limits_are_refused_and_change_nothing(
    cache: Cache, key: str, rate: float, burst: float, cost: float
) -> None:
    with pytest.raises(InvalidRequestError):
        await cache.allow(key, rate=rate, burst=burst, cost=cost)
    # The bucket of "k" was never touched: it is still full.
    assert await cache.allow("k", rate=SLOW, burst=2, cost=2)


# -- keys with a time to live --------------------------------------------------------------


async def test_set_get_delete(cache: Cache) -> None:
    assert await cache.get("session:a") is None
    assert await cache.set("session:a", b"gw-1", ttl=60)
    assert await cache.get("session:a") == b"gw-1"
    assert await cache.set("session:a", b"gw-2", ttl=60)
    assert await cache.get("session:a") == b"gw-2"
    assert await cache.delete("session:a")
    assert not await cache.delete("session:a")
    assert await cache.get("session:a") is None


async def test_set_if_absent_claims_a_key_once(caches: Caches) -> None:
    assert await caches.one.set("lock", b"one", ttl=60, if_absent=True)
    assert not await caches.two.set("lock", b"two", ttl=60, if_absent=True)
    assert await caches.two.get("lock") == b"one"


async def test_keys_expire_and_touch_extends_them(caches: Caches) -> None:
    cache = caches.one
    await cache.set("short", b"x", ttl=0.2)
    await cache.set("kept", b"y", ttl=0.3)
    await caches.advance(0.15)
    assert await cache.touch("kept", ttl=0.5)
    await caches.advance(0.25)  # "short" is past its TTL, "kept" was moved on
    assert await cache.get("short") is None
    assert await cache.get("kept") == b"y"
    assert not await cache.touch("short", ttl=1)
    assert not await cache.touch("never", ttl=1)
    assert await cache.set("short", b"z", ttl=1) is not False  # an expired key can be set again


async def test_an_expired_key_can_be_claimed_again(caches: Caches) -> None:
    cache = caches.one
    assert await cache.set("seat", b"a", ttl=0.1, if_absent=True)
    await caches.advance(0.2)
    assert await cache.set("seat", b"b", ttl=1, if_absent=True)
    assert await cache.get("seat") == b"b"


@pytest.mark.parametrize(
    ("key", "value", "ttl"),
    [("", b"v", 1), ("k", "text", 1), ("k", b"v", 0), ("k", b"v", -1), ("k", b"v", math.nan)],
)
async def test_bad_sets_are_refused_and_change_nothing(
    cache: Cache, key: str, value: bytes, ttl: float
) -> None:
    await cache.set("k", b"before", ttl=60)
    with pytest.raises(InvalidRequestError):
        await cache.set(key, value, ttl=ttl)
    assert await cache.get("k") == b"before"
    with pytest.raises(InvalidRequestError):
        await cache.touch("k", ttl=0)


async def test_limits_and_keys_do_not_share_names(cache: Cache) -> None:
    await cache.set("same", b"v", ttl=60)
    assert await cache.allow("same", rate=SLOW, burst=1)
    assert await cache.get("same") == b"v"


# -- fan-out -------------------------------------------------------------------------------


async def test_every_subscriber_gets_every_message_in_order(caches: Caches) -> None:
    async with (
        await caches.one.subscribe("room:1") as a,
        await caches.two.subscribe("room:1", "room:2") as b,
    ):
        assert await caches.one.publish("room:1", b"hello") == 2
        for i in range(20):
            await caches.two.publish("room:1", str(i).encode())
        assert await caches.one.publish("room:2", b"only b") == 1
        for sub in (a, b):
            assert await sub.get(wait=5) == Message("room:1", b"hello")
            assert [(await sub.get(wait=5)) for _ in range(20)] == [
                Message("room:1", str(i).encode()) for i in range(20)
            ]
        assert await b.get(wait=5) == Message("room:2", b"only b")
        assert await a.get(wait=0.05) is None


async def test_a_closed_subscription_receives_nothing(cache: Cache) -> None:
    sub = await cache.subscribe("gone")
    await sub.close()
    assert await cache.publish("gone", b"x") == 0
    assert await sub.get(wait=0.05) is None
    assert await cache.publish("nobody", b"x") == 0


async def test_subscriptions_iterate(cache: Cache) -> None:
    async with await cache.subscribe("feed") as sub:
        for i in range(3):
            await cache.publish("feed", bytes([i]))
        received = []
        async for message in sub:
            received.append(message.data)
            if len(received) == 3:
                break
        assert received == [b"\x00", b"\x01", b"\x02"]


async def test_bad_channels_are_refused(cache: Cache) -> None:
    with pytest.raises(InvalidRequestError):
        await cache.subscribe()
    with pytest.raises(InvalidRequestError):
        await cache.subscribe("")
    with pytest.raises(InvalidRequestError):
        await cache.publish("c", "text")  # type: ignore[arg-type]
