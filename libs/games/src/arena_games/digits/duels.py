"""Digits' duels as the services reach them (through the game module, not the engine): the
outcome rule (``duel_outcome``: wins, fewer losses, margin, Focus right answers; forfeits; at
the deadline, never started loses and neither started cancels) and the stakes' ledger commands
(``settle_stakes``; ``stake_hold_id``), from ``arena_engine.digits.duels``."""

from __future__ import annotations

from arena_engine.digits.duels import (
    DuelOutcome,
    DuelSide,
    duel_outcome,
    settle_stakes,
    stake_hold_id,
)

__all__ = ["DuelOutcome", "DuelSide", "duel_outcome", "settle_stakes", "stake_hold_id"]
