"""The rating service: the single writer of every rating (docs/architecture.md, "Rating service").

Two consumers in one service. The match-event member (group ``rating.events``) turns each
finished match into a ``RateMatch`` command on the ladder of its game (``arena_rating.results``).
The command member (group ``rating``) answers those commands through a stream runner on
``arena.rating.events``: each ladder is one stream, so one partition and one writer, and every
rating is the fold of that stream (``arena_rating.ladder``).
"""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.eventlog import EventLog
from arena_runtime.host import Runtime, Service, Worker, command_worker, event_worker
from arena_runtime.schemas import rating as _rating  # noqa: F401  (registers the payloads)
from arena_runtime.streams import StreamRunner

from arena_rating import ladder
from arena_rating.results import ResultReader

NAME = "rating"
COMMANDS = (topics.RATING_COMMANDS,)
EVENTS = (topics.MATCH_EVENTS,)


def ladder_runner(log: EventLog) -> StreamRunner[ladder.Ladder]:
    """The stream runner of the ladders (the only writer of ``arena.rating.events``)."""
    return StreamRunner(
        log,
        topics.RATING_EVENTS,
        initial=ladder.initial,
        apply=ladder.apply,
        decide=ladder.decide,
    )


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    runner = ladder_runner(runtime.log)
    reader = ResultReader(runtime.log)
    workers: list[Worker] = [
        command_worker(runtime.log, NAME, COMMANDS, runner.handle_record),
        event_worker(runtime.log, NAME, EVENTS, reader.handle),
    ]
    return Service(NAME, workers)
