"""Matrix Games on the game seam: eight seats ordering once per beat (docs/games.md).

The rules are the engine's (:mod:`arena_engine.matrix_games`); this package is what Arena's
services need of them, by the contract of :mod:`arena_games.contract`: ``rules`` (the connect
wait, beats and their deadlines, scripted seats and the fallback, the end), ``wire`` (messages),
``lobby`` (settings), ``client`` (WebSocket messages), ``views`` (the player messages and the
spectators' ``matrix.global.v1``), ``ratings`` (statistics per variant) and ``bot`` (a scripted
client); :mod:`.replay` regenerates a match's ``matrix.replay.v1`` from its events.
"""

from __future__ import annotations

from arena_engine.matrix_games import POLICIES
from arena_engine.matrix_games.constants import SEATS
from arena_engine.matrix_games.game import FALLBACK_POLICY

from arena_games.contract import CASUAL, GameModule, SeatKind, SeatPlan
from arena_games.matrix_games.bot import bot
from arena_games.matrix_games.client import MatrixGamesClient
from arena_games.matrix_games.lobby import LOBBY
from arena_games.matrix_games.ratings import MatrixGamesRatings
from arena_games.matrix_games.replay import replay
from arena_games.matrix_games.rules import MatrixGamesRules, MatrixGamesState
from arena_games.matrix_games.views import MatrixGamesViews
from arena_games.matrix_games.wire import GAME, MatrixGamesWire

SEAT_PLAN = SeatPlan(
    seats=SEATS,
    min_humans=1,
    max_humans=SEATS,
    kinds=frozenset({SeatKind.HUMAN, SeatKind.SCRIPTED}),
    scripted_policies=tuple(POLICIES),
    default_fill=FALLBACK_POLICY,
)

MODULE: GameModule[MatrixGamesState] = GameModule(
    name=GAME,
    seats=SEAT_PLAN,
    modes=frozenset({CASUAL}),
    exclusive=True,
    rules=MatrixGamesRules(),
    wire=MatrixGamesWire(),
    lobby=LOBBY,
    client=MatrixGamesClient(),
    views=MatrixGamesViews(),
    ratings=MatrixGamesRatings(),
    bot=bot,
    replay=replay,
)
