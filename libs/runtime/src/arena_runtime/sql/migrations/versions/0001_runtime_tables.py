"""The runtime's tables: projection offsets and the stream_activity example projection.

Revision ID: 0001_runtime_tables
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_runtime_tables"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = ("arena_runtime",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "projection_offsets",
        sa.Column("projection", sa.String(200), nullable=False),
        sa.Column("topic", sa.String(249), nullable=False),
        sa.Column("partition", sa.Integer(), nullable=False),
        sa.Column("next_offset", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("projection", "topic", "partition", name="pk_projection_offsets"),
    )
    op.create_table(
        "stream_activity",
        sa.Column("topic", sa.String(249), nullable=False),
        sa.Column("stream", sa.String(255), nullable=False),
        sa.Column("records", sa.BigInteger(), nullable=False),
        sa.Column("first_seen_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_seen_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_partition", sa.BigInteger(), nullable=False),
        sa.Column("last_offset", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("topic", "stream", name="pk_stream_activity"),
    )


def downgrade() -> None:
    op.drop_table("stream_activity")
    op.drop_table("projection_offsets")
