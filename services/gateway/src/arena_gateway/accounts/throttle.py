"""Slowing password guessing down without handing anyone a way to lock an owner out.

Attempts are limited per (username, client address) and per address, never per username alone:
a stranger's wrong guesses from their address make only their own attempts wait, and the owner
signs in from theirs as usual. Each key has a token bucket (``ARENA_SIGN_IN_RATE`` and
``ARENA_SIGN_IN_BURST``, ten times both per address), taken atomically in the shared cache so
concurrent requests cannot slip through together, and a count of failures in a row: past the
burst, each failure makes the next attempt on that key wait ``ARENA_SIGN_IN_BACKOFF_SECONDS``,
doubled per further failure up to ``ARENA_SIGN_IN_BACKOFF_MAX_SECONDS``. A success clears its
(username, address) count; an address's count only fades, after ``FAILURES_KEPT_SECONDS``
without a failure, so owning one account does not reset guessing at others.

Counting a failure is a read then a write: two failures at the same instant may count as one,
which only the token bucket's burst bounds. That is a little less slowing, never a lock.
"""

from __future__ import annotations

from arena_runtime.cache import Cache
from arena_runtime.config import Settings

from arena_gateway.accounts.errors import AccountError, AccountErrorCode

#: How long failures in a row are remembered after the last one.
FAILURES_KEPT_SECONDS = 86_400.0
#: An address's rate, burst and failures allowed, as a multiple of a (username, address)'s: a
#: household or a school shares one.
ADDRESS_FACTOR = 10


class SignInThrottle:
    def __init__(self, cache: Cache, settings: Settings) -> None:
        self.cache = cache
        self.settings = settings

    def _keys(self, username: str, address: str) -> list[tuple[str, int]]:
        """(key, the multiple of the rate, burst and failures allowed it has): the pair first."""
        pair = f"sign-in:{username.lower()[:64]}@{address}"
        return [(pair, 1), (f"sign-in:@{address}", ADDRESS_FACTOR)]

    async def check(self, username: str, address: str) -> None:
        """Refuse (``rate_limited``, with how long to wait at most) or take one attempt."""
        for key, _ in self._keys(username, address):
            # A wait is a key that lives as long as the wait, holding its length.
            held = await self.cache.get(f"{key}:wait")
            if held is not None:
                raise _refused(float(held))
        for key, factor in self._keys(username, address):
            rate, burst = self.settings.sign_in_rate * factor, self.settings.sign_in_burst * factor
            if not await self.cache.allow(f"{key}:bucket", rate, burst):
                raise _refused(1 / rate)

    async def failed(self, username: str, address: str) -> None:
        for key, factor in self._keys(username, address):
            failures = int(await self.cache.get(f"{key}:failures") or 0) + 1
            await self.cache.set(f"{key}:failures", b"%d" % failures, FAILURES_KEPT_SECONDS)
            beyond = failures - self.settings.sign_in_burst * factor
            if beyond >= 0:
                wait = min(
                    self.settings.sign_in_backoff_max_seconds,
                    self.settings.sign_in_backoff_seconds * 2 ** min(beyond, 64),
                )
                await self.cache.set(f"{key}:wait", repr(wait).encode(), wait)

    async def succeeded(self, username: str, address: str) -> None:
        key, _ = self._keys(username, address)[0]
        await self.cache.delete(f"{key}:failures")
        await self.cache.delete(f"{key}:wait")


def _refused(wait: float) -> AccountError:
    return AccountError(
        AccountErrorCode.RATE_LIMITED, "too many sign-in attempts; wait", retry_after=wait
    )
