"""The AsyncAPI catalogue of the topics: current with the code, and listing every message the
real services produce (played here through the gateway and by the simulation)."""

from __future__ import annotations

from pathlib import Path

import httpx
from arena_cli.analytics.catalogue import DOCUMENT, channels, render, types_by_topic
from arena_cli.analytics.simulate import wait_for_ratings
from arena_runtime import topics
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log

from tests.analytics.conftest import EveryGame, arena_env, run_arena
from tests.conftest import REPO_ROOT
from tests.e2e.client import signed_in
from tests.e2e.games import Mirror, play_to_the_end
from tests.e2e.servers import arena, settings_for


def checked_in() -> str:
    return (REPO_ROOT / DOCUMENT).read_text()


def test_the_document_is_the_one_the_registry_makes() -> None:
    assert checked_in() == render(), (
        "run `arena events catalogue --write docs/asyncapi-events.yaml`"
    )


def test_the_cli_checks_drift(tmp_path: Path) -> None:
    env = arena_env(tmp_path)
    assert (
        run_arena(["events", "catalogue", "--check", str(REPO_ROOT / DOCUMENT)], env).returncode
        == 0
    )
    stale = tmp_path / "stale.yaml"
    stale.write_text(checked_in().replace("arena.v1.MindAttacked", "arena.v1.MindAttacked2"))
    done = run_arena(["events", "catalogue", "--check", str(stale)], env)
    assert done.returncode == 1 and "arena events catalogue --write" in done.stderr


def test_every_registered_type_has_a_topic() -> None:
    listed = {channel.topic: channel.types for channel in channels()}
    assert set(listed) == set(topics.ALL)
    assert "arena.v1.GameEnded" in listed[topics.MATCH_EVENTS]  # written before the seam
    assert "arena.v1.CommandRejected" in listed[topics.RATING_EVENTS]
    assert "arena.v1.RateMatch" in listed[topics.RATING_COMMANDS]
    # A game's commands that other services send (Digits' drawn army) go to its matches too.
    assert "arena.games.digits.v1.DrawArmy" in listed[topics.MATCH_COMMANDS]


async def produced(log: EventLog) -> dict[str, set[str]]:
    """Topic -> the payload types of its records (the arena-type header, and the envelope's type
    where they are decoded)."""
    seen: dict[str, set[str]] = {}
    for topic in topics.ALL:
        types = seen.setdefault(topic, set())
        for partition, end in (await log.end_offsets(topic)).items():
            offset = 0
            while offset < end:
                records = await log.read(topic, partition, offset, 1000)
                if not records:
                    break
                for record in records:
                    header = record.header("arena-type")
                    assert header is not None, f"{topic}/{partition}@{record.offset}"
                    types.add(header.decode())
                offset = records[-1].offset + 1
    return seen


def unlisted(seen: dict[str, set[str]]) -> dict[str, set[str]]:
    listed = types_by_topic(checked_in())
    return {topic: types - listed[topic] for topic, types in seen.items() if types - listed[topic]}


async def test_what_the_simulated_services_produce_is_listed(every_game: EveryGame) -> None:
    async with open_event_log(every_game.settings) as log:
        seen = await produced(log)
    assert {
        "arena.v1.GameStarted",
        "arena.v1.StrengthAttacked",
        "arena.games.digits.v1.CombatFought",
        "arena.games.matrix_games.v1.BeatPlayed",
        "arena.games.maze.v1.Moved",
    } <= seen[topics.MATCH_EVENTS]
    assert {"arena.v1.MatchRated", "arena.v1.UnitRated"} <= seen[topics.RATING_EVENTS]
    assert unlisted(seen) == {}


async def test_what_arena_serve_produces_is_listed(tmp_path: Path) -> None:
    """Every service in one process, on the embedded log: an account registers, signs in and
    out; two guests play a room game to the end; a guest plays the AI and resigns; two guests
    queue for a quick match."""
    settings = settings_for(tmp_path, match_ai_think_ms=20)
    async with arena(settings, ("gateway", "match", "matchmaking", "rating")) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            credentials = {"username": "Analyst1", "password": "correct horse battery"}
            (await http.post("/v1/accounts", json=credentials)).raise_for_status()
            session = (await http.post("/v1/sessions", json=credentials)).json()
            headers = {"Authorization": f"Bearer {session['token']}"}
            (await http.delete("/v1/sessions/current", headers=headers)).raise_for_status()
        host, guest = await signed_in(url), await signed_in(url)
        code = (await host.ok("create_room"))["code"]
        await guest.ok("join_room", code=code)
        snapshot = await host.push("snapshot")
        by_id = {host.player_id: host, guest.player_id: guest}
        seats = {s["seat"]: by_id[s["player_id"]] for s in snapshot["seats"]}
        await play_to_the_end(seats, Mirror.of(snapshot))
        solo = await signed_in(url)
        await solo.ok("play_ai", level="easy")
        await solo.push("snapshot")
        await solo.ok("resign")
        one, two = await signed_in(url), await signed_in(url)
        await one.ok("queue")
        await two.ok("queue")
        await one.push("snapshot")
        for player in (host, guest, solo, one, two):
            await player.close()
        async with open_event_log(settings) as log:
            await wait_for_ratings(log, 2)  # the room game's and the AI game's
    async with open_event_log(settings) as log:
        seen = await produced(log)
    for topic in topics.ALL:
        assert seen[topic], f"nothing was produced on {topic}: the test played too little"
    assert unlisted(seen) == {}
