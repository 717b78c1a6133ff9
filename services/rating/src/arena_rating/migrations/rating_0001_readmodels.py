"""The rating and match read models: ladders, player profiles, match history, match index.

Revision ID: rating_0001_readmodels
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "rating_0001_readmodels"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = ("arena_rating",)
# No depends_on: the tables refer to none of the runtime's, and a dependency would hide the
# runtime's head from the version table (it counts as reached through this branch).
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rating_ladders",
        sa.Column("stream", sa.String(200), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("batch_id", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("stream", name="pk_rating_ladders"),
    )
    op.create_table(
        "rating_players",
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("rating_seq", sa.BigInteger(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("ranked_games", sa.Integer(), nullable=False),
        sa.Column("last_ended_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("game", "player_id", name="pk_rating_players"),
    )
    op.create_index(
        "ix_rating_players_leaderboard",
        "rating_players",
        ["game", sa.text("rating DESC"), "rating_seq", "player_id"],
    )
    op.create_table(
        "rating_history",
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("match_id", sa.String(200), nullable=False),
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("ladder_seq", sa.BigInteger(), nullable=False),
        sa.Column("ended_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("result", sa.String(8), nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("opponent_id", sa.String(200), nullable=False),
        sa.Column("opponent_name", sa.String(200), nullable=False),
        sa.Column("opponent_ai", sa.Boolean(), nullable=False),
        sa.Column("rating_before", sa.Integer(), nullable=True),
        sa.Column("rating_after", sa.Integer(), nullable=True),
        sa.Column("rating_change", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("player_id", "match_id", name="pk_rating_history"),
    )
    op.create_index(
        "ix_rating_history_newest", "rating_history", ["player_id", "ended_at_ms", "match_id"]
    )
    op.create_table(
        "match_index",
        sa.Column("match_id", sa.String(200), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("room_code", sa.String(16), nullable=False),
        sa.Column("seat1_id", sa.String(200), nullable=False),
        sa.Column("seat1_name", sa.String(200), nullable=False),
        sa.Column("seat1_ai", sa.Boolean(), nullable=False),
        sa.Column("seat2_id", sa.String(200), nullable=False),
        sa.Column("seat2_name", sa.String(200), nullable=False),
        sa.Column("seat2_ai", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("winner", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(32), nullable=True),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("ended_at_ms", sa.BigInteger(), nullable=True),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        sa.Column("last_batch_id", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("match_id", name="pk_match_index"),
    )
    op.create_table(
        "match_events",
        sa.Column("match_id", sa.String(200), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(200), nullable=False),
        sa.Column("time_ms", sa.BigInteger(), nullable=False),
        sa.Column("envelope", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("match_id", "sequence", name="pk_match_events"),
    )


def downgrade() -> None:
    op.drop_table("match_events")
    op.drop_table("match_index")
    op.drop_index("ix_rating_history_newest", table_name="rating_history")
    op.drop_table("rating_history")
    op.drop_index("ix_rating_players_leaderboard", table_name="rating_players")
    op.drop_table("rating_players")
    op.drop_table("rating_ladders")
