"""The accounts read model: accounts, their sessions, and each stream's last applied event.

Revision ID: accounts_0001_tables
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "accounts_0001_tables"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = ("arena_accounts",)
# Independent of the runtime's tables (none of them is referenced). A second branch depending on
# 0001_runtime_tables makes Alembic drop that revision from alembic_version, so the database
# would never report being at every head.
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "account_streams",
        sa.Column("stream", sa.String(200), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("batch_id", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("stream", name="pk_account_streams"),
    )
    op.create_table(
        "accounts",
        sa.Column("username_key", sa.String(64), nullable=False),
        sa.Column("username", sa.String(64), nullable=False),
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("password_hash", sa.String(256), nullable=False),
        sa.Column("upgraded_guest_name", sa.String(64), nullable=False),
        sa.Column("registered_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("username_key", name="pk_accounts"),
    )
    op.create_index("ix_accounts_player_id", "accounts", ["player_id"])
    op.create_table(
        "account_sessions",
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(80), nullable=False),
        sa.Column("username_key", sa.String(64), nullable=False),
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("expires_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("token_hash", name="pk_account_sessions"),
    )
    op.create_index("ix_account_sessions_username_key", "account_sessions", ["username_key"])


def downgrade() -> None:
    op.drop_index("ix_account_sessions_username_key", table_name="account_sessions")
    op.drop_table("account_sessions")
    op.drop_index("ix_accounts_player_id", table_name="accounts")
    op.drop_table("accounts")
    op.drop_table("account_streams")
