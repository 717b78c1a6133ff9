"""The tables of the rating and match read models, on the runtime's shared ``metadata``.

Written only by their projections (``arena_rating.projections``), read through
:mod:`arena_runtime.readmodels.queries`; created by the ``arena_rating`` migration branch. Every
row is a function of the log alone, so ``arena rebuild`` reproduces them exactly.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Index,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Table,
)

from arena_runtime.sql.metadata import metadata

ID_LENGTH = 200
NAME_LENGTH = 200
GAME_LENGTH = 64

#: Per ladder stream, the last event applied (the reading rule of DESIGN.md rule 2).
rating_ladders = Table(
    "rating_ladders",
    metadata,
    Column("stream", String(ID_LENGTH), nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("batch_id", String(64), nullable=False),
    PrimaryKeyConstraint("stream"),
)

#: A player's profile on one game's ladder. ``rating_seq`` is the ladder sequence of the event
#: that set the current rating (0: never rated), the leaderboard's tie-break: whoever reached a
#: rating first ranks first, then the player id.
rating_players = Table(
    "rating_players",
    metadata,
    Column("game", String(GAME_LENGTH), nullable=False),
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("display_name", String(NAME_LENGTH), nullable=False),
    Column("rating", Integer, nullable=False),
    Column("rating_seq", BigInteger, nullable=False),
    Column("games", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("losses", Integer, nullable=False),
    Column("ranked_games", Integer, nullable=False),
    Column("last_ended_at_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("game", "player_id"),
)
Index(
    "ix_rating_players_leaderboard",
    rating_players.c.game,
    rating_players.c.rating.desc(),
    rating_players.c.rating_seq,
    rating_players.c.player_id,
)

#: One row per player and recorded game: the player's match history, newest first by
#: ``(ended_at_ms, match_id)``. Rating columns are NULL for games recorded unrated.
rating_history = Table(
    "rating_history",
    metadata,
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("match_id", String(ID_LENGTH), nullable=False),
    Column("game", String(GAME_LENGTH), nullable=False),
    Column("ladder_seq", BigInteger, nullable=False),
    Column("ended_at_ms", BigInteger, nullable=False),
    Column("mode", String(16), nullable=False),
    Column("result", String(8), nullable=False),
    Column("reason", String(32), nullable=False),
    Column("opponent_id", String(ID_LENGTH), nullable=False),
    Column("opponent_name", String(NAME_LENGTH), nullable=False),
    Column("opponent_ai", Boolean, nullable=False),
    Column("rating_before", Integer, nullable=True),
    Column("rating_after", Integer, nullable=True),
    Column("rating_change", Integer, nullable=True),
    PrimaryKeyConstraint("player_id", "match_id"),
)
Index(
    "ix_rating_history_newest",
    rating_history.c.player_id,
    rating_history.c.ended_at_ms,
    rating_history.c.match_id,
)

#: One row per match stream: who played, how it stands, and the stream's last applied event.
match_index = Table(
    "match_index",
    metadata,
    Column("match_id", String(ID_LENGTH), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("room_code", String(16), nullable=False),
    Column("seat1_id", String(ID_LENGTH), nullable=False),
    Column("seat1_name", String(NAME_LENGTH), nullable=False),
    Column("seat1_ai", Boolean, nullable=False),
    Column("seat2_id", String(ID_LENGTH), nullable=False),
    Column("seat2_name", String(NAME_LENGTH), nullable=False),
    Column("seat2_ai", Boolean, nullable=False),
    Column("status", String(16), nullable=False),
    Column("winner", Integer, nullable=True),
    Column("reason", String(32), nullable=True),
    Column("created_at_ms", BigInteger, nullable=False),
    Column("ended_at_ms", BigInteger, nullable=True),
    Column("events", Integer, nullable=False),
    Column("last_sequence", BigInteger, nullable=False),
    Column("last_batch_id", String(64), nullable=False),
    PrimaryKeyConstraint("match_id"),
)

#: Every event of every match stream that the reading rule admits, as its envelope bytes.
match_events = Table(
    "match_events",
    metadata,
    Column("match_id", String(ID_LENGTH), nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("type", String(200), nullable=False),
    Column("time_ms", BigInteger, nullable=False),
    Column("envelope", LargeBinary, nullable=False),
    PrimaryKeyConstraint("match_id", "sequence"),
)
