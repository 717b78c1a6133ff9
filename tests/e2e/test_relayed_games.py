"""Matrix Games and the Maze played through real WebSockets against every service in this process
(embedded log): rooms made by the lobby, the views made by the match service and relayed by the
gateway, each person's seat played by the game's own bot on exactly what its socket is pushed.

Matrix Games: two people and six scripted seats play a whole episode while a spectator, who came
by the room's code, receives every beat; a seat that stops answering is played by the fallback;
the replay served is the engine's. The Maze: two players race while an observer watches.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_games.contract import Viewer
from arena_games.matrix_games.bot import MatrixGamesBot
from arena_games.matrix_games.replay import replay_bytes
from arena_games.maze.bot import MazeBot
from arena_match.state import stream_of
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, new_command
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import REJECTED_TYPE, is_next

from tests.e2e.client import WAIT, Player, signed_in
from tests.e2e.servers import arena, settings_for

SERVICES = ("gateway", "match", "matchmaking", "rating", "projections")
#: A short episode: three beats of ten ticks, no pacing.
EPISODE = {"beats": 3, "ticks_per_beat": 10, "min_beat_seconds": 0}
_seeds = itertools.count(11)
#: Messages and pushes a seat may take before the test calls the match stuck.
MAX_MESSAGES = 3000

MATCH_COMMANDS = topics.MATCH_COMMANDS
HUMAN = match_pb2.SEAT_KIND_HUMAN
CASUAL = match_pb2.MATCH_MODE_CASUAL


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # The Maze's bots move as fast as their views come (no cooldown): past 10 messages a second.
    # Spectators' pushes are made for a lease of 1 s, which the gateway renews every third of a
    # second: the spectators below watch for longer.
    return settings_for(
        Path(tmp_path_factory.mktemp("relayed")),
        projection_poll_ms=50,
        ws_rate_limit=1000,
        spectator_lease_seconds=1,
    )


@pytest.fixture(scope="module")
async def url(settings: Settings) -> AsyncIterator[str]:
    async with arena(settings, SERVICES) as base:
        yield base


async def next_push(player: Player, wait: float = WAIT) -> dict[str, Any]:
    """The oldest push of the game not taken yet (the room's lobby pushes are passed over)."""

    async def first() -> dict[str, Any]:
        async with player._arrived:
            while True:
                while not player.pushes:
                    if player._failure is not None:  # e.g. a push its schema refuses
                        raise RuntimeError("the test client's reader failed") from player._failure
                    await player._arrived.wait()
                push = player.pushes.pop(0)
                if push["type"] != "lobby":
                    return push

    return await asyncio.wait_for(first(), wait)


async def play_seat(player: Player, bot: Any, done: Any, *, answer: bool = True) -> list[Any]:
    """Play a seat with the game's bot on what the socket is pushed until ``done(push)``; every
    push is kept. ``answer`` False: the seat never says a thing (it still reads)."""
    seen: list[dict[str, Any]] = []
    for _ in range(MAX_MESSAGES):
        # Nothing is said before the match's first push: the socket follows the match from it.
        reply = bot.reply(next(_seeds)) if answer and seen else None
        if reply is not None:
            kind = reply.pop("type")
            result = await player.request(kind, **reply)
            # What the command caused was pushed before its ack: seen before the next reply.
            while any(p["type"] != "lobby" for p in player.pushes):
                push = await next_push(player)
                seen.append(push)
                bot.observe(push)
                if done(push):
                    return seen
            assert result["type"] == "ack" or result["code"] in (
                "deadline_passed",
                "beat_not_open",
                "past_beat",
                "game_over",
                "episode_over",
                "not_playing",
            ), result
            continue
        push = await next_push(player)
        seen.append(push)
        bot.observe(push)
        if done(push):
            return seen
    raise AssertionError(f"the match did not end in {MAX_MESSAGES} messages")


async def matrix_room(
    url: str, players: list[Player], **settings: int
) -> tuple[str, str, dict[int, Player]]:
    """A Matrix Games room taken by ``players`` and started (six scripted seats): the code,
    the match id and who sits where."""
    host = players[0]
    code = (await host.ok("create_room", game="matrix-games", settings=settings))["code"]
    for player in players[1:]:
        await player.ok("join_room", code=code)
    match_id = (await host.ok("start_room"))["match_id"]
    by_id = {p.player_id: p for p in players}
    started = await host.push("lobby", event="room_match_started")
    seats = {
        n: by_id[s["player_id"]]
        for n, s in enumerate(started["data"]["seats"], start=1)
        if s["player_id"] in by_id
    }
    return code, match_id, seats


def final(push: dict[str, Any]) -> bool:
    return push.get("type") == "final"


async def match_events(settings: Settings, match_id: str) -> list[Any]:
    stream = stream_of(match_id)
    async with open_event_log(settings) as log:
        ends = await log.end_offsets(topics.MATCH_EVENTS)
        partition = partition_for(stream.encode(), len(ends))
        records = []
        offset = 0
        while offset < ends[partition]:
            batch = await log.read(topics.MATCH_EVENTS, partition, offset, 1000)
            records += [r for r in batch if r.key == stream.encode()]
            offset = batch[-1].offset + 1
    events, sequence, batch_id = [], 0, ""
    for record in records:
        event = CODEC.decode_event(record.value)
        if is_next(event, sequence, batch_id):
            sequence, batch_id = event.sequence, event.batch_id
            if event.type != REJECTED_TYPE:
                events.append(event)
    return events


async def test_a_matrix_episode_two_people_six_scripted_and_a_spectator(
    url: str, settings: Settings
) -> None:
    host, guest, spectator = await signed_in(url), await signed_in(url), await signed_in(url)
    code, match_id, seats = await matrix_room(url, [host, guest], **EPISODE)
    assert sorted(seats) == [1, 2]
    watched = await spectator.ok("watch_room", code=code)
    assert watched["match_id"] == match_id
    assert (await spectator.ok("watch_match", match_id=match_id)) == {
        "match_id": match_id,
        "game": "matrix-games",
        "seat": False,
    }
    bots = {n: MatrixGamesBot(Viewer(n)) for n in seats}
    shown = await asyncio.gather(
        *(play_seat(seats[n], bots[n], final) for n in sorted(seats)),
    )
    for number, pushes in zip(sorted(seats), shown, strict=True):
        kinds = [p["type"] for p in pushes]
        assert kinds[0] == "welcome" and pushes[0]["slot"] == number - 1
        states = [p for p in pushes if p["type"] == "state"]
        # The seat's own observation at every beat boundary, and once settled.
        assert [s["beat"] for s in states] == [0, 1, 2, 3]
        assert all(s["match_id"] == match_id for s in pushes)
        assert {p["slot"] for p in pushes if p["type"] == "order_accepted"} == {number - 1}
    # The spectator: the frame it came to, then two per beat (orders installed, then played).
    frames: list[dict[str, Any]] = []
    while not (frames and frames[-1]["done"]):
        frames.append(await next_push(spectator))
    assert {f["protocol"] for f in frames} == {"matrix.global.v1"}
    played = [f["beats_played"] for f in frames]
    assert set(range(0, 4)) <= set(played) and played == sorted(played)
    assert all(seat["intent"] != "hold" for f in frames for seat in f["seats"])
    # The replay served is the engine's bytes for that seed and those orders (once the read
    # models have the whole episode: they follow the log a moment behind; 409
    # match_in_progress until they have its end).
    payloads = [e.payload for e in await match_events(settings, match_id)]
    expected = replay_bytes(payloads)
    assert b'"ending":"full_match"' in expected
    headers = {"Authorization": f"Bearer {spectator.token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers) as http:
        async with asyncio.timeout(30):
            while (answer := await http.get(f"/v1/matches/{match_id}/replay")).content != expected:
                assert answer.status_code in (200, 404, 409), answer.text
                await asyncio.sleep(0.1)
    for player in (host, guest, spectator):
        await player.close()


async def test_a_matrix_seat_that_stops_answering_is_played_by_the_fallback(url: str) -> None:
    active, silent = await signed_in(url), await signed_in(url)
    _, match_id, seats = await matrix_room(
        url, [active, silent], **{**EPISODE, "beats": 2, "decision_timeout_seconds": 1}
    )
    number = {player.player_id: n for n, player in seats.items()}
    bots = {p.player_id: MatrixGamesBot(Viewer(number[p.player_id])) for p in (active, silent)}
    # The silent seat joins (its client is there), then never orders.
    welcome = await silent.push("welcome")
    assert welcome["match_id"] == match_id
    await silent.ok("matrix_join")
    bots[silent.player_id].joined = True
    shown, quiet = await asyncio.gather(
        play_seat(active, bots[active.player_id], final),
        play_seat(silent, bots[silent.player_id], final, answer=False),
    )
    (ended,) = [p for p in quiet if p["type"] == "final"]
    assert ended["match_id"] == match_id and ended["beats"] == 2
    # Its seat was never confirmed an order: the deadline played it by the fallback.
    assert not [p for p in quiet if p["type"] == "order_accepted"]
    assert [p for p in shown if p["type"] == "order_accepted"]
    for player in (active, silent):
        await player.close()


async def test_a_maze_match_between_two_bots_with_an_observer(url: str) -> None:
    host, guest, observer = await signed_in(url), await signed_in(url), await signed_in(url)
    code = (
        await host.ok(
            "create_room",
            game="maze",
            # A countdown past the spectators' lease: the observer is shown the play's start
            # only if the gateway renewed it.
            settings={"width": 7, "height": 7, "cooldown_ms": 0, "countdown_ms": 2500},
        )
    )["code"]
    await observer.ok("watch_room", code=code)
    await guest.ok("join_room", code=code)
    started = await observer.push("lobby", event="room_match_started")
    match_id = started["data"]["match_id"]
    watched = await observer.ok("watch_match", match_id=match_id)
    assert watched["game"] == "maze" and watched["seat"] is False
    by_id = {host.player_id: host, guest.player_id: guest}
    seats = {n: by_id[s["player_id"]] for n, s in enumerate(started["data"]["seats"], start=1)}

    def decided(push: dict[str, Any]) -> bool:
        return (
            push.get("type") == "maze_view"
            and push.get("phase") == "over"
            and push["chunk"] == push["chunks"] - 1
        )

    shown = await asyncio.gather(
        *(play_seat(seats[n], MazeBot(Viewer(n)), decided) for n in (1, 2))
    )
    for pushes in shown:
        assert pushes[0]["type"] == "maze_match" and pushes[0]["match_id"] == match_id
    # The observer was shown the whole match, the decided view at the end.
    seen: list[dict[str, Any]] = []
    while not (seen and decided(seen[-1])):
        seen.append(await next_push(observer))
    assert seen[0]["type"] == "maze_match" and seen[0]["role"] == "observer"
    assert sum(1 for p in seen if p["type"] == "maze_view") > len(shown[0]) // 4
    for player in (host, guest, observer):
        await player.close()


async def test_a_watch_asked_before_its_match_opens_gets_the_match(
    url: str, settings: Settings
) -> None:
    """A room announces its match before matchmaking's StartMatch reaches the match service, so a
    watcher told at once can ask first: that watch is answered with the match once it opens, not
    refused ``match_not_found``. Here the StartMatch is appended (as matchmaking would) only after
    the watch's own request is in the log, ahead of it in the match's partition."""
    spectator = await signed_in(url)
    match_id = uuid.uuid4().hex
    stream = stream_of(match_id)
    watching = asyncio.create_task(spectator.ok("watch_match", match_id=match_id))
    async with open_event_log(settings) as log:
        await _commanded(log, stream)
        seats = [
            match_pb2.MatchSeat(player_id=f"p{n}", display_name=f"P{n}", kind=HUMAN) for n in (1, 2)
        ]
        opened = match_pb2.StartMatch(match_id=match_id, game="maze", seats=seats, mode=CASUAL)
        await log.append(
            MATCH_COMMANDS,
            [CODEC.command_record(new_command(stream, opened, command_id=f"create:{match_id}"))],
        )
    assert await watching == {"match_id": match_id, "game": "maze", "seat": False}
    assert (await spectator.push("maze_match"))["role"] == "observer"
    await spectator.close()


async def _commanded(log: Any, stream: str) -> None:
    """Until a command to ``stream`` is in the commands topic. This is another handle on the log
    than the served one's, with no event to wait on: it reads every 20 ms."""
    partition = partition_for(stream.encode(), len(await log.end_offsets(MATCH_COMMANDS)))
    start = max(0, (await log.end_offsets(MATCH_COMMANDS))[partition] - 1)
    for _ in range(1500):
        if any(r.key == stream.encode() for r in await log.read(MATCH_COMMANDS, partition, start)):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"no command to {stream} in 30 s")
