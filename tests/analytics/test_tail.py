"""`arena events tail`: live and from the start, on the embedded log and on Kafka, with its
filters; secrets are never printed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from arena_cli.analytics.tail import Filters, tail
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log

from tests.analytics import data
from tests.analytics.conftest import Simulated, arena_env, run_arena
from tests.analytics.test_export import prepared


async def lines(log: EventLog, filters: Filters, **options: object) -> list[dict[str, object]]:
    out: list[str] = []
    await tail(
        log, topics.EVENTS, filters, write=out.append, from_start=True, follow=False, **options
    )  # type: ignore[arg-type]
    return [json.loads(line) for line in out]


async def test_filters(simulated: Simulated, log_settings: Settings) -> None:
    log = await prepared(simulated, log_settings)
    try:
        everything = await lines(log, Filters())
        ended = await lines(log, Filters(types=frozenset({"MatchEnded"})))
        ladder = await lines(log, Filters(streams=("ladder-*",)))
        maze = await lines(log, Filters(games=frozenset({"maze"})))
        warriors = await lines(log, Filters(games=frozenset({"maths-warriors"})))
        opened = [e for e in everything if e["type"] == "arena.v1.MatchOpened"]
        player = opened[0]["seats"][0]["player_id"]  # type: ignore[index]
        theirs = await lines(log, Filters(player=player))
        account = await lines(log, Filters(player=data.PLAYER_ID))
    finally:
        await log.close()
    assert len(ended) == simulated.matches and {e["type"] for e in ended} == {"arena.v1.MatchEnded"}
    assert ladder and {e["stream"] for e in ladder} == {"ladder-maths-warriors"}
    assert maze == []
    assert len(warriors) == len(everything) - 2  # all but the account's two events
    seated = sum(any(s["player_id"] == player for s in e["seats"]) for e in opened)  # type: ignore[attr-defined]
    rated = sum(
        player in {(s.get("player") or s)["player_id"] for s in e["seats"]}  # type: ignore[attr-defined]
        for e in everything
        if e["type"] in ("arena.v1.MatchRated", "arena.v1.MatchRecorded")
    )
    assert seated and rated and len(theirs) == seated + rated
    assert [e["type"] for e in account] == ["arena.v1.AccountRegistered"]
    text = json.dumps(everything)
    assert data.PASSWORD_HASH not in text and data.TOKEN_HASH not in text


async def test_follows_what_is_appended(log_settings: Settings) -> None:
    async with open_event_log(log_settings) as log:
        await topics.ensure_topics(log, 4)
        await data.add_account(log)  # before the tail: not shown
        ready = asyncio.Event()
        out: list[str] = []
        following = asyncio.create_task(
            tail(
                log,
                topics.EVENTS,
                Filters(),
                write=out.append,
                limit=2,
                ready=ready,
                poll_seconds=0.02,
            )
        )
        await ready.wait()
        assert out == []
        await data.add_account(log)
        assert await asyncio.wait_for(following, 30) == 2
    assert [json.loads(line)["type"] for line in out] == [
        "arena.v1.AccountRegistered",
        "arena.v1.SessionOpened",
    ]


def test_the_command(simulated: Simulated, tmp_path: Path) -> None:
    env = arena_env(simulated.data_dir)
    done = run_arena(["events", "tail", "--from-start", "--no-follow", "--type", "MatchEnded"], env)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == simulated.matches
    bad = run_arena(["events", "tail", "--topic", "arena.commands.match"], env)
    assert bad.returncode == 2 and "not an event topic" in bad.stderr
