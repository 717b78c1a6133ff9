"""The cache on Redis (redis.asyncio), shared by every instance of every service.

The token bucket is one Lua script, so taking tokens is atomic across instances, and it reads
Redis's own clock (``TIME``), so instances with skewed clocks still share one rate. A bucket
expires once it would be full again, which is the same as having no bucket. Every key and
channel is put under ``prefix`` so deployments (and test sessions) can share a server.

The gateway asks ``allow`` before every client message, so these calls are sent together: the
calls made while one round trip is out go in the next, as one pipeline (one write, one read).
On the online bench the limiter's writes alone were a tenth of the gateway's CPU.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar, cast

import redis.asyncio as aioredis
import redis.exceptions

from arena_runtime.cache.base import (
    Cache,
    CacheError,
    CacheUnavailableError,
    Message,
    Subscription,
    check_channels,
    check_limit,
    check_name,
    check_ttl,
    check_value,
)

# KEYS[1] bucket; ARGV rate, burst, cost. Returns 1 if the tokens were taken, else 0.
TOKEN_BUCKET = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
elseif now > at then
  tokens = math.min(burst, tokens + (now - at) * rate)
end
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens),
           'at', string.format('%.6f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1)
return allowed
"""

# Confirmation of SUBSCRIBE must arrive before subscribe() returns; this bounds the wait.
SUBSCRIBE_TIMEOUT_S = 10.0


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


P = ParamSpec("P")
T = TypeVar("T")
#: What a call raises when the server is gone: the connection refused or lost, or no answer.
UNREACHABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


def _typed(
    call: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, Coroutine[Any, Any, T]]:
    """Raise CacheUnavailableError, not the client's own exceptions, when Redis is unreachable."""

    @functools.wraps(call)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await call(*args, **kwargs)
        except UNREACHABLE as exc:
            raise CacheUnavailableError(f"Redis cannot be reached: {type(exc).__name__}") from exc

    return wrapper


class RedisCache(Cache):
    def __init__(self, url: str, prefix: str = "arena:") -> None:
        self.url = url
        self.prefix = prefix
        self._client: aioredis.Redis | None = None
        self._bucket: Any = None
        #: ``allow`` calls waiting for the next pipeline: (bucket key, script args, answer).
        self._asking: list[tuple[str, list[str], asyncio.Future[bool]]] = []
        self._asker: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._client is not None:
            return
        client = aioredis.from_url(self.url)
        try:
            await client.ping()
        except BaseException:
            # Unreachable: close the pool, and stay unstarted so that a later start tries again.
            await client.aclose()
            raise
        self._bucket = client.register_script(TOKEN_BUCKET)
        self._client = client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    @property
    def client(self) -> aioredis.Redis:
        if self._client is None:
            raise CacheError("the cache is not started")
        return self._client

    def _key(self, kind: str, key: str) -> str:
        return f"{self.prefix}{kind}:{key}"

    @_typed
    async def allow(self, key: str, rate: float, burst: float, cost: float = 1.0) -> bool:
        check_limit(key, rate, burst, cost)
        self.client  # noqa: B018  (raises if not started)
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        args = [repr(rate), repr(burst), repr(cost)]
        self._asking.append((self._key("rate", key), args, answer))
        if self._asker is None:
            self._asker = asyncio.create_task(self._ask())
        return await answer

    async def _ask(self) -> None:
        """Send the waiting ``allow`` calls, a pipeline at a time, until none are left."""
        try:
            while self._asking:
                batch, self._asking = self._asking, []
                try:
                    async with self.client.pipeline(transaction=False) as pipe:
                        for key, args, _ in batch:
                            await self._bucket(keys=[key], args=args, client=pipe)
                        results = await pipe.execute()
                except Exception as exc:  # every caller of this batch gets the error
                    for *_, answer in batch:
                        if not answer.done():
                            answer.set_exception(exc)
                    continue
                for (*_, answer), allowed in zip(batch, results, strict=True):
                    if not answer.done():  # the caller may have been cancelled meanwhile
                        answer.set_result(bool(allowed))
        finally:
            self._asker = None

    @_typed
    async def set(self, key: str, value: bytes, ttl: float, *, if_absent: bool = False) -> bool:
        check_name("key", key)
        check_value(value)
        check_ttl(ttl)
        stored = await self.client.set(self._key("key", key), value, px=_ms(ttl), nx=if_absent)
        return bool(stored)

    @_typed
    async def get(self, key: str) -> bytes | None:
        check_name("key", key)
        value = await self.client.get(self._key("key", key))
        # Never decoded: the client is made without decode_responses.
        return cast(bytes | None, value)

    @_typed
    async def touch(self, key: str, ttl: float) -> bool:
        check_name("key", key)
        check_ttl(ttl)
        return bool(await self.client.pexpire(self._key("key", key), _ms(ttl)))

    @_typed
    async def delete(self, key: str) -> bool:
        check_name("key", key)
        return bool(await self.client.delete(self._key("key", key)))

    @_typed
    async def publish(self, channel: str, data: bytes) -> int:
        check_name("channel", channel)
        check_value(data)
        return int(await self.client.publish(self.prefix + channel, data))

    @_typed
    async def subscribe(self, *channels: str) -> Subscription:
        check_channels(channels)
        pubsub = self.client.pubsub()
        names = list(dict.fromkeys(self.prefix + c for c in channels))
        try:
            await pubsub.subscribe(*names)
            await _confirmed(pubsub, len(names))
        except BaseException:
            await pubsub.aclose()  # type: ignore[no-untyped-call]
            raise
        return _RedisSubscription(pubsub, len(self.prefix))


async def _confirmed(pubsub: Any, count: int) -> None:
    """Wait for the server to confirm every channel, so no later publish can be missed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SUBSCRIBE_TIMEOUT_S
    seen = 0
    while seen < count:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise CacheError(
                f"Redis did not confirm the subscription within {SUBSCRIBE_TIMEOUT_S}s"
            )
        message = await pubsub.get_message(timeout=remaining)
        if message is not None and message["type"] == "subscribe":
            seen += 1


class _RedisSubscription(Subscription):
    def __init__(self, pubsub: Any, prefix_length: int) -> None:
        self._pubsub = pubsub
        self._prefix_length = prefix_length
        self._closed = False

    async def get(self, wait: float | None = None) -> Message | None:
        loop = asyncio.get_running_loop()
        deadline = None if wait is None else loop.time() + wait
        while not self._closed:
            remaining = 1.0 if deadline is None else deadline - loop.time()
            if remaining < 0:
                return None
            message = await self._pubsub.get_message(
                ignore_subscribe_messages=True, timeout=remaining
            )
            if message is not None and message["type"] == "message":
                channel = message["channel"]
                if isinstance(channel, bytes):
                    channel = channel.decode()
                return Message(channel[self._prefix_length :], message["data"])
        return None

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._pubsub.aclose()
