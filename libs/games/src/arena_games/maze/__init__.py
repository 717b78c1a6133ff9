"""The Maze on the game seam: two players racing in real time through one FIFO, observers
watching everything (docs/games.md, docs/rules/maze.md).

The rules are the engine's (:mod:`arena_engine.maze`); this package is what Arena's services need
of them, by the contract of :mod:`arena_games.contract`: ``rules`` (start, apply, decide, the
one timer, forfeits), ``wire`` (messages and their converters), ``lobby`` (settings), ``client``
(WebSocket messages), ``views`` (the engine's view records per viewer), ``ratings`` (Elo with
draws) and ``bot`` (the Explorer, driven by its seat's pushes).

Both seats are people: the Explorer is not offered as a practice opponent (docs/rules/maze.md,
"Online").
"""

from __future__ import annotations

from arena_games.contract import CASUAL, RANKED, GameModule, SeatKind, SeatPlan
from arena_games.maze.bot import bot
from arena_games.maze.client import MazeClient
from arena_games.maze.lobby import LOBBY
from arena_games.maze.ratings import MazeRatings
from arena_games.maze.rules import MazeMatch, MazeRules
from arena_games.maze.views import MazeViews
from arena_games.maze.wire import GAME, SEATS, MazeWire

SEAT_PLAN = SeatPlan(
    seats=SEATS,
    min_humans=SEATS,
    max_humans=SEATS,
    kinds=frozenset({SeatKind.HUMAN}),
)

MODULE: GameModule[MazeMatch] = GameModule(
    name=GAME,
    seats=SEAT_PLAN,
    modes=frozenset({CASUAL, RANKED}),
    exclusive=True,
    rules=MazeRules(),
    wire=MazeWire(),
    lobby=LOBBY,
    client=MazeClient(),
    views=MazeViews(),
    ratings=MazeRatings(),
    bot=bot,
)
