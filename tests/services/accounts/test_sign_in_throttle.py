"""Sign-in guessing is slowed per (username, address) and per address, with a doubling wait, and
nobody can lock an owner out from another address: on the in-process cache (time moved by hand)
and on the real Redis (real, short waits), as the cache conformance suite runs."""

from __future__ import annotations

import pytest
from arena_gateway.accounts.errors import AccountError, AccountErrorCode
from arena_gateway.accounts.throttle import ADDRESS_FACTOR, SignInThrottle
from arena_runtime.config import Settings

from tests.runtime.cache.conftest import Caches, caches  # noqa: F401  (the fixture)

BURST = 5
#: The first wait after BURST failures; the token bucket (rate) is set out of the way, so what
#: is seen is the backoff alone.
BACKOFF = 0.2
SETTINGS = Settings(
    sign_in_rate=1000,
    sign_in_burst=BURST,
    sign_in_backoff_seconds=BACKOFF,
    sign_in_backoff_max_seconds=BACKOFF * 4,
)


@pytest.fixture
def throttle(caches: Caches) -> SignInThrottle:  # noqa: F811  (the fixture imported above)
    return SignInThrottle(caches.one, SETTINGS)


async def attempt(throttle: SignInThrottle, username: str, address: str) -> float | None:
    """None if the attempt may go on, else how long the caller is told to wait."""
    try:
        await throttle.check(username, address)
    except AccountError as exc:
        assert exc.code is AccountErrorCode.RATE_LIMITED
        assert exc.retry_after is not None
        return exc.retry_after
    return None


async def guess(throttle: SignInThrottle, username: str, address: str) -> float | None:
    """A wrong password, if the throttle lets it be tried."""
    wait = await attempt(throttle, username, address)
    if wait is None:
        await throttle.failed(username, address)
    return wait


async def test_a_stranger_never_locks_the_owner_out(throttle: SignInThrottle) -> None:
    refused = [await guess(throttle, "alice", "203.0.113.7") for _ in range(3 * BURST)]
    assert refused[:BURST] == [None] * BURST and all(refused[BURST:])  # the stranger waits
    assert await attempt(throttle, "alice", "198.51.100.1") is None  # the owner does not
    await throttle.succeeded("alice", "198.51.100.1")
    assert await attempt(throttle, "ALICE", "203.0.113.7")  # and the stranger still waits


async def test_each_failure_past_the_burst_doubles_the_wait(
    throttle: SignInThrottle,
    caches: Caches,  # noqa: F811
) -> None:
    for _ in range(BURST):
        assert await guess(throttle, "bob", "192.0.2.1") is None
    waits = []
    for _ in range(4):
        wait = await attempt(throttle, "bob", "192.0.2.1")
        assert wait is not None
        waits.append(wait)
        await caches.advance(wait + 0.01)  # the whole wait told, from before it was told
        assert await guess(throttle, "bob", "192.0.2.1") is None
    # 0.2, 0.4, 0.8, then the maximum (0.8); each told while the whole wait was ahead.
    expected = [BACKOFF, 2 * BACKOFF, 4 * BACKOFF, 4 * BACKOFF]
    assert [round(w / BACKOFF) for w in waits] == [round(e / BACKOFF) for e in expected]


async def test_a_success_clears_the_failures_of_its_username_and_address(
    throttle: SignInThrottle,
    caches: Caches,  # noqa: F811
) -> None:
    for _ in range(BURST - 1):
        await guess(throttle, "carol", "192.0.2.2")
    await throttle.succeeded("carol", "192.0.2.2")
    await caches.advance(BURST / SETTINGS.sign_in_rate)  # the token bucket refilled
    for _ in range(BURST):  # a full allowance of failures again
        assert await guess(throttle, "carol", "192.0.2.2") is None
    assert await attempt(throttle, "carol", "192.0.2.2")


async def test_one_address_guessing_many_names_is_slowed_on_every_name(
    throttle: SignInThrottle,
) -> None:
    names = [f"user{i}" for i in range(ADDRESS_FACTOR * BURST)]
    for name in names:  # one guess per name: no (username, address) ever waits
        assert await guess(throttle, name, "192.0.2.3") is None
    assert await attempt(throttle, "someone_else", "192.0.2.3")
    assert await attempt(throttle, "someone_else", "192.0.2.4") is None
