"""A duel's stakes and outcome record, game-neutral (the services' side of a duel): the hold id
of a player's stake (``stake_hold_id``), the ledger commands that settle both stakes once the
duel is decided (``settle_stakes``: released on a draw or a cancel, else the loser's captured
and the winner credited as much) and the decision they settle (``DuelOutcome``).

The rule that decides a duel is the game's (``GameModule.duels``); these live beside Digits'
in the engine, the first game with duels, and hold nothing of its rules.
"""

from __future__ import annotations

from arena_engine.digits.duels import DuelOutcome, settle_stakes, stake_hold_id

__all__ = ["DuelOutcome", "settle_stakes", "stake_hold_id"]
