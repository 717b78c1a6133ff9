"""The accounts writer: a stream runner over ``arena.accounts.events`` fed by the command
consumer group ``accounts``, running in the gateway process.

Each account stream lives on one partition and the group gives each partition to one gateway
instance, so each account has one writer; a zombie writer after a rebalance loses every race by
the log's first-in-order rule (``arena_runtime.streams``).
"""

from __future__ import annotations

from arena_runtime import topics
from arena_runtime.envelope import Command
from arena_runtime.eventlog import EventLog
from arena_runtime.host import ConsumeWorker, command_worker
from arena_runtime.schemas import accounts as _accounts  # noqa: F401  (registers the payloads)
from arena_runtime.streams import StreamRunner

from arena_gateway.accounts import stream
from arena_gateway.accounts.stream import Account

GROUP = "accounts"


def account_runner(log: EventLog) -> StreamRunner[Account]:
    return StreamRunner(
        log,
        topics.ACCOUNTS_EVENTS,
        initial=stream.initial,
        apply=stream.apply,
        decide=stream.decide,
    )


def accounts_worker(log: EventLog, runner: StreamRunner[Account]) -> ConsumeWorker[Command]:
    """The member of group ``accounts`` that answers ``arena.commands.accounts``."""
    return command_worker(log, GROUP, (topics.ACCOUNTS_COMMANDS,), runner.handle_record)
