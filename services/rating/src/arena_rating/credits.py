"""The credits ledgers (``credits-<player_id>`` streams) and the season prizes that feed them.

Each account's ledger is a stream of its own on ``arena.rating.events``, decided by the rating
service's stream runner beside the ladders (``arena_games.credits``: the balance never negative,
every movement an event, a movement id recorded once). The prize payer reads the ladders'
``SeasonClosed`` events (group ``rating.prizes``) and credits each prize to its player's ledger
with the movement id ``season-prize:<season>:<player>``, so a redelivered event pays nothing
twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena_games import credits as ledger_rules
from arena_runtime import topics
from arena_runtime.envelope import CODEC, Command, Event, new_command
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.host.consume import ConsumeWorker
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import CREDITS_PREFIX, credits_stream, season_prize_id
from arena_runtime.streams import Decision, Rejection

UNKNOWN_COMMAND = "unknown_command"
PRIZE_REASON = "season_prize"


@dataclass
class Account:
    player_id: str
    ledger: ledger_rules.Ledger = field(default_factory=ledger_rules.Ledger)


def initial(stream: str) -> Account:
    return Account(stream.removeprefix(CREDITS_PREFIX))


def decide(account: Account, command: Command) -> Decision:
    if not isinstance(command.payload, ledger_rules.COMMANDS):
        return Rejection(UNKNOWN_COMMAND, f"a credits ledger does not take {command.type}")
    decided = ledger_rules.decide(account.ledger, command.payload)
    if isinstance(decided, str):
        return Rejection(decided, f"{command.type} refused: {decided}")
    return decided


def apply(account: Account, event: Event) -> Account:
    account.ledger = ledger_rules.apply(account.ledger, event.payload)
    return account


@dataclass
class PrizePayer:
    """Season prizes to the ledgers: one ``CreditCredits`` per prize of a ``SeasonClosed``."""

    log: EventLog
    paid: int = 0

    async def handle(self, event: Event, record: Record) -> None:
        if not isinstance(event.payload, pb.SeasonClosed):
            return
        closed: pb.SeasonClosed = event.payload
        records = []
        for place in closed.places:
            if place.prize <= 0:
                continue
            movement = season_prize_id(closed.season, place.player_id)
            command = new_command(
                credits_stream(place.player_id),
                pb.CreditCredits(movement_id=movement, amount=place.prize, reason=PRIZE_REASON),
                command_id=movement,
                causation_id=event.event_id,
                correlation_id=event.correlation_id,
            )
            records.append(CODEC.command_record(command))
        if records:
            await self.log.append(topics.RATING_COMMANDS, records)
            self.paid += len(records)


def prize_worker(log: EventLog, service: str) -> ConsumeWorker[Event]:
    payer = PrizePayer(log)
    return ConsumeWorker(
        log,
        f"{service}.prizes",
        (topics.RATING_EVENTS,),
        CODEC.decode_event,
        payer.handle,
        name=f"{service}:prizes",
    )
