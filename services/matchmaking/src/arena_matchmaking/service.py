"""The matchmaking service: queues, rooms and ghosts. For now it consumes its topics."""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.host import ConsumeWorker, Runtime, Service

NAME = "matchmaking"
# Its own commands, and match events (a finished match frees its seats and feeds the ghost store).
CONSUMES = (topics.MATCHMAKING_COMMANDS, topics.MATCH_EVENTS)


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    worker = ConsumeWorker(runtime.log, NAME, CONSUMES)
    return Service(NAME, [worker])
