"""Maths Warriors on the game seam: two seats taking turns, two clocks, an AI (docs/games.md).

The rules are the engine's (:mod:`arena_engine.maths_warriors`); this package is what Arena's
services need of them, by the contract of :mod:`arena_games.contract`: ``rules`` (start, apply,
decide, timers, forfeit, result, the AI thinking off the loop), ``wire`` (messages, legacy
upcasters), ``lobby`` (settings), ``client`` (WebSocket messages), ``views`` (snapshot and
pushes), ``ratings`` (Elo) and ``bot`` (a scripted player).
"""

from __future__ import annotations

from arena_games.contract import CASUAL, RANKED, GameModule, SeatKind, SeatPlan
from arena_games.maths_warriors.bot import bot
from arena_games.maths_warriors.client import MathsWarriorsClient
from arena_games.maths_warriors.lobby import LOBBY
from arena_games.maths_warriors.ratings import MathsWarriorsRatings
from arena_games.maths_warriors.replay import replay
from arena_games.maths_warriors.rules import MathsWarriorsRules, MathsWarriorsState
from arena_games.maths_warriors.views import MathsWarriorsViews
from arena_games.maths_warriors.wire import AI_LEVELS, GAME, SEATS, MathsWarriorsWire

SEAT_PLAN = SeatPlan(
    seats=SEATS,
    min_humans=1,
    max_humans=2,
    kinds=frozenset({SeatKind.HUMAN, SeatKind.AI}),
    ai_levels=tuple(AI_LEVELS.values()),
)

MODULE: GameModule[MathsWarriorsState] = GameModule(
    name=GAME,
    seats=SEAT_PLAN,
    modes=frozenset({CASUAL, RANKED}),
    exclusive=True,
    rules=MathsWarriorsRules(),
    wire=MathsWarriorsWire(),
    lobby=LOBBY,
    client=MathsWarriorsClient(),
    views=MathsWarriorsViews(),
    ratings=MathsWarriorsRatings(),
    bot=bot,
    replay=replay,
)
