"""The gateway service: the HTTP app clients talk to, and the events it will push back to them."""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.host import Runtime, Service, Worker, command_worker, event_worker

from arena_gateway.app import create_app

NAME = "gateway"
COMMANDS: tuple[str, ...] = ()
# Every event topic a client may see something from, for the WebSocket push.
EVENTS = (topics.MATCH_EVENTS, topics.MATCHMAKING_EVENTS, topics.RATING_EVENTS)


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    workers: list[Worker] = []
    if COMMANDS:
        workers.append(command_worker(runtime.log, NAME, COMMANDS))
    if EVENTS:
        workers.append(event_worker(runtime.log, NAME, EVENTS))
    service = Service(NAME, workers)
    service.http_app = create_app(service)
    return service
