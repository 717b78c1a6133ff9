"""The matchmaking service: queues, rooms and ghosts. For now it consumes its topics."""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.host import Runtime, Service, Worker, command_worker, event_worker

NAME = "matchmaking"
COMMANDS = (topics.MATCHMAKING_COMMANDS,)
# A finished match frees its seats and feeds the ghost store.
EVENTS = (topics.MATCH_EVENTS,)


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    workers: list[Worker] = []
    if COMMANDS:
        workers.append(command_worker(runtime.log, NAME, COMMANDS))
    if EVENTS:
        workers.append(event_worker(runtime.log, NAME, EVENTS))
    return Service(NAME, workers)
