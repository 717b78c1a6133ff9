"""The gateway service: the HTTP app clients talk to, and the events it will push back to them."""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.host import ConsumeWorker, Runtime, Service

from arena_gateway.app import create_app

NAME = "gateway"
# Every event topic a client may see something from, for the WebSocket push.
CONSUMES = (topics.MATCH_EVENTS, topics.MATCHMAKING_EVENTS, topics.RATING_EVENTS)


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    events = ConsumeWorker(runtime.log, NAME, CONSUMES)
    service = Service(NAME, [events])
    service.http_app = create_app(service)
    return service
