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
from arena_runtime.proto_gen.arena.v1 import lobby_pb2, match_pb2

from arena_games.digits import wire
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg


def side(ended: match_pb2.MatchEnded) -> lobby_pb2.DuelSide:
    """A duel game's end as the duel records it, from its DigitsEnded. ``started``: the player
    took an action in the game (DigitsEnded.acted: an answer, a shop action, the shop ended,
    an arrangement)."""
    final = wire.unwrapped(ended)
    if not isinstance(final, dg.DigitsEnded):
        return lobby_pb2.DuelSide(over=True)
    return lobby_pb2.DuelSide(
        started=final.acted,
        over=True,
        forfeited=final.status == "forfeited",
        wins=final.wins,
        losses=final.losses,
        margin=final.margin,
        focus_right=final.focus_right,
    )


def outcome(a: lobby_pb2.DuelSide, b: lobby_pb2.DuelSide) -> DuelOutcome:
    """Both games are over: the duel, by ``duel_outcome`` at the deadline."""
    decided = duel_outcome(_side(a), _side(b), at_deadline=True)
    assert decided is not None  # both games are over
    return decided


def _side(side: lobby_pb2.DuelSide) -> DuelSide:
    return DuelSide(
        side.player_id,
        side.started,
        side.over,
        side.forfeited,
        side.wins,
        side.losses,
        side.margin,
        side.focus_right,
    )


__all__ = [
    "DuelOutcome",
    "DuelSide",
    "duel_outcome",
    "outcome",
    "settle_stakes",
    "side",
    "stake_hold_id",
]
