"""Ghost sharing preferences (``ghost_sharing``) and the ghost store streams projected so far
(``ghost_streams``). New tables only: the projection fills them from the log.

Revision ID: rating_0005_ghost_sharing
Revises: rating_0004_credits
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "rating_0005_ghost_sharing"
down_revision: str | Sequence[str] | None = "rating_0004_credits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ghost_streams",
        sa.Column("stream", sa.String(200), nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        sa.Column("last_batch_id", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("stream", name="pk_ghost_streams"),
    )
    op.create_table(
        "ghost_sharing",
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("sharing", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("game", "player_id", name="pk_ghost_sharing"),
    )


def downgrade() -> None:
    op.drop_table("ghost_sharing")
    op.drop_table("ghost_streams")
