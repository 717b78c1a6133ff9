"""The gateway service: the HTTP/WebSocket app, the fan-out reader and the socket timers."""

from __future__ import annotations

import uuid

from arena_games.registry import STANDARD
from arena_runtime import topics
from arena_runtime.envelope import SCHEMAS
from arena_runtime.host import Runtime, Service, Worker
from arena_runtime.sql import session_factory

from arena_gateway.accounts.setup import attach_accounts, mount_accounts
from arena_gateway.app import create_app
from arena_gateway.browser import CookieSessions, WebClient
from arena_gateway.connection import DirectSocket
from arena_gateway.fanout import FanoutReader
from arena_gateway.gateway import Gateway, SessionEndRelay, Ticker
from arena_gateway.hub import Hub

NAME = "gateway"
# The event topics a client may see something from, for the WebSocket push (a match's pushes
# come from arena.match.views, made by the match service).
EVENTS = (topics.MATCHMAKING_EVENTS,)


async def build_service(runtime: Runtime) -> Service:
    STANDARD.register_schemas(SCHEMAS)
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    settings = runtime.settings
    hub = Hub(runtime.log, settings.command_timeout_seconds, runtime.cache)
    gateway = Gateway(settings, hub, runtime.cache)
    instance = uuid.uuid4().hex[:12]
    fanout = FanoutReader(runtime.log, instance, EVENTS, hub.deliver, hub.settle)
    # What each viewer is shown, made by the match service: relayed as it comes.
    fanout.route_records((topics.MATCH_VIEWS,), hub.deliver_views)
    accounts, accounts_workers = attach_accounts(runtime, gateway.sessions, fanout)
    accounts.session_ended = gateway.end_session
    gateway.find_account = accounts.player_named
    workers: list[Worker] = [
        fanout,
        Ticker("gateway:heartbeat", settings.ws_heartbeat_seconds, gateway.beat),
        Ticker("gateway:sessions", settings.ws_session_check_seconds, gateway.check_sessions),
        # Spectators' pushes are made only while a gateway says someone watches.
        Ticker("gateway:spectators", settings.spectator_lease_seconds / 3, hub.renew_spectators),
        SessionEndRelay(gateway),
    ]
    # Ready without waiting for the accounts group's join (seconds on Kafka): the sockets need
    # only the fan-out, and an accounts command sent meanwhile waits in the log for its answer.
    service = Service(NAME, workers, background=accounts_workers)
    service.drain = gateway.drain
    service.degraded = hub.answering.degraded
    service.http_app = create_app(service, gateway)
    mount_accounts(service.http_app, accounts)
    service.http_app.state.read_sessions = session_factory(runtime.db)  # for read_api
    # The browser client (docs/client.md): its files at /, its session in a cookie.
    service.http_app.add_middleware(CookieSessions)
    service.http_app.add_middleware(WebClient, directory=settings.web_dir)
    # Outermost: a WebSocket's frames are then read and written without the layers beneath.
    service.http_app.add_middleware(DirectSocket)
    return service
