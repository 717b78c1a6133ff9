"""An account's credits ledger, as an event-sourced aggregate: one stream per account.

Every movement is an event carrying the balance after it, and the balance never goes below 0: a
debit or a hold larger than what is available is refused. A duel's stake is held (it leaves the
available balance but stays the account's), then released (a full tie, a cancelled duel) or
captured (the duel lost; the winner's ledger is credited with it). Each movement has an id, and
a movement already recorded changes nothing, so a command retried after a crash is harmless.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from .commands import Rejection

MAX_AMOUNT = 1_000_000
MAX_TEXT = 200


@dataclass(frozen=True, slots=True)
class Ledger:
    balance: int = 0  # available
    holds: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    seen: frozenset[str] = frozenset()  # every movement and hold id recorded

    @property
    def held(self) -> int:
        return sum(self.holds.values())


# -- commands ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Credit:
    movement_id: str
    amount: int
    reason: str  # season_prize, duel_won, …


@dataclass(frozen=True, slots=True)
class Debit:
    movement_id: str
    amount: int
    reason: str


@dataclass(frozen=True, slots=True)
class Hold:
    hold_id: str
    amount: int
    reason: str  # duel_stake


@dataclass(frozen=True, slots=True)
class Release:
    hold_id: str


@dataclass(frozen=True, slots=True)
class Capture:
    hold_id: str
    reason: str  # duel_lost


LedgerCommand = Credit | Debit | Hold | Release | Capture


# -- events -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Credited:
    movement_id: str
    amount: int
    reason: str
    balance: int


@dataclass(frozen=True, slots=True)
class Debited:
    movement_id: str
    amount: int
    reason: str
    balance: int


@dataclass(frozen=True, slots=True)
class Held:
    hold_id: str
    amount: int
    reason: str
    balance: int


@dataclass(frozen=True, slots=True)
class Released:
    hold_id: str
    amount: int
    balance: int


@dataclass(frozen=True, slots=True)
class Captured:
    hold_id: str
    amount: int
    reason: str
    balance: int


LedgerEvent = Credited | Debited | Held | Released | Captured


def _text(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_TEXT


def _amount(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_AMOUNT


def decide(ledger: Ledger, command: LedgerCommand) -> list[LedgerEvent] | Rejection:
    if isinstance(command, (Release, Capture)):
        if not _text(command.hold_id):
            return Rejection("bad_id")
        if isinstance(command, Capture) and not _text(command.reason):
            return Rejection("bad_reason")
        amount = ledger.holds.get(command.hold_id)
        if amount is None:
            # Released or captured already (a retry), or never held.
            return [] if command.hold_id in ledger.seen else Rejection("unknown_hold")
        if isinstance(command, Release):
            return [Released(command.hold_id, amount, ledger.balance + amount)]
        return [Captured(command.hold_id, amount, command.reason, ledger.balance)]
    ident = command.hold_id if isinstance(command, Hold) else command.movement_id
    if not _text(ident):
        return Rejection("bad_id")
    if not _amount(command.amount):
        return Rejection("bad_amount")
    if not _text(command.reason):
        return Rejection("bad_reason")
    if ident in ledger.seen:
        return []
    if isinstance(command, Credit):
        return [Credited(ident, command.amount, command.reason, ledger.balance + command.amount)]
    if command.amount > ledger.balance:
        return Rejection("insufficient_credits")
    after = ledger.balance - command.amount
    if isinstance(command, Debit):
        return [Debited(ident, command.amount, command.reason, after)]
    return [Held(ident, command.amount, command.reason, after)]


def apply(ledger: Ledger, event: LedgerEvent) -> Ledger:
    holds = dict(ledger.holds)
    if isinstance(event, Held):
        holds[event.hold_id] = event.amount
    elif isinstance(event, (Released, Captured)):
        del holds[event.hold_id]
    ident = event.movement_id if isinstance(event, (Credited, Debited)) else event.hold_id
    return replace(
        ledger, balance=event.balance, holds=MappingProxyType(holds), seen=ledger.seen | {ident}
    )


def season_prize_credits(season: str, prizes: Mapping[str, int]) -> dict[str, Credit]:
    """The credit of each prize winner's ledger (ids fixed by season and player, so paying the
    prizes twice pays them once)."""
    return {
        player: Credit(f"season-prize:{season}:{player}", amount, "season_prize")
        for player, amount in sorted(prizes.items())
        if amount > 0
    }
