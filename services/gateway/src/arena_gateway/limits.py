"""What the gateway refuses before anything reaches a service: too many messages, too large a
message, a foreign Origin (a game's own checks are its client's: ``arena_games.<game>.client``).

Each refusal is a :class:`GatewayError` with its own code; the connection and the game go on.
The rate limit lives in the shared cache (Redis when distributed), so a player's budget is one
budget however many connections or gateway instances they use.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from arena_runtime import telemetry
from arena_runtime.cache import Cache

from arena_gateway.protocol import ErrorCode, GatewayError

log = telemetry.get_logger(__name__)

__all__ = [
    "RateLimiter",
    "origin_allowed",
    "parse_origins",
]


#: How often a cache outage is logged again while it lasts.
CACHE_DOWN_WARNING_SECONDS = 60.0


class RateLimiter:
    """``rate`` messages a second per player, with a burst of one second's worth."""

    def __init__(self, cache: Cache, rate: float) -> None:
        self.cache = cache
        self.rate = rate
        self.burst = max(1.0, rate)
        #: Monotonic time of the last warning that the cache cannot be asked (once per minute).
        self._warned = -CACHE_DOWN_WARNING_SECONDS

    async def check(self, player_id: str) -> None:
        """Refuse a message over the player's rate. If the cache cannot be asked (Redis is
        down), the message passes: a game goes on without Redis, and an outage must not refuse
        every move; the fault is logged at WARNING, at most once a minute."""
        try:
            allowed = await self.cache.allow(f"ws-msg:{player_id}", self.rate, self.burst)
        except Exception as exc:
            now = time.monotonic()
            if now - self._warned >= CACHE_DOWN_WARNING_SECONDS:
                self._warned = now
                log.warning(
                    "the cache cannot be reached: client messages are not rate-limited until it "
                    "is back, and sign-ins fail. Check Redis (ARENA_REDIS_URL; "
                    "docs/operations.md#redis-is-flushed)",
                    error=f"{type(exc).__name__}: {exc}",
                )
            return
        if not allowed:
            raise GatewayError(
                ErrorCode.RATE_LIMITED, f"more than {self.rate:g} messages a second; dropped"
            )


def parse_origins(setting: str) -> frozenset[str]:
    return frozenset(o.strip().rstrip("/") for o in setting.split(",") if o.strip())


def origin_allowed(
    origin: str | None, allowed: frozenset[str], host: str | None = None, scheme: str = "http"
) -> bool:
    """A browser always sends Origin: it must be the gateway's own (the page it serves, see
    arena_gateway.browser) or on the list (or the list holds ``*``). Clients that send none
    (servers, tools) are not browsers, whom the check protects, and pass."""
    if origin is None:
        return True
    return same_origin(origin, host, scheme) or "*" in allowed or origin.rstrip("/") in allowed


def same_origin(origin: str | None, host: str | None, scheme: str) -> bool:
    """``origin`` is the origin of this very request: same host and port, same security."""
    if not origin or not host:
        return False
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    secure = scheme in ("https", "wss")
    return parts.scheme == ("https" if secure else "http") and parts.netloc.lower() == host.lower()
