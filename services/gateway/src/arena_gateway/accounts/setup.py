"""Plugging accounts into the gateway service: the writer, the reader of its answers, the token
fallback of the guests' session store, and the routes."""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.host import Runtime, Worker
from arena_runtime.sql import session_factory
from fastapi import FastAPI

from arena_gateway.accounts.routes import router
from arena_gateway.accounts.service import Accounts
from arena_gateway.accounts.writer import account_runner, accounts_worker
from arena_gateway.fanout import FanoutReader
from arena_gateway.hub import Hub
from arena_gateway.identity import SessionStore


def attach_accounts(
    runtime: Runtime, guests: SessionStore, fanout: FanoutReader
) -> tuple[Accounts, list[Worker]]:
    """The accounts of one gateway instance and the workers it needs.

    Answers are awaited through a hub of their own, fed by the instance's fan-out reader on a
    route of ``arena.accounts.events``, so the sockets' hub never sees account events.
    """
    runner = account_runner(runtime.log)
    hub = Hub(runtime.log, runtime.settings.command_timeout_seconds)
    fanout.route((topics.ACCOUNTS_EVENTS,), hub.deliver, hub.settle)
    accounts = Accounts(
        runtime.settings, hub, runtime.cache, guests, session_factory(runtime.db), runner
    )
    guests.fallback = accounts.resolve
    guests.journal = accounts
    return accounts, [accounts_worker(runtime.log, runner)]


def mount_accounts(app: FastAPI, accounts: Accounts) -> None:
    app.state.accounts = accounts
    app.include_router(router)
