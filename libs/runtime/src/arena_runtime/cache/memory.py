"""The in-process cache of the embedded mode: the same behaviour as Redis, for one process.

Time comes from an injectable clock (monotonic seconds), so tests can move it by hand. Expired
keys and full buckets are forgotten lazily: on access, and in a sweep every few thousand writes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from arena_runtime.cache.base import (
    Cache,
    Message,
    Subscription,
    check_channels,
    check_limit,
    check_name,
    check_ttl,
    check_value,
)

SWEEP_EVERY = 4096


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float
    full_at: float  # past this the bucket is full again: same as no bucket


@dataclass(slots=True)
class _Entry:
    value: bytes
    expires_at: float


class MemoryCache(Cache):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._entries: dict[str, _Entry] = {}
        self._subscribers: dict[str, set[_MemorySubscription]] = {}
        self._writes = 0

    async def start(self) -> None:
        pass  # nothing to connect to

    async def close(self) -> None:
        for subscribers in list(self._subscribers.values()):
            for subscription in list(subscribers):
                await subscription.close()

    async def allow(self, key: str, rate: float, burst: float, cost: float = 1.0) -> bool:
        check_limit(key, rate, burst, cost)
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None or now >= bucket.full_at:
            tokens = float(burst)
        else:
            tokens = min(float(burst), bucket.tokens + max(0.0, now - bucket.at) * rate)
        allowed = tokens >= cost
        if allowed:
            tokens -= cost
        full_at = now + (burst - tokens) / rate
        if bucket is None:
            self._buckets[key] = _Bucket(tokens, now, full_at)
        else:  # in place: a player's bucket is taken from on every message
            bucket.tokens, bucket.at, bucket.full_at = tokens, now, full_at
        self._wrote()
        return allowed

    async def set(self, key: str, value: bytes, ttl: float, *, if_absent: bool = False) -> bool:
        check_name("key", key)
        check_value(value)
        check_ttl(ttl)
        if if_absent and self._live(key) is not None:
            return False
        self._entries[key] = _Entry(value, self._clock() + ttl)
        self._wrote()
        return True

    async def get(self, key: str) -> bytes | None:
        check_name("key", key)
        entry = self._live(key)
        return None if entry is None else entry.value

    async def touch(self, key: str, ttl: float) -> bool:
        check_name("key", key)
        check_ttl(ttl)
        entry = self._live(key)
        if entry is None:
            return False
        entry.expires_at = self._clock() + ttl
        return True

    async def delete(self, key: str) -> bool:
        check_name("key", key)
        existed = self._live(key) is not None
        self._entries.pop(key, None)
        return existed

    async def publish(self, channel: str, data: bytes) -> int:
        check_name("channel", channel)
        check_value(data)
        subscribers = self._subscribers.get(channel, set())
        for subscription in subscribers:
            subscription.deliver(Message(channel, data))
        return len(subscribers)

    async def subscribe(self, *channels: str) -> Subscription:
        check_channels(channels)
        subscription = _MemorySubscription(self, channels)
        for channel in channels:
            self._subscribers.setdefault(channel, set()).add(subscription)
        return subscription

    def _unsubscribe(self, subscription: _MemorySubscription) -> None:
        for channel in subscription.channels:
            subscribers = self._subscribers.get(channel)
            if subscribers is not None:
                subscribers.discard(subscription)
                if not subscribers:
                    del self._subscribers[channel]

    def _live(self, key: str) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and self._clock() >= entry.expires_at:
            del self._entries[key]
            return None
        return entry

    def _wrote(self) -> None:
        self._writes += 1
        if self._writes % SWEEP_EVERY == 0:
            now = self._clock()
            self._entries = {k: e for k, e in self._entries.items() if e.expires_at > now}
            self._buckets = {k: b for k, b in self._buckets.items() if b.full_at > now}


class _MemorySubscription(Subscription):
    def __init__(self, cache: MemoryCache, channels: tuple[str, ...]) -> None:
        self.channels = tuple(dict.fromkeys(channels))
        self._cache = cache
        self._queue: asyncio.Queue[Message] = asyncio.Queue()
        self._closed = False

    def deliver(self, message: Message) -> None:
        self._queue.put_nowait(message)

    async def get(self, wait: float | None = None) -> Message | None:
        if self._closed:
            return None
        try:
            return await asyncio.wait_for(self._queue.get(), wait)
        except TimeoutError:
            return None

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._cache._unsubscribe(self)
