"""Who is calling: guests, session tokens and the Principal every call resolves to.

A session token is 32 random bytes (URL-safe base64). The cache stores only its SHA-256, under
``session:<hash>``, with the principal as JSON and a time to live that every use renews; a leaked
cache dump therefore holds no usable token. Accounts (issue 5) add another way to obtain a
session and resolve to the same :class:`Principal`, with ``kind`` ``account``.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from arena_runtime.cache import Cache

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


class SessionStore:
    """Sessions in the shared cache, so every gateway instance resolves every token."""

    def __init__(self, cache: Cache, ttl_seconds: float) -> None:
        self.cache = cache
        self.ttl = ttl_seconds
        #: Asked for a token that is no guest's: the accounts' sessions (arena_gateway.accounts).
        self.fallback: Callable[[str], Awaitable[Principal | None]] | None = None

    async def issue(self, player_id: str, name: str, kind: PrincipalKind) -> tuple[Principal, str]:
        """A new session for this identity: (principal, token). The token is shown only once."""
        token = secrets.token_urlsafe(32)
        digest = token_hash(token)
        principal = Principal(player_id, name, kind, session_id=f"s_{digest[:16]}")
        await self.cache.set(f"session:{digest}", principal.to_json(), self.ttl)
        return principal, token

    async def new_guest(self) -> tuple[Principal, str]:
        return await self.issue(new_player_id(), new_guest_name(), PrincipalKind.GUEST)

    async def resolve(self, token: str) -> Principal | None:
        """The principal of a live token (its time to live renewed), or None."""
        if not token or len(token) > 256:
            return None
        key = f"session:{token_hash(token)}"
        raw = await self.cache.get(key)
        if raw is None:
            return await self.fallback(token) if self.fallback is not None else None
        await self.cache.touch(key, self.ttl)
        return Principal.from_json(raw)

    async def revoke(self, token: str) -> bool:
        return await self.cache.delete(f"session:{token_hash(token)}")
