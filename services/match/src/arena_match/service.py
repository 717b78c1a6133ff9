"""The match service: the authority over every match, whatever its game.

It consumes ``arena.commands.match`` as the consumer group "match" (each instance answers the
commands of the partitions it owns), decides every command with the rules of the match's game
(``arena_games``, by the name its MatchOpened records) through a stream runner on
``arena.match.events``, and keeps the timers of its matches (move clock, game clock,
reconnect window, AI move, beat deadlines). See docs/services.md, "Match service".
"""

from __future__ import annotations

from collections.abc import Callable

from arena_games.registry import STANDARD
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import SCHEMAS
from arena_runtime.eventlog import EventLog
from arena_runtime.host import Runtime, Service
from arena_runtime.snapshots import SnapshotStore

from arena_match.clock import now_ms
from arena_match.decide import MatchSettings
from arena_match.runner import Decider, MatchRunner
from arena_match.worker import MatchWorker

NAME = "match"
#: What the service consumes: its command topic as the group "match" (no event topics).
COMMANDS = (topics.MATCH_COMMANDS,)
EVENTS: tuple[str, ...] = ()


def match_settings(settings: Settings) -> MatchSettings:
    return MatchSettings(
        reconnect_ms=round(settings.match_reconnect_seconds * 1000),
        ai_think_ms=settings.match_ai_think_ms,
    )


def build_worker(
    event_log: EventLog, settings: Settings, clock: Callable[[], int] = now_ms
) -> MatchWorker:
    """The worker of one instance; ``clock`` (server time in ms) is replaced only by tests."""
    STANDARD.register_schemas(SCHEMAS)
    runner = MatchRunner(event_log, Decider(match_settings(settings), clock))
    return MatchWorker(
        event_log,
        runner,
        settings.match_evict_seconds,
        clock,
        snapshots=SnapshotStore(event_log, topics.MATCH_EVENTS),
        snapshot_seconds=settings.match_snapshot_seconds,
        # The clocks' pushes as often as the gateway used to send its time_sync.
        tick_seconds=settings.ws_time_sync_seconds,
        spectator_lease_seconds=settings.spectator_lease_seconds,
    )


async def build_service(runtime: Runtime) -> Service:
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    return Service(NAME, [build_worker(runtime.log, runtime.settings)])
