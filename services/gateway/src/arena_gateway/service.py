"""The gateway service: the HTTP/WebSocket app, the fan-out reader and the socket timers."""

from __future__ import annotations

import uuid

from arena_runtime import topics
from arena_runtime.host import Runtime, Service, Worker
from arena_runtime.sql import session_factory

from arena_gateway.accounts.setup import attach_accounts, mount_accounts
from arena_gateway.app import create_app
from arena_gateway.fanout import FanoutReader
from arena_gateway.gateway import Gateway, PreviewRelay, SessionEndRelay, Ticker
from arena_gateway.hub import Hub

NAME = "gateway"
# Every event topic a client may see something from, for the WebSocket push.
EVENTS = (topics.MATCH_EVENTS, topics.MATCHMAKING_EVENTS)


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    settings = runtime.settings
    hub = Hub(runtime.log, settings.command_timeout_seconds)
    gateway = Gateway(settings, hub, runtime.cache)
    instance = uuid.uuid4().hex[:12]
    fanout = FanoutReader(runtime.log, instance, EVENTS, hub.deliver, hub.settle)
    accounts, accounts_workers = attach_accounts(runtime, gateway.sessions, fanout)
    accounts.session_ended = gateway.end_session
    workers: list[Worker] = [
        fanout,
        Ticker("gateway:heartbeat", settings.ws_heartbeat_seconds, gateway.beat),
        Ticker("gateway:time-sync", settings.ws_time_sync_seconds, gateway.time_sync),
        Ticker("gateway:sessions", settings.ws_session_check_seconds, gateway.check_sessions),
        PreviewRelay(gateway),
        SessionEndRelay(gateway),
        *accounts_workers,
    ]
    service = Service(NAME, workers)
    service.http_app = create_app(service, gateway)
    mount_accounts(service.http_app, accounts)
    service.http_app.state.read_sessions = session_factory(runtime.db)  # for read_api
    return service
