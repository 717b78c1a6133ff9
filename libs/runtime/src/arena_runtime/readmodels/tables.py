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
    Text,
)

from arena_runtime.sql.metadata import metadata

ID_LENGTH = 200
NAME_LENGTH = 200
GAME_LENGTH = 64

#: Per ladder stream, the last event applied (the reading rule, rule 2 of docs/architecture.md).
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

#: One row per person and recorded game: the player's match history, newest first by
#: ``(ended_at_ms, match_id)``. Rating columns are NULL for games recorded unrated; the opponent
#: is the other seat of a two-seat match (empty otherwise).
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
    #: The player's rank in the match (1 is best) and how many seats it had.
    Column("rank", Integer, nullable=False),
    Column("seats", Integer, nullable=False),
    PrimaryKeyConstraint("player_id", "match_id"),
)
Index(
    "ix_rating_history_newest",
    rating_history.c.player_id,
    rating_history.c.ended_at_ms,
    rating_history.c.match_id,
)

#: One row per match stream: how it stands, and the stream's last applied event. ``winner`` is
#: the seat ranked first alone (NULL while it plays, and for a tie); every seat is in
#: ``match_seats``.
match_index = Table(
    "match_index",
    metadata,
    Column("match_id", String(ID_LENGTH), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("room_code", String(16), nullable=False),
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

#: One row per seat of a match, however many it has: who sat there (``kind``: human, ai or
#: scripted) and, once the match is over, the seat's rank (1 is best; equal ranks are a tie).
match_seats = Table(
    "match_seats",
    metadata,
    Column("match_id", String(ID_LENGTH), nullable=False),
    Column("seat", Integer, nullable=False),
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("display_name", String(NAME_LENGTH), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("rank", Integer, nullable=True),
    PrimaryKeyConstraint("match_id", "seat"),
)

#: A game's statistics board (a game whose ladder keeps statistics, e.g. Matrix Games: per
#: variant, each player and each scripted policy): sums over every match recorded on its
#: ladder. ``counts`` is the game's own sums, a JSON object of integers by name.
game_statistics = Table(
    "game_statistics",
    metadata,
    Column("game", String(GAME_LENGTH), nullable=False),
    Column("board", String(GAME_LENGTH), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("key", String(ID_LENGTH), nullable=False),
    Column("name", String(NAME_LENGTH), nullable=False),
    Column("episodes", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("score", BigInteger, nullable=False),
    Column("counts", Text, nullable=False),
    PrimaryKeyConstraint("game", "board", "kind", "key"),
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

# -- per-combat ladders (a game with ``ratings.units``: Digits) ---------------------------------

#: A player's current standing on a per-combat ladder: rating, its season and the season's rated
#: units; ``since_ms`` is when the ladder first saw them (the season board's last tie-break).
unit_standings = Table(
    "unit_standings",
    metadata,
    Column("game", String(GAME_LENGTH), nullable=False),
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("display_name", String(NAME_LENGTH), nullable=False),
    Column("rating", Integer, nullable=False),
    Column("season", String(16), nullable=False),
    Column("season_units", Integer, nullable=False),
    Column("since_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("game", "player_id"),
)

#: A player's line on a season's leaderboard: the rating in the season, its rated units (ranked
#: combats), the finished ranked games that count, and ``since_ms``.
season_standings = Table(
    "season_standings",
    metadata,
    Column("game", String(GAME_LENGTH), nullable=False),
    Column("season", String(16), nullable=False),
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("display_name", String(NAME_LENGTH), nullable=False),
    Column("rating", Integer, nullable=False),
    Column("units", Integer, nullable=False),
    Column("games", Integer, nullable=False),
    Column("since_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("game", "season", "player_id"),
)
Index(
    "ix_season_standings_board",
    season_standings.c.game,
    season_standings.c.season,
    season_standings.c.rating.desc(),
    season_standings.c.units.desc(),
    season_standings.c.since_ms,
    season_standings.c.player_id,
)

#: Each finished ranked match of a per-combat ladder: its season, whether it counts towards the
#: season's minimum, and whether it was voided (then it no longer counts).
season_games = Table(
    "season_games",
    metadata,
    Column("game", String(GAME_LENGTH), nullable=False),
    Column("match_id", String(ID_LENGTH), nullable=False),
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("season", String(16), nullable=False),
    Column("counted", Boolean, nullable=False),
    Column("voided", Boolean, nullable=False),
    PrimaryKeyConstraint("game", "match_id"),
)

# -- credits ledgers (``credits-<player>`` streams on arena.rating.events) -------------------------

#: Every movement of an account's credits ledger, in its stream's order: ``kind`` (credited,
#: debited, held, released, captured), the movement or hold id, the amount, the reason, and the
#: available ``balance`` and ``held`` total after it. The balance is the last row's.
credit_movements = Table(
    "credit_movements",
    metadata,
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("movement_id", String(ID_LENGTH), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("reason", String(64), nullable=False),
    Column("balance", BigInteger, nullable=False),
    Column("held", BigInteger, nullable=False),
    Column("time_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("player_id", "sequence"),
)


#: Each ghost store stream (``ghosts-<game>`` on the matchmaking events) as far as projected,
#: for the reading rule.
ghost_streams = Table(
    "ghost_streams",
    metadata,
    Column("stream", String(ID_LENGTH), primary_key=True),
    Column("last_sequence", BigInteger, nullable=False),
    Column("last_batch_id", String(64), nullable=False),
)

#: A player's ghost sharing preference per game (``login``, ``anonymous``, ``none``); no row:
#: never set (the game's default).
ghost_sharing = Table(
    "ghost_sharing",
    metadata,
    Column("game", String(64), nullable=False),
    Column("player_id", String(ID_LENGTH), nullable=False),
    Column("sharing", String(16), nullable=False),
    PrimaryKeyConstraint("game", "player_id"),
)
