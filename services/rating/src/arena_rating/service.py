"""The rating service: the single writer of every rating (docs/services.md, "Rating service").

Two consumers in one service. The match-event member (group ``rating.events``) turns each
finished match into a ``RateMatch`` command on the ladder of its game (``arena_rating.results``).
The command member (group ``rating``) answers those commands through a stream runner on
``arena.rating.events``: each ladder is one stream, so one partition and one writer, and every
rating is the fold of that stream (``arena_rating.ladder``). A third worker, the season clock
(``arena_rating.seasons``), sends ``CloseSeason`` when a season of a per-combat ladder is over;
a fourth, the prize payer (``arena_rating.credits``), credits each prize of a closed season to its
player's credits ledger, a stream of its own decided by the same runner.
"""

from __future__ import annotations

from arena_games.registry import READING, STANDARD
from arena_runtime import topics
from arena_runtime.envelope import SCHEMAS, Command, Event
from arena_runtime.eventlog import EventLog
from arena_runtime.host import Runtime, Service, Worker, command_worker, event_worker
from arena_runtime.schemas import rating as _rating  # noqa: F401  (registers the payloads)
from arena_runtime.schemas.rating import CREDITS_PREFIX
from arena_runtime.streams import Decision, StreamRunner

from arena_rating import credits, ladder
from arena_rating.results import ResultReader
from arena_rating.seasons import SeasonClock

NAME = "rating"
COMMANDS = (topics.RATING_COMMANDS,)
EVENTS = (topics.MATCH_EVENTS,)


State = ladder.Ladder | credits.Account


def initial(stream: str) -> State:
    if stream.startswith(CREDITS_PREFIX):
        return credits.initial(stream)
    return ladder.initial(stream)


def decide(state: State, command: Command) -> Decision:
    if isinstance(state, credits.Account):
        return credits.decide(state, command)
    return ladder.decide(state, command)


def apply(state: State, event: Event) -> State:
    if isinstance(state, credits.Account):
        return credits.apply(state, event)
    return ladder.apply(state, event)


def ladder_runner(log: EventLog) -> StreamRunner[State]:
    """The stream runner of the ladders and the credits ledgers (the only writer of
    ``arena.rating.events``)."""
    return StreamRunner(log, topics.RATING_EVENTS, initial=initial, apply=apply, decide=decide)


async def build_service(runtime: Runtime) -> Service:
    STANDARD.register_schemas(SCHEMAS)
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    runner = ladder_runner(runtime.log)
    reader = ResultReader(runtime.log)
    workers: list[Worker] = [
        command_worker(
            runtime.log, NAME, COMMANDS, runner.handle_record, on_gain=runner.catch_up_partition
        ),
        event_worker(runtime.log, NAME, EVENTS, reader.handle, codec=READING),
        SeasonClock(runtime.log),
        credits.prize_worker(runtime.log, NAME),
    ]
    return Service(NAME, workers)
