"""`arena events tail`: follow event topics live, decoded, one JSON line per event.

It reads each partition from its end (or from the start) through the EventLog interface, outside
any consumer group (it commits nothing and moves no service's offsets), and prints the events
that pass the filters, as `arena events export` writes them in JSON Lines. Secrets are never
printed (arena_runtime.privacy); a record that does not decode is counted on stderr and skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arena_runtime import privacy
from arena_runtime.envelope import EnvelopeError, Event
from arena_runtime.eventlog import EventLog

from arena_cli.analytics.convert import GameOf, Rows, json_line


@dataclass(frozen=True)
class Filters:
    games: frozenset[str] = frozenset()
    #: Full type names (``arena.v1.MatchEnded``) or their last part (``MatchEnded``).
    types: frozenset[str] = frozenset()
    #: Exact stream ids, or prefixes ending in ``*`` (``match-*``).
    streams: tuple[str, ...] = ()
    #: A player id: events of the player's streams or naming them in an identifier field.
    player: str = ""

    def type_ok(self, type_: str) -> bool:
        return not self.types or type_ in self.types or type_.rsplit(".", 1)[-1] in self.types

    def stream_ok(self, stream: str) -> bool:
        if not self.streams:
            return True
        return any(
            stream.startswith(s[:-1]) if s.endswith("*") else stream == s for s in self.streams
        )

    def player_ok(self, stream: str, payload: dict[str, Any]) -> bool:
        if not self.player:
            return True
        if any(stream == f"{prefix}{self.player}" for prefix in privacy.IDENTIFYING_STREAMS):
            return True
        return _names(payload, self.player)


def _names(value: Any, player: str, identifier: bool = False) -> bool:
    if isinstance(value, dict):
        return any(
            _names(v, player, identifier or k in privacy.IDENTIFIER_FIELDS)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_names(v, player, identifier) for v in value)
    return identifier and value == player


async def tail(
    log: EventLog,
    topics: Sequence[str],
    filters: Filters,
    *,
    write: Callable[[str], None],
    from_start: bool = False,
    limit: int | None = None,
    poll_seconds: float = 0.2,
    stop: asyncio.Event | None = None,
    rows: Rows | None = None,
    follow: bool = True,
    ready: asyncio.Event | None = None,
) -> int:
    """Print matching events until ``limit`` of them (None: for ever), ``stop`` is set, or,
    not following, the ends of the topics are reached; how many were printed. ``ready`` is set
    once the starting offsets are taken (what is appended after it is printed)."""
    from arena_cli.analytics.convert import reading_schemas

    rows = rows or Rows(reading_schemas())
    games = GameOf(rows.schemas)
    positions: dict[tuple[str, int], int] = {}
    for topic in topics:
        for partition, end in sorted((await log.end_offsets(topic)).items()):
            positions[(topic, partition)] = 0 if from_start else end
    if ready is not None:
        ready.set()
    printed = malformed = 0
    while stop is None or not stop.is_set():
        quiet = True
        for (topic, partition), offset in positions.items():
            records = await log.read(topic, partition, offset, 500)
            if not records:
                continue
            quiet = False
            positions[(topic, partition)] = records[-1].offset + 1
            for record in records:
                try:
                    event: Event = rows.codec.decode_event(record.value)
                except EnvelopeError:
                    malformed += 1
                    print(f"arena events tail: {malformed} undecodable records", file=sys.stderr)
                    continue
                game = games(event.stream, event.type, event.payload)
                if filters.games and game not in filters.games:
                    continue
                if not filters.type_ok(event.type) or not filters.stream_ok(event.stream):
                    continue
                payload = rows.payload(event.type, event.payload)
                if not filters.player_ok(event.stream, payload):
                    continue
                row = rows.envelope(topic, partition, record.offset, event)
                write(json_line({"type": event.type, "game": game, **row, **payload}))
                printed += 1
                if limit is not None and printed >= limit:
                    return printed
        if quiet:
            if not follow:
                return printed
            if stop is None:
                await asyncio.sleep(poll_seconds)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), poll_seconds)
    return printed
