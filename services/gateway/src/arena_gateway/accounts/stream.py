"""One account's stream (``account-<lower-cased username>``): pure decide and apply.

The stream's id is the username's lower case, so the log's first-in-order rule makes names
unique: of two ``RegisterAccount`` commands for ``Alice`` and ``alice``, whichever the log holds
first is accepted and the other is refused with ``username_taken``. Open sessions are part of the
state, so closing one is decided here too (a session id the account does not have is refused).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from arena_runtime.envelope import Command, Event
from arena_runtime.proto_gen.arena.v1 import accounts_pb2 as pb
from arena_runtime.schemas.accounts import GUEST_PREFIX, account_stream, guest_stream
from arena_runtime.streams import Decision, Rejection

from arena_gateway.accounts.credentials import check_username
from arena_gateway.accounts.errors import AccountError, AccountErrorCode

PLAYER_ID = re.compile(r"p_[0-9a-f]{32}")
SESSION_ID = re.compile(r"s_[0-9a-f]{16,64}")
TOKEN_HASH = re.compile(r"[0-9a-f]{64}")
UNKNOWN_ACCOUNT = "unknown_account"


@dataclass(frozen=True, slots=True)
class OpenSessionInfo:
    token_hash: str
    expires_at_ms: int


@dataclass(frozen=True, slots=True)
class Account:
    """An account as its stream's fold; ``username`` is empty before it is registered."""

    username: str = ""
    player_id: str = ""
    password_hash: str = ""
    upgraded_guest_name: str = ""
    sessions: Mapping[str, OpenSessionInfo] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def exists(self) -> bool:
        return bool(self.username)


def initial(stream: str) -> Account:
    return Account()


def decide(account: Account, command: Command) -> Decision:
    c = command.payload
    if command.stream.startswith(GUEST_PREFIX):
        return _decide_guest(account, command)
    if isinstance(c, pb.OpenGuestSession | pb.RenewGuestSession):
        return Rejection("unknown_command", "guest sessions have streams of their own")
    if isinstance(c, pb.RegisterAccount):
        return _register(account, command.stream, c)
    if not account.exists:
        return Rejection(UNKNOWN_ACCOUNT, "no such account")
    if isinstance(c, pb.OpenSession):
        if not SESSION_ID.fullmatch(c.session_id) or not TOKEN_HASH.fullmatch(c.token_hash):
            return Rejection("invalid_session", "session id or token hash malformed")
        if c.session_id in account.sessions:
            return Rejection("session_exists", f"session {c.session_id} is open already")
        return [
            pb.SessionOpened(
                session_id=c.session_id, token_hash=c.token_hash, expires_at_ms=c.expires_at_ms
            )
        ]
    if isinstance(c, pb.CloseSession):
        session = account.sessions.get(c.session_id)
        if session is None:
            return Rejection(AccountErrorCode.UNKNOWN_SESSION, "no such open session")
        return [
            pb.SessionClosed(
                session_id=c.session_id, token_hash=session.token_hash, reason=c.reason
            )
        ]
    return Rejection("unknown_command", f"{command.type} is not an accounts command")


def _decide_guest(guest: Account, command: Command) -> Decision:
    """A guest's session stream: opened once, renewed while used, closed once."""
    c = command.payload
    if isinstance(c, pb.OpenGuestSession):
        # Opened once; opened again only after it closed, for the same player (a failed upgrade).
        if guest.sessions or (guest.exists and guest.player_id != c.player_id):
            return Rejection("session_exists", "this guest session is open already")
        if (
            not SESSION_ID.fullmatch(c.session_id)
            or guest_stream(c.session_id) != command.stream
            or not TOKEN_HASH.fullmatch(c.token_hash)
            or not c.token_hash.startswith(c.session_id.removeprefix("s_"))
            or not PLAYER_ID.fullmatch(c.player_id)
            or not c.display_name
        ):
            return Rejection("invalid_session", "session id, token hash or player malformed")
        return [
            pb.GuestSessionOpened(
                session_id=c.session_id,
                token_hash=c.token_hash,
                player_id=c.player_id,
                display_name=c.display_name,
                expires_at_ms=c.expires_at_ms,
            )
        ]
    if isinstance(c, pb.RenewGuestSession | pb.CloseSession):
        session = guest.sessions.get(c.session_id)
        if session is None:
            return Rejection(AccountErrorCode.UNKNOWN_SESSION, "no such open session")
        if isinstance(c, pb.CloseSession):
            return [
                pb.SessionClosed(
                    session_id=c.session_id, token_hash=session.token_hash, reason=c.reason
                )
            ]
        if c.expires_at_ms <= session.expires_at_ms:
            return []  # an older renewal, arriving late
        return [pb.GuestSessionRenewed(session_id=c.session_id, expires_at_ms=c.expires_at_ms)]
    return Rejection("unknown_command", f"{command.type} is not a guest session's command")


def _register(account: Account, stream: str, c: pb.RegisterAccount) -> Decision:
    try:
        check_username(c.username)
    except AccountError as exc:
        return Rejection(exc.code, exc.message)
    if account_stream(c.username) != stream:
        return Rejection(AccountErrorCode.INVALID_USERNAME, f"{c.username} is not {stream}")
    if account.exists:
        return Rejection(AccountErrorCode.USERNAME_TAKEN, "that username is taken")
    if not PLAYER_ID.fullmatch(c.player_id) or not c.password_hash.startswith("$argon2id$"):
        return Rejection("invalid_account", "player id or password hash malformed")
    return [
        pb.AccountRegistered(
            username=c.username,
            player_id=c.player_id,
            password_hash=c.password_hash,
            upgraded_guest_name=c.upgraded_guest_name,
        )
    ]


def apply(account: Account, event: Event) -> Account:
    e = event.payload
    if isinstance(e, pb.AccountRegistered):
        return Account(e.username, e.player_id, e.password_hash, e.upgraded_guest_name)
    if isinstance(e, pb.SessionOpened):
        # Sessions past their expiry go when the next one opens, so the state stays small.
        moment = int(event.time.timestamp() * 1000)
        sessions = {k: v for k, v in account.sessions.items() if v.expires_at_ms > moment}
        sessions[e.session_id] = OpenSessionInfo(e.token_hash, e.expires_at_ms)
        return replace(account, sessions=MappingProxyType(sessions))
    if isinstance(e, pb.GuestSessionOpened):
        info = OpenSessionInfo(e.token_hash, e.expires_at_ms)
        return Account(e.display_name, e.player_id, sessions=MappingProxyType({e.session_id: info}))
    if isinstance(e, pb.GuestSessionRenewed):
        found = account.sessions.get(e.session_id)
        if found is None:
            return account
        renewed = {e.session_id: OpenSessionInfo(found.token_hash, e.expires_at_ms)}
        return replace(account, sessions=MappingProxyType(renewed))
    if isinstance(e, pb.SessionClosed):
        sessions = {k: v for k, v in account.sessions.items() if k != e.session_id}
        return replace(account, sessions=MappingProxyType(sessions))
    return account
