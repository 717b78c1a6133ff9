"""The payloads of proto/arena/v1/accounts.proto: player accounts and their sessions.

Importing this module registers them with the envelope codec's registry
(:data:`arena_runtime.envelope.SCHEMAS`). It also names the account streams: one per username,
``account-<lower-cased username>``, so usernames are unique case-insensitively by the log's
single-writer rule. A guest's session has a stream of its own, ``guest-<session id>``.
"""

from __future__ import annotations

from google.protobuf.message import Message

from arena_runtime.envelope import SCHEMAS, Schemas
from arena_runtime.proto_gen.arena.v1 import accounts_pb2 as pb

COMMANDS: tuple[type[Message], ...] = (
    pb.RegisterAccount,
    pb.OpenSession,
    pb.CloseSession,
    pb.OpenGuestSession,
    pb.RenewGuestSession,
)
EVENTS: tuple[type[Message], ...] = (
    pb.AccountRegistered,
    pb.SessionOpened,
    pb.SessionClosed,
    pb.GuestSessionOpened,
    pb.GuestSessionRenewed,
)

ACCOUNT_PREFIX = "account-"
GUEST_PREFIX = "guest-"


def account_stream(username: str) -> str:
    """The stream id of a username, e.g. ``account-alice`` for ``Alice``."""
    return f"{ACCOUNT_PREFIX}{username.lower()}"


def guest_stream(session_id: str) -> str:
    """The stream of a guest's session, e.g. ``guest-s_0123456789abcdef``."""
    return f"{GUEST_PREFIX}{session_id}"


def register(schemas: Schemas = SCHEMAS) -> None:
    """Register every accounts payload (once per registry)."""
    schemas.add_messages((*COMMANDS, *EVENTS))


register()
