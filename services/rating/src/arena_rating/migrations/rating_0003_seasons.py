"""Per-combat ladders (Digits): each player's standing, the season leaderboards and the
finished ranked games each season counts (``unit_standings``, ``season_standings``,
``season_games``). New tables only: the projection fills them from the log.

Revision ID: rating_0003_seasons
Revises: rating_0002_any_seats
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "rating_0003_seasons"
down_revision: str | Sequence[str] | None = "rating_0002_any_seats"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "unit_standings",
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("season", sa.String(16), nullable=False),
        sa.Column("season_units", sa.Integer(), nullable=False),
        sa.Column("since_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("game", "player_id", name="pk_unit_standings"),
    )
    op.create_table(
        "season_standings",
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("season", sa.String(16), nullable=False),
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("units", sa.Integer(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("since_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("game", "season", "player_id", name="pk_season_standings"),
    )
    op.create_index(
        "ix_season_standings_board",
        "season_standings",
        ["game", "season", sa.text("rating DESC"), sa.text("units DESC"), "since_ms", "player_id"],
    )
    op.create_table(
        "season_games",
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("match_id", sa.String(200), nullable=False),
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("season", sa.String(16), nullable=False),
        sa.Column("counted", sa.Boolean(), nullable=False),
        sa.Column("voided", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("game", "match_id", name="pk_season_games"),
    )


def downgrade() -> None:
    op.drop_table("season_games")
    op.drop_index("ix_season_standings_board", table_name="season_standings")
    op.drop_table("season_standings")
    op.drop_table("unit_standings")
