"""The gateway's fan-out reader on the embedded log: one consumer for every route's topics, each
event handed to its own topic's handler, and nothing from before the reader started."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from arena_games.maths_warriors import wire as mws
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_gateway.fanout import FanoutReader
from arena_runtime import topics
from arena_runtime.envelope import CODEC, Event
from arena_runtime.eventlog.embedded import EmbeddedEventLog


def _event(stream: str, sequence: int) -> Event:
    payload = pb.TurnSkipped(player=1, reason="skip")
    return Event(
        event_id=f"{stream}-{sequence}",
        stream=stream,
        sequence=sequence,
        type=mws.type_name(type(payload)),
        payload=payload,
        time=datetime.now(UTC),
    )


async def test_each_route_gets_only_its_topics_new_events(tmp_path: Path) -> None:
    log = EmbeddedEventLog(tmp_path / "events.sqlite3")
    await log.start()
    try:
        await topics.ensure_topics(log, 2)
        before = _event("match-old", 1)
        await log.append(topics.MATCH_EVENTS, [CODEC.event_record(before)])
        matches: list[str] = []
        accounts: list[str] = []
        settled = {"matches": 0, "accounts": 0}
        all_three = asyncio.Event()

        async def to_matches(event: Event) -> None:
            matches.append(event.stream)
            if len(matches) + len(accounts) == 3:
                all_three.set()

        async def to_accounts(event: Event) -> None:
            accounts.append(event.stream)
            if len(matches) + len(accounts) == 3:
                all_three.set()

        def settle(name: str) -> None:
            settled[name] += 1

        reader = FanoutReader(
            log, "i1", (topics.MATCH_EVENTS,), to_matches, lambda: settle("matches")
        )
        reader.route((topics.ACCOUNTS_EVENTS,), to_accounts, lambda: settle("accounts"))
        with pytest.raises(ValueError, match="already has a route"):
            reader.route((topics.MATCH_EVENTS,), to_accounts)
        await reader.start()
        with pytest.raises(RuntimeError, match="before the reader starts"):
            reader.route((topics.MATCHMAKING_EVENTS,), to_accounts)
        running = asyncio.create_task(reader.run())
        try:
            for _ in range(1000):  # ready once every partition is assigned and positioned
                if reader.ready():
                    break
                await asyncio.sleep(0.01)
            assert reader.ready()
            await log.append(topics.MATCH_EVENTS, [CODEC.event_record(_event("match-m1", 1))])
            await log.append(topics.ACCOUNTS_EVENTS, [CODEC.event_record(_event("account-a", 1))])
            await log.append(topics.MATCH_EVENTS, [CODEC.event_record(_event("match-m2", 1))])
            await asyncio.wait_for(all_three.wait(), 10)
        finally:
            reader.request_stop()
            await running
        assert sorted(matches) == ["match-m1", "match-m2"]  # not match-old: before the start
        assert accounts == ["account-a"]
        assert settled["matches"] >= 1 and settled["accounts"] >= 1
    finally:
        await log.close()
