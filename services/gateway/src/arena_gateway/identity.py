"""Who is calling: guests, session tokens and the Principal every call resolves to.

A session token is 32 random bytes (URL-safe base64). The cache stores only its SHA-256, under
``session:<hash>``, with the principal as JSON and a time to live that every use renews; a leaked
cache dump therefore holds no usable token. Accounts (issue 5) add another way to obtain a
session and resolve to the same :class:`Principal`, with ``kind`` ``account``.

A guest's session is also recorded in the log (a :class:`GuestJournal`, the accounts' streams):
opened before its token is shown, its recorded end moved forward while it is used (at most every
``RENEW_FRACTION`` of its lifetime), closed at sign-out. A token the cache does not know (a
restarted process, a Redis that lost its data) is looked up there, so a guest's session outlives
any restart for its whole lifetime: up to ``ttl / RENEW_FRACTION`` longer, never shorter.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from arena_runtime import telemetry
from arena_runtime.cache import Cache

log = telemetry.get_logger(__name__)

#: A guest session's recorded end is moved forward when it lags the live one by this fraction
#: of the session's lifetime (1 h of 24 h): one event per session and hour of use at most.
RENEW_FRACTION = 24

#: Guest names are Guest_ and four characters of this alphabet (no 0/O/1/I/L to misread).
GUEST_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
GUEST_PREFIX = "Guest_"


class PrincipalKind(StrEnum):
    GUEST = "guest"
    ACCOUNT = "account"


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller as every HTTP route and WebSocket message sees it."""

    player_id: str
    name: str
    kind: PrincipalKind
    #: Stable for the life of the token: the prefix of command ids (``<session id>:<message id>``),
    #: so a message retried after a reconnect is the same command.
    session_id: str

    def to_json(self) -> bytes:
        data = {
            "player_id": self.player_id,
            "name": self.name,
            "kind": self.kind.value,
            "session_id": self.session_id,
        }
        return json.dumps(data, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Principal:
        data = json.loads(raw)
        return cls(data["player_id"], data["name"], PrincipalKind(data["kind"]), data["session_id"])


def is_guest_name(name: str) -> bool:
    suffix = name.removeprefix(GUEST_PREFIX)
    return (
        name.startswith(GUEST_PREFIX)
        and len(suffix) == 4
        and all(c in GUEST_ALPHABET for c in suffix)
    )


def new_player_id() -> str:
    return f"p_{uuid.uuid4().hex}"


def new_guest_name() -> str:
    return GUEST_PREFIX + "".join(secrets.choice(GUEST_ALPHABET) for _ in range(4))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class GuestJournal(Protocol):
    """Where guests' sessions are recorded (arena_gateway.accounts.service.Accounts)."""

    async def guest_opened(self, principal: Principal, digest: str, until_ms: int) -> None: ...

    async def guest_reopened(self, principal: Principal, digest: str, until_ms: int) -> None: ...

    async def guest_renewed(self, session_id: str, until_ms: int) -> None: ...

    async def guest_closed(self, session_id: str, reason: str) -> None: ...

    async def guest_session(self, digest: str) -> tuple[Principal, int] | None:
        """The open guest session of this token hash and its recorded end, or None."""


class SessionStore:
    """Sessions in the shared cache, so every gateway instance resolves every token; guests'
    also recorded in the log when a journal is attached."""

    def __init__(self, cache: Cache, ttl_seconds: float, clock: Callable[[], int] = now_ms) -> None:
        self.cache = cache
        self.ttl = ttl_seconds
        self.clock = clock
        #: Asked for a token that is no guest's: the accounts' sessions (arena_gateway.accounts).
        self.fallback: Callable[[str], Awaitable[Principal | None]] | None = None
        self.journal: GuestJournal | None = None

    @property
    def renew_ms(self) -> int:
        return int(self.ttl * 1000 / RENEW_FRACTION)

    async def issue(self, player_id: str, name: str, kind: PrincipalKind) -> tuple[Principal, str]:
        """A new session for this identity: (principal, token). The token is shown only once,
        after the session is in the log (a crash after that loses nothing acknowledged)."""
        token = secrets.token_urlsafe(32)
        digest = token_hash(token)
        principal = Principal(player_id, name, kind, session_id=f"s_{digest[:16]}")
        until = self.clock() + int(self.ttl * 1000)
        if self.journal is not None and kind is PrincipalKind.GUEST:
            await self.journal.guest_opened(principal, digest, until)
        await self._cache(digest, principal, until, self.ttl)
        return principal, token

    async def _cache(self, digest: str, principal: Principal, until: int, ttl: float) -> None:
        value = json.loads(principal.to_json())
        value["until_ms"] = until  # the end recorded in the log
        raw = json.dumps(value, separators=(",", ":")).encode()
        await self.cache.set(f"session:{digest}", raw, ttl)

    async def new_guest(self) -> tuple[Principal, str]:
        return await self.issue(new_player_id(), new_guest_name(), PrincipalKind.GUEST)

    async def resolve(self, token: str) -> Principal | None:
        """The principal of a live token (its time to live renewed), or None."""
        if not token or len(token) > 256:
            return None
        digest = token_hash(token)
        key = f"session:{digest}"
        raw = await self.cache.get(key)
        if raw is None:
            recovered = await self._recover(digest)
            if recovered is not None:
                return recovered
            return await self.fallback(token) if self.fallback is not None else None
        await self.cache.touch(key, self.ttl)
        principal = Principal.from_json(raw)
        if self.journal is not None and principal.kind is PrincipalKind.GUEST:
            await self._renew(digest, principal, json.loads(raw).get("until_ms"))
        return principal

    async def _recover(self, digest: str) -> Principal | None:
        """A guest's session from the log, for a token the cache lost."""
        if self.journal is None:
            return None
        found = await self.journal.guest_session(digest)
        if found is None:
            return None
        principal, until = found
        # The recorded end lags the live one by up to renew_ms: honoured up to that much later.
        remaining = (until + self.renew_ms - self.clock()) / 1000
        if remaining <= 0:
            return None
        await self._cache(digest, principal, until, remaining)
        await self._renew(digest, principal, until)
        return principal

    async def _renew(self, digest: str, principal: Principal, until: int | None) -> None:
        """Move the recorded end forward if it lags the live one by renew_ms or more."""
        assert self.journal is not None
        live = self.clock() + int(self.ttl * 1000)
        if until is not None and live - until < self.renew_ms:
            return
        try:
            if until is None:  # cached before sessions were recorded: record it now
                await self.journal.guest_opened(principal, digest, live)
            else:
                await self.journal.guest_renewed(principal.session_id, live)
            await self._cache(digest, principal, live, self.ttl)
        except Exception:  # the log is down: the cache still has it; tried again next use
            log.exception("a guest session's renewal was not recorded")

    async def revoke(self, token: str) -> bool:
        """Delete the token from the cache, atomically (True if this call deleted it). The
        journal keeps it until :meth:`closed` is called."""
        return await self.cache.delete(f"session:{token_hash(token)}")

    async def put_back(self, token: str, principal: Principal) -> None:
        """Open again a session an upgrade ended (the upgrade failed), in the log and the cache."""
        digest = token_hash(token)
        until = self.clock() + int(self.ttl * 1000)
        if self.journal is not None and principal.kind is PrincipalKind.GUEST:
            await self.journal.guest_reopened(principal, digest, until)
        await self._cache(digest, principal, until, self.ttl)

    async def closed(self, principal: Principal, reason: str) -> None:
        """Record a guest's session as ended, so no restart brings it back."""
        if self.journal is not None and principal.kind is PrincipalKind.GUEST:
            await self.journal.guest_closed(principal.session_id, reason)
