"""The match service: the authority over every match. For now it consumes its command topic."""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.host import ConsumeWorker, Runtime, Service

NAME = "match"
CONSUMES = (topics.MATCH_COMMANDS,)


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    commands = ConsumeWorker(runtime.log, NAME, CONSUMES)
    return Service(NAME, [commands])
