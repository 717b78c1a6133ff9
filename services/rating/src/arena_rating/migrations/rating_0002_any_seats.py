"""Any number of seats: ``match_seats`` replaces ``match_index``'s seat1_*/seat2_* columns, a
history row says its player's rank and the match's seats, and ``game_statistics`` holds the
statistics boards of games without Elo (issue 14).

The rows move, nothing is replayed: each match's two seats become two ``match_seats`` rows
(``kind`` "ai" where ``seatN_ai``, else "human"; once the match is over, ``rank`` 1 for the
winning seat and 2 for the other, as the two-seat matches before this revision all ended), then
the columns go. What the migrated rows hold is what the projection writes from the same log
(``tests/games/test_pre_seam_fixture.py`` rebuilds the recorded fixture and compares). A match
index row whose seat was never known (its stream did not start with the match's opening event)
had empty seat columns; it gets no seat row, as the projection writes none for it.

Revision ID: rating_0002_any_seats
Revises: rating_0001_readmodels
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "rating_0002_any_seats"
down_revision: str | Sequence[str] | None = "rating_0001_readmodels"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SEAT_COLUMNS = ("id", "name", "ai")


def upgrade() -> None:
    op.create_table(
        "match_seats",
        sa.Column("match_id", sa.String(200), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("match_id", "seat", name="pk_match_seats"),
    )
    for seat in (1, 2):
        op.execute(
            sa.text(
                "INSERT INTO match_seats (match_id, seat, player_id, display_name, kind, rank) "
                f"SELECT match_id, {seat}, seat{seat}_id, seat{seat}_name, "
                f"CASE WHEN seat{seat}_ai THEN 'ai' ELSE 'human' END, "
                f"CASE WHEN status = 'over' AND winner = {seat} THEN 1 "
                "WHEN status = 'over' AND winner IS NOT NULL THEN 2 END "
                f"FROM match_index WHERE seat{seat}_id <> ''"
            )
        )
    with op.batch_alter_table("match_index") as batch:
        for seat in (1, 2):
            for column in _SEAT_COLUMNS:
                batch.drop_column(f"seat{seat}_{column}")
    # A history row's rank and the match's seats: every match before was two seats, and a row
    # was the winner's (rank 1) or the loser's (2).
    with op.batch_alter_table("rating_history") as batch:
        batch.add_column(sa.Column("rank", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("seats", sa.Integer(), nullable=True))
    op.execute(
        sa.text(
            "UPDATE rating_history SET seats = 2, rank = CASE WHEN result = 'win' THEN 1 ELSE 2 END"
        )
    )
    with op.batch_alter_table("rating_history") as batch:
        batch.alter_column("rank", existing_type=sa.Integer(), nullable=False)
        batch.alter_column("seats", existing_type=sa.Integer(), nullable=False)
    op.create_table(
        "game_statistics",
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("board", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("episodes", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("score", sa.BigInteger(), nullable=False),
        sa.Column("counts", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("game", "board", "kind", "key", name="pk_game_statistics"),
    )


def downgrade() -> None:
    op.drop_table("game_statistics")
    with op.batch_alter_table("rating_history") as batch:
        batch.drop_column("seats")
        batch.drop_column("rank")
    with op.batch_alter_table("match_index") as batch:
        for seat in (1, 2):
            batch.add_column(
                sa.Column(f"seat{seat}_id", sa.String(200), nullable=False, server_default="")
            )
            batch.add_column(
                sa.Column(f"seat{seat}_name", sa.String(200), nullable=False, server_default="")
            )
            batch.add_column(
                sa.Column(f"seat{seat}_ai", sa.Boolean(), nullable=False, server_default=sa.false())
            )
    for seat in (1, 2):
        op.execute(
            sa.text(
                f"UPDATE match_index SET seat{seat}_id = s.player_id, "
                f"seat{seat}_name = s.display_name, seat{seat}_ai = (s.kind = 'ai') "
                f"FROM match_seats AS s WHERE s.match_id = match_index.match_id AND s.seat = {seat}"
            )
        )
    op.drop_table("match_seats")
