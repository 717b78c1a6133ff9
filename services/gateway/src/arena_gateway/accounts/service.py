"""What the accounts routes do: register, upgrade a guest, sign in and out, resolve a token.

Every change is a command to the account's stream, answered by the accounts worker and awaited
in the log (``Hub.send``); every read for authentication is the ``accounts`` projection.

Sessions. A sign-in appends ``SessionOpened`` (token hash, absolute expiry) and caches the
principal under ``account-session:<hash>`` until that expiry. A token is resolved from the cache,
and on a miss (an evicted key, a restarted Redis) from the projection. Sign-out appends
``SessionClosed`` and overwrites the cache key with a tombstone that lives until the session
would have expired, so every gateway instance refuses the token at once (they share the cache)
and a projection that has not yet read the ``SessionClosed`` cannot bring it back.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from arena_runtime import topics
from arena_runtime.cache import Cache
from arena_runtime.config import Settings
from arena_runtime.envelope import new_command
from arena_runtime.proto_gen.arena.v1 import accounts_pb2 as pb
from arena_runtime.schemas.accounts import account_stream, guest_stream
from arena_runtime.streams import StreamRunner
from google.protobuf.message import Message
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from arena_gateway.accounts.credentials import (
    check_password,
    check_username,
    hash_password,
    verify_password,
)
from arena_gateway.accounts.errors import AccountError, AccountErrorCode
from arena_gateway.accounts.projection import AccountRow, find_account, find_session
from arena_gateway.accounts.stream import Account
from arena_gateway.accounts.throttle import SignInThrottle
from arena_gateway.hub import Hub, Outcome
from arena_gateway.identity import (
    Principal,
    PrincipalKind,
    SessionStore,
    new_player_id,
    token_hash,
)
from arena_gateway.protocol import GatewayError

CACHE_PREFIX = "account-session:"
CLOSED = b"closed"
SIGN_OUT = "sign_out"


class SessionEnd(StrEnum):
    """Why a session's open WebSockets are closed (the close reason of docs/protocol.md)."""

    SIGNED_OUT = "signed_out"
    ENDED = "session_ended"
    UPGRADED = "upgraded"


#: Told the id of a session that just ended and why: closes its sockets on every instance.
SessionEnded = Callable[[str, str], Awaitable[None]]


async def _nobody(session_id: str, reason: str) -> None:
    pass


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class SignedIn:
    principal: Principal
    token: str
    expires_at_ms: int


