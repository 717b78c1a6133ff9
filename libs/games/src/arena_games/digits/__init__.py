"""Digits on the game seam: one player against saved armies, for days (docs/games.md,
docs/rules/digits.md).

The rules are the engine's (:mod:`arena_engine.digits`); this package is what Arena's services
need of them, by the contract of :mod:`arena_games.contract`: ``rules`` (the Focus, the shop,
the Face-off and combat, every clock as a timer, the army coming from outside), ``wire``
(messages and converters), ``lobby`` (settings), ``client`` (WebSocket messages), ``views``
(the player's game, a spectator's record), ``ratings`` (its own Elo per ranked combat) and
``bot`` (a scripted player); :mod:`.ghost_store` is the ghost store matchmaking keeps.
"""

from __future__ import annotations

from arena_engine.digits.status import MODES

from arena_games.contract import Duels, GameModule, Ghosts, SeatKind, SeatPlan
from arena_games.digits import duels, ghost_log
from arena_games.digits.boards import BOARDS
from arena_games.digits.bot import bot
from arena_games.digits.client import DigitsClient
from arena_games.digits.ghost_log import GHOST_STREAM, STORE
from arena_games.digits.lobby import LOBBY
from arena_games.digits.ratings import DigitsRatings
from arena_games.digits.rules import DigitsMatch, DigitsRules
from arena_games.digits.views import DigitsViews
from arena_games.digits.wire import GAME, SEATS, DigitsWire
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

SEAT_PLAN = SeatPlan(
    seats=SEATS,
    min_humans=SEATS,
    max_humans=SEATS,
    kinds=frozenset({SeatKind.HUMAN}),
)

MODULE: GameModule[DigitsMatch] = GameModule(
    name=GAME,
    seats=SEAT_PLAN,
    modes=frozenset(MODES),
    exclusive=False,
    rules=DigitsRules(),
    wire=DigitsWire(),
    lobby=LOBBY,
    client=DigitsClient(),
    views=DigitsViews(),
    ratings=DigitsRatings(),
    bot=bot,
    boards=BOARDS,
    private_log=True,
    ghosts=Ghosts(
        stream=GHOST_STREAM,
        sharing=lambda player_id, sharing: pb.SetGhostSharing(player_id=player_id, sharing=sharing),
        store=STORE,
        files=ghost_log.FILES,
        file=ghost_log.file,
        seat_room=ghost_log.seat_room,
        close_room=ghost_log.close_room,
        draw_duel=ghost_log.draw_duel,
        army=ghost_log.army,
        duel_armies=ghost_log.duel_armies,
    ),
    duels=Duels(side=duels.side, outcome=duels.outcome),
)
