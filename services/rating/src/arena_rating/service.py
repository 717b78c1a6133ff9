"""The rating service: Elo, seasons, leaderboards. For now it consumes its topics."""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.host import ConsumeWorker, Runtime, Service

NAME = "rating"
# Its own commands (voids, season rollover), and match events (results to rate).
CONSUMES = (topics.RATING_COMMANDS, topics.MATCH_EVENTS)


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    worker = ConsumeWorker(runtime.log, NAME, CONSUMES)
    return Service(NAME, [worker])
