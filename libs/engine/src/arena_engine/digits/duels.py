"""Who wins a duel, and what happens to the stakes.

A duel is the same game for both players (same seeds, same opponents), played within 24 h. The
best record wins: wins, then fewer losses, then margin, then right answers in the Focus; a full
tie is a draw. Forfeiting loses the duel whatever the record (decided at once; both forfeited is
a draw). At the deadline an unfinished game counts with its record (the service stops it first
with `Stop("deadline")`), a player who never started loses by forfeit, and if neither started
the duel is cancelled. A draw or a cancelled duel returns both stakes; otherwise the loser's
stake goes to the winner.
"""

from __future__ import annotations

from dataclasses import dataclass

from .credits import Capture, Credit, LedgerCommand, Release

WIN, DRAW, CANCELLED = "win", "draw", "cancelled"


@dataclass(frozen=True, slots=True)
class DuelSide:
    player: str
    started: bool = False
    over: bool = False  # the game ended (any way)
    forfeited: bool = False
    wins: int = 0
    losses: int = 0
    margin: int = 0
    focus_right: int = 0  # right Focus answers over the whole game


@dataclass(frozen=True, slots=True)
class DuelOutcome:
    result: str  # win, draw or cancelled
    winner: str | None
    loser: str | None
    #: record (decided_by says which criterion), forfeit, not_started, tie, both_forfeited,
    #: neither_started
    reason: str
    decided_by: str | None = None  # wins, losses, margin or focus_right


def _record(side: DuelSide) -> tuple[tuple[str, int], ...]:
    return (
        ("wins", side.wins),
        ("losses", -side.losses),
        ("margin", side.margin),
        ("focus_right", side.focus_right),
    )


def _won(winner: DuelSide, loser: DuelSide, reason: str, by: str | None = None) -> DuelOutcome:
    return DuelOutcome(WIN, winner.player, loser.player, reason, by)


def duel_outcome(a: DuelSide, b: DuelSide, at_deadline: bool) -> DuelOutcome | None:
    """The duel's result, or None while it is still undecided."""
    if a.forfeited and b.forfeited:
        return DuelOutcome(DRAW, None, None, "both_forfeited")
    if a.forfeited or b.forfeited:
        return _won(b, a, "forfeit") if a.forfeited else _won(a, b, "forfeit")
    if not at_deadline and not (a.over and b.over):
        return None
    if at_deadline and not (a.started or b.started):
        return DuelOutcome(CANCELLED, None, None, "neither_started")
    if at_deadline and not (a.started and b.started):
        return _won(a, b, "not_started") if a.started else _won(b, a, "not_started")
    for (name, mine), (_, theirs) in zip(_record(a), _record(b), strict=True):
        if mine != theirs:
            return _won(a, b, "record", name) if mine > theirs else _won(b, a, "record", name)
    return DuelOutcome(DRAW, None, None, "tie")


def stake_hold_id(duel_id: str, player: str) -> str:
    return f"duel-stake:{duel_id}:{player}"


def settle_stakes(
    outcome: DuelOutcome, duel_id: str, stake: int, players: tuple[str, str]
) -> dict[str, list[LedgerCommand]]:
    """Each player's ledger commands once the duel is decided (both stakes were held at
    acceptance with `Hold(stake_hold_id(duel_id, player), stake, "duel_stake")`)."""
    if outcome.result != WIN or stake == 0:
        return {p: [Release(stake_hold_id(duel_id, p))] for p in players} if stake else {}
    assert outcome.winner is not None and outcome.loser is not None
    return {
        outcome.winner: [
            Release(stake_hold_id(duel_id, outcome.winner)),
            Credit(f"duel-won:{duel_id}", stake, "duel_won"),
        ],
        outcome.loser: [Capture(stake_hold_id(duel_id, outcome.loser), "duel_lost")],
    }
