"""The matchmaking service: rooms with codes, the quick-match queue, AI games and rematches.

It consumes ``arena.commands.matchmaking`` as the consumer group "matchmaking" and
``arena.match.events`` as "matchmaking.events" (to learn when a room's match ended), keeps the
lobby directory current and fires the room timers. See docs/services.md, "Matchmaking
service".
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from arena_games.registry import READING, STANDARD
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import SCHEMAS, TypeFilter, now
from arena_runtime.eventlog import EventLog
from arena_runtime.host import Runtime, Service, Worker
from arena_runtime.host.consume import ConsumeWorker

from arena_matchmaking.directory import DirectoryWorker
from arena_matchmaking.matchmaking import Matchmaking, match_event_payloads
from arena_matchmaking.worker import CommandWorker

NAME = "matchmaking"
#: Finished matches (rooms), what games file in their ghost stores (``ghosts.files``) and the
#: ratings of those games (what their ghosts are frozen with).
EVENTS = (topics.MATCH_EVENTS, topics.RATING_EVENTS)


def build_workers(
    event_log: EventLog, settings: Settings, clock: Callable[[], datetime] = now
) -> tuple[Matchmaking, list[Worker]]:
    """The instance and its workers; ``clock`` is replaced only by tests."""
    matchmaking = Matchmaking(event_log, settings, clock)
    directory = DirectoryWorker(matchmaking.directory)
    matchmaking.timers.may_fire = directory.ready
    workers: list[Worker] = [
        directory,
        CommandWorker(event_log, NAME, matchmaking),
        # A finished match becomes a command to its room: nothing there spans partitions.
        ConsumeWorker(
            event_log,
            f"{NAME}.events",
            EVENTS,
            READING.decode_event,  # MatchEnded, whichever shape the log holds
            matchmaking.handle_match_event,
            name=f"{NAME}:events",
            concurrent_partitions=True,
            linger=settings.event_consumer_linger_ms / 1000,
            # A move's events are most of the topic: left unread, by their type header.
            skip=TypeFilter.for_payloads(READING.schemas, match_event_payloads()),
        ),
        matchmaking.timers,
    ]
    return matchmaking, workers


async def build_service(runtime: Runtime) -> Service:
    STANDARD.register_schemas(SCHEMAS)
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    _, workers = build_workers(runtime.log, runtime.settings)
    return Service(NAME, workers)
