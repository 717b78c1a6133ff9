"""The credits ledger on the wire: ``arena_engine.digits.credits`` (the aggregate: balance never
negative, every movement an event, a recorded movement id changes nothing) over rating.proto's
ledger commands and events. Credits are an account's, whatever the game: Digits' season prizes
and duel stakes use them. The rating service runs it on ``credits-<player_id>`` streams.
"""

from __future__ import annotations

from arena_engine.digits import credits as engine
from arena_engine.digits.commands import Rejection as EngineRejection
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from google.protobuf.message import Message

Ledger = engine.Ledger
COMMANDS = (pb.CreditCredits, pb.DebitCredits, pb.HoldCredits, pb.ReleaseCredits, pb.CaptureCredits)


def _command(message: Message) -> engine.LedgerCommand:
    if isinstance(message, pb.CreditCredits):
        return engine.Credit(message.movement_id, message.amount, message.reason)
    if isinstance(message, pb.DebitCredits):
        return engine.Debit(message.movement_id, message.amount, message.reason)
    if isinstance(message, pb.HoldCredits):
        return engine.Hold(message.hold_id, message.amount, message.reason)
    if isinstance(message, pb.ReleaseCredits):
        return engine.Release(message.hold_id)
    if isinstance(message, pb.CaptureCredits):
        return engine.Capture(message.hold_id, message.reason)
    raise TypeError(f"not a ledger command: {type(message).__name__}")


def command_to_proto(command: engine.LedgerCommand) -> Message:
    """A ledger command as the rating service takes it (``credits-<player>``)."""
    if isinstance(command, engine.Credit):
        return pb.CreditCredits(
            movement_id=command.movement_id, amount=command.amount, reason=command.reason
        )
    if isinstance(command, engine.Debit):
        return pb.DebitCredits(
            movement_id=command.movement_id, amount=command.amount, reason=command.reason
        )
    if isinstance(command, engine.Hold):
        return pb.HoldCredits(hold_id=command.hold_id, amount=command.amount, reason=command.reason)
    if isinstance(command, engine.Release):
        return pb.ReleaseCredits(hold_id=command.hold_id)
    return pb.CaptureCredits(hold_id=command.hold_id, reason=command.reason)


def _to_proto(event: engine.LedgerEvent) -> Message:
    if isinstance(event, engine.Credited):
        return pb.CreditsCredited(
            movement_id=event.movement_id,
            amount=event.amount,
            reason=event.reason,
            balance=event.balance,
        )
    if isinstance(event, engine.Debited):
        return pb.CreditsDebited(
            movement_id=event.movement_id,
            amount=event.amount,
            reason=event.reason,
            balance=event.balance,
        )
    if isinstance(event, engine.Held):
        return pb.CreditsHeld(
            hold_id=event.hold_id, amount=event.amount, reason=event.reason, balance=event.balance
        )
    if isinstance(event, engine.Released):
        return pb.CreditsReleased(hold_id=event.hold_id, amount=event.amount, balance=event.balance)
    return pb.CreditsCaptured(
        hold_id=event.hold_id, amount=event.amount, reason=event.reason, balance=event.balance
    )


def _of_proto(message: Message) -> engine.LedgerEvent | None:
    if isinstance(message, pb.CreditsCredited):
        return engine.Credited(message.movement_id, message.amount, message.reason, message.balance)
    if isinstance(message, pb.CreditsDebited):
        return engine.Debited(message.movement_id, message.amount, message.reason, message.balance)
    if isinstance(message, pb.CreditsHeld):
        return engine.Held(message.hold_id, message.amount, message.reason, message.balance)
    if isinstance(message, pb.CreditsReleased):
        return engine.Released(message.hold_id, message.amount, message.balance)
    if isinstance(message, pb.CreditsCaptured):
        return engine.Captured(message.hold_id, message.amount, message.reason, message.balance)
    return None


def decide(ledger: Ledger, command: Message) -> list[Message] | str:
    """The events of one ledger command, or the refusal's code (``insufficient_credits``,
    ``bad_amount``, ``bad_id``, ``bad_reason``, ``unknown_hold``)."""
    decided = engine.decide(ledger, _command(command))
    if isinstance(decided, EngineRejection):
        return decided.code
    return [_to_proto(e) for e in decided]


def apply(ledger: Ledger, event: Message) -> Ledger:
    folded = _of_proto(event)
    return ledger if folded is None else engine.apply(ledger, folded)
