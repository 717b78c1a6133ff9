"""The accounts projection: the read model the gateway authenticates from.

It applies each account stream's next event only (architecture rule 2), remembering the last one in
``account_streams``, so redelivered records and a losing writer's events change nothing, and
``arena rebuild`` reproduces the live tables exactly: every column comes from the events (times
from the events' own timestamps), never from the clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Codec
from arena_runtime.eventlog import Record
from arena_runtime.proto_gen.arena.v1 import accounts_pb2 as pb
from arena_runtime.schemas import accounts as _accounts  # noqa: F401  (registers the payloads)
from arena_runtime.schemas.accounts import ACCOUNT_PREFIX
from arena_runtime.sql.projection import Projection
from arena_runtime.streams import REJECTED_TYPE, is_next
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from arena_gateway.accounts.tables import account_sessions, account_streams, accounts


class AccountsProjection(Projection):
    name = "accounts"
    tables = (account_streams, accounts, account_sessions)

    def __init__(self, codec: Codec = CODEC) -> None:
        self.topics = (topics.ACCOUNTS_EVENTS,)
        self.codec = codec

    async def apply(self, session: AsyncSession, record: Record) -> None:
        event = self.codec.decode_event(record.value)  # EnvelopeError: the runner skips it
        gate = (
            await session.execute(
                select(account_streams.c.sequence, account_streams.c.batch_id).where(
                    account_streams.c.stream == event.stream
                )
            )
        ).first()
        if not is_next(event, *(gate or (0, ""))):
            return
        position = {"sequence": event.sequence, "batch_id": event.batch_id}
        if gate is None:
            await session.execute(insert(account_streams).values(stream=event.stream, **position))
        else:
            await session.execute(
                update(account_streams)
                .where(account_streams.c.stream == event.stream)
                .values(**position)
            )
        if event.type == REJECTED_TYPE:
            return
        key = event.stream.removeprefix(ACCOUNT_PREFIX)
        e = event.payload
        if isinstance(e, pb.AccountRegistered):
            await session.execute(
                insert(accounts).values(
                    username_key=key,
                    username=e.username,
                    player_id=e.player_id,
                    password_hash=e.password_hash,
                    upgraded_guest_name=e.upgraded_guest_name,
                    registered_at_ms=int(event.time.timestamp() * 1000),
                )
            )
        elif isinstance(e, pb.SessionOpened):
            player_id = await session.scalar(
                select(accounts.c.player_id).where(accounts.c.username_key == key)
            )
            await session.execute(
                insert(account_sessions).values(
                    token_hash=e.token_hash,
                    session_id=e.session_id,
                    username_key=key,
                    player_id=player_id or "",
                    expires_at_ms=e.expires_at_ms,
                    closed=False,
                )
            )
        elif isinstance(e, pb.SessionClosed):
            await session.execute(
                update(account_sessions)
                .where(account_sessions.c.token_hash == e.token_hash)
                .values(closed=True)
            )


def accounts_projection(settings: Settings) -> Projection:
    """The ``arena.projections`` entry point."""
    return AccountsProjection()


# -- what the gateway reads ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AccountRow:
    username: str
    player_id: str
    password_hash: str


@dataclass(frozen=True, slots=True)
class SessionRow:
    session_id: str
    username: str
    player_id: str
    expires_at_ms: int
    closed: bool


async def find_account(session: AsyncSession, username: str) -> AccountRow | None:
    row = (
        await session.execute(
            select(accounts.c.username, accounts.c.player_id, accounts.c.password_hash).where(
                accounts.c.username_key == username.lower()
            )
        )
    ).first()
    return AccountRow(*row) if row else None


async def find_session(session: AsyncSession, token_hash: str) -> SessionRow | None:
    row = (
        await session.execute(
            select(
                account_sessions.c.session_id,
                accounts.c.username,
                account_sessions.c.player_id,
                account_sessions.c.expires_at_ms,
                account_sessions.c.closed,
            )
            .join(accounts, accounts.c.username_key == account_sessions.c.username_key)
            .where(account_sessions.c.token_hash == token_hash)
        )
    ).first()
    return SessionRow(*row) if row else None
