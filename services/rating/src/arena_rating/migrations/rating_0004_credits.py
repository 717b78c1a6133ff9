"""Credits ledgers: every movement of each account's ledger (``credit_movements``). A new
table only: the projection fills it from the log.

Revision ID: rating_0004_credits
Revises: rating_0003_seasons
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "rating_0004_credits"
down_revision: str | Sequence[str] | None = "rating_0003_seasons"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "credit_movements",
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("movement_id", sa.String(200), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(64), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("held", sa.BigInteger(), nullable=False),
        sa.Column("time_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", "sequence", name="pk_credit_movements"),
    )


def downgrade() -> None:
    op.drop_table("credit_movements")
