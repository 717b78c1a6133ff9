"""The match service: the authority over every match. For now it consumes its command topic."""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.host import Runtime, Service, Worker, command_worker, event_worker

NAME = "match"
COMMANDS = (topics.MATCH_COMMANDS,)
EVENTS: tuple[str, ...] = ()


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    workers: list[Worker] = []
    if COMMANDS:
        workers.append(command_worker(runtime.log, NAME, COMMANDS))
    if EVENTS:
        workers.append(event_worker(runtime.log, NAME, EVENTS))
    return Service(NAME, workers)
