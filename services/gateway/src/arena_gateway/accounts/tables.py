"""The accounts read model: one row per account, one per session ever opened, and each
stream's last applied event (the projection's reading gate), on the runtime's shared
metadata. Created by ``migrations``; written only by ``projection``."""

from __future__ import annotations

from arena_runtime.sql.metadata import metadata
from sqlalchemy import BigInteger, Boolean, Column, String, Table

account_streams = Table(
    "account_streams",
    metadata,
    Column("stream", String(200), primary_key=True),
    Column("sequence", BigInteger, nullable=False),
    Column("batch_id", String(64), nullable=False),
)

accounts = Table(
    "accounts",
    metadata,
    #: The lower-cased username (the stream id without ``account-``).
    Column("username_key", String(64), primary_key=True),
    Column("username", String(64), nullable=False),
    Column("player_id", String(64), nullable=False, index=True),
    Column("password_hash", String(256), nullable=False),
    Column("upgraded_guest_name", String(64), nullable=False),
    Column("registered_at_ms", BigInteger, nullable=False),
)

account_sessions = Table(
    "account_sessions",
    metadata,
    #: SHA-256 of the token: the token itself is never stored.
    Column("token_hash", String(64), primary_key=True),
    Column("session_id", String(80), nullable=False),
    Column("username_key", String(64), nullable=False, index=True),
    Column("player_id", String(64), nullable=False),
    Column("expires_at_ms", BigInteger, nullable=False),
    Column("closed", Boolean, nullable=False),
)
