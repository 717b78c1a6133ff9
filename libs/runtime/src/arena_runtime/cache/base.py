"""The cache/limits interface: rate limits, keys with a time to live, and pub/sub fan-out.

Two implementations satisfy it: Redis (``RedisCache``) for the distributed stack, where every
instance of the gateway shares one limit and one presence table, and an in-process one
(``MemoryCache``) for the embedded mode. One conformance suite (tests/runtime/cache) runs against
both.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

#: Keys and channels are short printable strings; Redis allows more, but nothing here needs it.
MAX_NAME_LENGTH = 512


class CacheError(Exception):
    """Base class of cache failures."""


class CacheUnavailableError(CacheError):
    """The cache's server cannot be reached (down, restarting, a network fault); nothing is known
    of what the call did. Callers answer "try again" rather than fail."""


class InvalidRequestError(CacheError, ValueError):
    """A malformed request (empty key, non-positive rate or TTL, cost above the burst, value not
    bytes); nothing was changed."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message received on a subscription."""

    channel: str
    data: bytes


class Subscription(abc.ABC):
    """Messages published to some channels after ``Cache.subscribe`` returned, in order."""

    @abc.abstractmethod
    async def get(self, wait: float | None = None) -> Message | None:
        """The next message, or None if none arrives within ``wait`` seconds (None: no limit)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop receiving; messages not yet read are dropped."""

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Message:
        message = await self.get()
        if message is None:
            raise StopAsyncIteration
        return message


class Cache(abc.ABC):
    """Rate limits, presence/session keys and fan-out shared by every instance of a service."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Connect (a no-op where there is nothing to connect to)."""

    @abc.abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Cache:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- rate limits -----------------------------------------------------------------------

    @abc.abstractmethod
    async def allow(self, key: str, rate: float, burst: float, cost: float = 1.0) -> bool:
        """Token bucket: take ``cost`` tokens from ``key``'s bucket if it holds that many.

        A bucket starts full with ``burst`` tokens and refills at ``rate`` tokens per second up
        to ``burst``. A refused request takes nothing.
        """

    # -- keys with a time to live ----------------------------------------------------------

    @abc.abstractmethod
    async def set(self, key: str, value: bytes, ttl: float, *, if_absent: bool = False) -> bool:
        """Store ``value`` for ``ttl`` seconds; with ``if_absent``, only if the key is not set.
        True if the value was stored."""

    @abc.abstractmethod
    async def get(self, key: str) -> bytes | None:
        """The value, or None if never set, deleted or expired."""

    @abc.abstractmethod
    async def touch(self, key: str, ttl: float) -> bool:
        """Make a live key expire ``ttl`` seconds from now; False if it is not set."""

    @abc.abstractmethod
    async def delete(self, key: str) -> bool:
        """Remove a key; True if it was set."""

    # -- fan-out ---------------------------------------------------------------------------

    @abc.abstractmethod
    async def publish(self, channel: str, data: bytes) -> int:
        """Send ``data`` to every current subscriber of ``channel``; returns how many got it."""

    @abc.abstractmethod
    async def subscribe(self, *channels: str) -> Subscription:
        """Subscribe to channels; messages published after this returns are all delivered."""


def check_name(kind: str, name: object) -> str:
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_LENGTH:
        raise InvalidRequestError(f"{kind} must be a string of 1-{MAX_NAME_LENGTH} characters")
    return name


def check_limit(key: str, rate: float, burst: float, cost: float) -> None:
    check_name("key", key)
    # Checked on every rate-limited message: the common case (three positive numbers) first.
    numbers = _is_number(rate) and _is_number(burst) and _is_number(cost)
    if not (numbers and rate > 0 and burst > 0 and cost > 0):
        for label, number in (("rate", rate), ("burst", burst), ("cost", cost)):
            if not _is_number(number) or number <= 0:
                raise InvalidRequestError(f"{label} must be a positive number, got {number!r}")
    if cost > burst:
        raise InvalidRequestError(f"cost {cost} exceeds burst {burst}: it could never be allowed")


def check_ttl(ttl: float) -> None:
    if not _is_number(ttl) or ttl < 0.001:
        raise InvalidRequestError(f"ttl must be at least 0.001 seconds, got {ttl!r}")


def check_value(value: object) -> None:
    if not isinstance(value, bytes):
        raise InvalidRequestError(f"value must be bytes, got {type(value).__name__}")


def check_channels(channels: tuple[str, ...]) -> None:
    if not channels:
        raise InvalidRequestError("subscribe needs at least one channel")
    for channel in channels:
        check_name("channel", channel)


def _is_number(value: object) -> bool:
    kind = type(value)
    if kind is float or kind is int:  # the common case, without the isinstance checks
        return math.isfinite(value)  # type: ignore[arg-type]
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