class Accounts:
    def __init__(
        self,
        settings: Settings,
        hub: Hub,
        cache: Cache,
        guests: SessionStore,
        db: async_sessionmaker[AsyncSession],
        runner: StreamRunner[Account],
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.settings = settings
        self.hub = hub
        self.cache = cache
        self.guests = guests
        self.db = db
        self.runner = runner
        self.clock = clock
        self.throttle = SignInThrottle(cache, settings)
        self.session_ended: SessionEnded = _nobody

    # -- registration ----------------------------------------------------------------------

    async def register(self, username: str, password: str, client: str) -> SignedIn:
        check_username(username)
        check_password(password)
        await self._limit_registrations(client)
        principal = await self._create(username, password, new_player_id(), "")
        return await self._open_session(principal)

    async def upgrade(
        self, guest: Principal, guest_token: str, username: str, password: str, client: str
    ) -> SignedIn:
        """Make a guest an account with the guest's own player id (its games stay its own).

        The guest's session is consumed first, atomically: closed in its stream of the log (the
        stream decides one CloseSession; the cache alone would not do, since a token the cache
        has lost is found again in the log), then deleted from the cache. So two upgrades racing
        with one guest token cannot give one player id to two accounts; if the account cannot be
        created the guest session is opened again.
        """
        if guest.kind is not PrincipalKind.GUEST:
            raise AccountError(AccountErrorCode.NOT_A_GUEST, "only a guest can be upgraded")
        check_username(username)
        check_password(password)
        await self._limit_registrations(client)
        if not await self._consume_guest(guest, guest_token):
            raise AccountError(AccountErrorCode.NOT_A_GUEST, "that guest session is gone")
        try:
            principal = await self._create(username, password, guest.player_id, guest.name)
        except BaseException:
            await self.guests.put_back(guest_token, guest)  # the guest goes on as before
            raise
        signed_in = await self._open_session(principal)
        # The guest's sockets re-authenticate with the account's token (docs/protocol.md).
        await self.session_ended(guest.session_id, SessionEnd.UPGRADED)
        return signed_in

    async def _consume_guest(self, guest: Principal, token: str) -> bool:
        """End the guest's session for an upgrade; False if another request ended it first."""
        try:
            await self._send(
                guest_stream(guest.session_id),
                pb.CloseSession(session_id=guest.session_id, reason=SessionEnd.UPGRADED),
                f"upgrade:{guest.session_id}:{uuid.uuid4().hex}",
            )
        except AccountError as exc:
            if exc.code != AccountErrorCode.UNKNOWN_SESSION:
                raise
            view = await self.runner.load(guest_stream(guest.session_id))
            if view.state.exists:
                return False  # closed by the other request (or signed out)
            # A session cached before sessions were recorded: the cache is its only record.
        return await self.guests.revoke(token)

    async def _limit_registrations(self, client: str) -> None:
        """Each registration costs an Argon2 hash: one address gets a bounded share of the CPU.
        Checked after the free shape checks, so only requests that would hash are counted."""
        rate, burst = self.settings.register_rate, self.settings.register_burst
        if not await self.cache.allow(f"register:addr:{client}", rate, burst):
            raise AccountError(AccountErrorCode.RATE_LIMITED, "too many registrations; wait")

    async def _create(
        self, username: str, password: str, player_id: str, guest_name: str
    ) -> Principal:
        payload = pb.RegisterAccount(
            username=username,
            player_id=player_id,
            password_hash=await hash_password(password),
            upgraded_guest_name=guest_name,
        )
        await self._send(account_stream(username), payload, f"register:{uuid.uuid4().hex}")
        return Principal(player_id, username, PrincipalKind.ACCOUNT, session_id="")

    # -- sessions --------------------------------------------------------------------------

    async def sign_in(self, username: str, password: str, client: str) -> SignedIn:
        """The same refusal for an unknown user and a wrong password, both slowed down per
        (username, address) and per address (:mod:`arena_gateway.accounts.throttle`)."""
        await self.throttle.check(username, client)
        account = await self._account(username) if len(password) <= 1024 else None
        if not await verify_password(account.password_hash if account else None, password[:1024]):
            await self.throttle.failed(username, client)
            raise AccountError(AccountErrorCode.INVALID_CREDENTIALS, "wrong username or password")
        assert account is not None
        await self.throttle.succeeded(username, client)
        principal = Principal(account.player_id, account.username, PrincipalKind.ACCOUNT, "")
        return await self._open_session(principal)

    async def player_named(self, username: str) -> tuple[str, str] | None:
        """The player id and username of the account ``username`` (any case), or None (a duel
        names its opponent so)."""
        found = await self._account(username)
        return (found.player_id, found.username) if found is not None else None

    async def _account(self, username: str) -> AccountRow | None:
        async with self.db() as session:
            found = await find_account(session, username)
        if found is None and check_username_quietly(username):
            # Registered a moment ago and not yet projected: the stream's fold in the log says.
            view = await self.runner.load(account_stream(username))
            state = view.state
            if state.exists:
                found = AccountRow(state.username, state.player_id, state.password_hash)
        return found

    async def _open_session(self, principal: Principal) -> SignedIn:
        token = secrets.token_urlsafe(32)
        digest = token_hash(token)
        session_id = f"s_{digest[:16]}"
        expires = self.clock() + int(self.settings.account_session_seconds * 1000)
        payload = pb.OpenSession(session_id=session_id, token_hash=digest, expires_at_ms=expires)
        await self._send(account_stream(principal.name), payload, f"open:{session_id}")
        signed_in = Principal(principal.player_id, principal.name, principal.kind, session_id)
        await self._cache(digest, signed_in, expires)
        return SignedIn(signed_in, token, expires)

    async def sign_out(self, principal: Principal, token: str) -> None:
        if principal.kind is PrincipalKind.GUEST:
            await self.guests.closed(principal, SIGN_OUT)  # first: no restart brings it back
            await self.guests.revoke(token)
            await self.session_ended(principal.session_id, SessionEnd.SIGNED_OUT)
            return
        await self._close(principal, principal.session_id, SessionEnd.SIGNED_OUT)

    async def close_session(self, principal: Principal, session_id: str) -> None:
        """End one of the caller's own sessions; anyone else's is ``unknown_session``."""
        if principal.kind is not PrincipalKind.ACCOUNT:
            raise AccountError(AccountErrorCode.UNKNOWN_SESSION, "guests have one session")
        await self._close(principal, session_id, SessionEnd.ENDED)

    async def _close(self, principal: Principal, session_id: str, why: str) -> None:
        payload = pb.CloseSession(session_id=session_id, reason=SIGN_OUT)
        outcome = await self._send(account_stream(principal.name), payload, f"close:{session_id}")
        closed = outcome.events[0].payload
        # No session outlives account_session_seconds, so neither need its tombstone.
        tombstone_ttl = self.settings.account_session_seconds
        await self.cache.set(CACHE_PREFIX + closed.token_hash, CLOSED, tombstone_ttl)
        await self.session_ended(session_id, why)

    async def open_sessions(self, principal: Principal) -> list[dict[str, Any]]:
        """The caller's own open sessions (ids and expiry only, never a token or its hash)."""
        if principal.kind is not PrincipalKind.ACCOUNT:
            return [{"session_id": principal.session_id, "expires_at_ms": None, "current": True}]
        view = await self.runner.load(account_stream(principal.name))
        now = self.clock()
        return [
            {
                "session_id": sid,
                "expires_at_ms": info.expires_at_ms,
                "current": sid == principal.session_id,
            }
            for sid, info in sorted(view.state.sessions.items())
            if info.expires_at_ms > now and view.state.player_id == principal.player_id
        ]

    async def resolve(self, token: str) -> Principal | None:
        """An account's live session by its token (the guests' SessionStore asks on a miss)."""
        if not token or len(token) > 256:
            return None
        digest = token_hash(token)
        raw = await self.cache.get(CACHE_PREFIX + digest)
        if raw == CLOSED:
            return None
        if raw is not None:
            data = json.loads(raw)
            if data["expires_at_ms"] <= self.clock():
                return None
            return Principal.from_json(data["principal"].encode())
        async with self.db() as session:
            row = await find_session(session, digest)
        if row is None or row.closed or row.expires_at_ms <= self.clock():
            return None
        principal = Principal(row.player_id, row.username, PrincipalKind.ACCOUNT, row.session_id)
        await self._cache(digest, principal, row.expires_at_ms)
        return principal

    # -- guests' sessions in the log (identity.GuestJournal) ---------------------------------

    async def guest_opened(self, principal: Principal, digest: str, until_ms: int) -> None:
        sid = principal.session_id
        await self._send(guest_stream(sid), _open(principal, digest, until_ms), f"guest-open:{sid}")

    async def guest_reopened(self, principal: Principal, digest: str, until_ms: int) -> None:
        """Open a closed guest session again (an upgrade that failed)."""
        sid = principal.session_id
        reopen = f"guest-reopen:{sid}:{uuid.uuid4().hex}"
        await self._send(guest_stream(sid), _open(principal, digest, until_ms), reopen)

    async def guest_renewed(self, session_id: str, until_ms: int) -> None:
        """Told, not awaited: a renewal lost in a crash only ends the session a little sooner."""
        payload = pb.RenewGuestSession(session_id=session_id, expires_at_ms=until_ms)
        command_id = f"guest-renew:{session_id}:{until_ms}"
        command = new_command(guest_stream(session_id), payload, command_id=command_id)
        await self.hub.tell(topics.ACCOUNTS_COMMANDS, command)

    async def guest_closed(self, session_id: str, reason: str) -> None:
        payload = pb.CloseSession(session_id=session_id, reason=reason)
        try:
            await self._send(guest_stream(session_id), payload, f"close:{session_id}")
        except AccountError as exc:
            if exc.code != AccountErrorCode.UNKNOWN_SESSION:  # closed already: done
                raise

    async def guest_session(self, digest: str) -> tuple[Principal, int] | None:
        session_id = f"s_{digest[:16]}"
        view = await self.runner.load(guest_stream(session_id))
        info = view.state.sessions.get(session_id)
        if info is None or info.token_hash != digest:
            return None
        state = view.state
        return Principal(state.player_id, state.username, PrincipalKind.GUEST, session_id), (
            info.expires_at_ms
        )

    # -- internals -------------------------------------------------------------------------

    async def _cache(self, digest: str, principal: Principal, expires_at_ms: int) -> None:
        value = {"principal": principal.to_json().decode(), "expires_at_ms": expires_at_ms}
        remaining = self._remaining(expires_at_ms)
        await self.cache.set(CACHE_PREFIX + digest, json.dumps(value).encode(), remaining)

    def _remaining(self, expires_at_ms: int) -> float:
        return max(1.0, (expires_at_ms - self.clock()) / 1000)

    async def _send(self, stream: str, payload: Message, command_id: str) -> Outcome:
        command = new_command(stream, payload, command_id=command_id)
        try:
            outcome = await self.hub.send(topics.ACCOUNTS_COMMANDS, command)
        except GatewayError as exc:
            raise AccountError(AccountErrorCode.UNAVAILABLE, exc.message) from exc
        if not outcome.accepted:
            code = outcome.rejection_code
            known = {c.value for c in AccountErrorCode}
            if code not in known:
                raise AccountError(AccountErrorCode.UNAVAILABLE, outcome.rejection_message)
            raise AccountError(AccountErrorCode(code), outcome.rejection_message)
        return outcome


def check_username_quietly(username: str) -> bool:
    try:
        check_username(username)
    except AccountError:
        return False
    return True


def _open(principal: Principal, digest: str, until_ms: int) -> pb.OpenGuestSession:
    return pb.OpenGuestSession(
        session_id=principal.session_id,
        token_hash=digest,
        player_id=principal.player_id,
        display_name=principal.name,
        expires_at_ms=until_ms,
    )
