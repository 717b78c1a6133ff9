"""Other games through the same match service: a Matrix Games episode (one person, seven
scripted seats) and a Maze match (two people) started by StartMatch, played to their MatchEnded
by the games' own bots, their timers fired by the service, and verified by `arena verify`.

The bots see what the game's views show their seat, built here from the log the service wrote
(folded with the service's own ``apply``), and answer with the game's client messages turned
into commands by the game's ``client``: nothing in the service knows either game.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from arena_games.contract import GameModule, Viewer, pack
from arena_games.matrix_games import MODULE as MATRIX
from arena_games.maze import MODULE as MAZE
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mx
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as mz
from arena_match.state import MatchState, apply, final_of, stream_of
from arena_match.verify import verify_log
from arena_runtime.envelope import Event
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import REJECTED_TYPE
from google.protobuf.message import Message

from tests.games.play import client_message
from tests.services.match.harness import MatchClient, ServiceUnderTest

#: Decisions (commands and timers) a match may take before the test calls it stuck.
MAX_STEPS = 2000


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[ServiceUnderTest]:
    async with ServiceUnderTest(tmp_path) as running:
        yield running


def human(number: int) -> match_pb2.MatchSeat:
    return match_pb2.MatchSeat(
        player_id=f"p_{number}", display_name=f"Player {number}", kind=match_pb2.SEAT_KIND_HUMAN
    )


def scripted(number: int, policy: str) -> match_pb2.MatchSeat:
    return match_pb2.MatchSeat(
        player_id=f"bot-{number}",
        display_name=policy,
        kind=match_pb2.SEAT_KIND_SCRIPTED,
        policy=policy,
    )


class Table:
    """The people's seats of one match, each played by the game's bot on what it is shown."""

    def __init__(self, service: ServiceUnderTest, module: GameModule[Any], match_id: str) -> None:
        self.service = service
        self.client = MatchClient(service.log)
        self.module = module
        self.match_id = match_id
        self.state = MatchState()
        self.seen = 0
        self.bots: dict[Viewer, Any] = {}
        self.sent: list[Message] = []
        self.seeds = itertools.count(7)

    def _show(self, viewer: Viewer, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            self.bots[viewer].observe(message)

    async def read(self) -> list[Event]:
        """Fold the events written since the last read; push each to the bots."""
        events = await self.client.events(self.match_id)
        now = self.service.clock()
        for event in events[self.seen :]:
            if event.type == REJECTED_TYPE:
                continue
            self.state = apply(self.state, event)
            payload = event.payload
            if isinstance(payload, match_pb2.MatchOpened):
                self.bots = {
                    Viewer(seat.number): self.module.bot(Viewer(seat.number))
                    for seat in self.state.seats
                    if seat.human
                }
                continue
            if isinstance(payload, match_pb2.MatchEnded):
                payload = final_of(self.state, payload)
            table = self.state.table(event.sequence)
            for viewer in self.bots:
                self._show(
                    viewer, self.module.views.push(table, self.state.game, payload, viewer, now)
                )
        self.seen = len(events)
        return events

    async def play(
        self,
        start: match_pb2.StartMatch,
        opened_then: Callable[[], Awaitable[object]] | None = None,
    ) -> list[Event]:
        """Play the match to its end; ``opened_then``: awaited once it is opened."""
        opened = await self.client.command(self.match_id, start)
        assert opened.code is None, opened.code
        if opened_then is not None:
            await opened_then()
        await self.read()
        table = self.state.table(self.seen)
        for viewer in self.bots:
            self._show(
                viewer,
                self.module.views.snapshot(table, self.state.game, viewer, self.service.clock()),
            )
        for _ in range(MAX_STEPS):
            if self.state.over:
                # The match's events; a refusal after the end (a command or timer that raced
                # it) is the log's too, but no event of the match.
                events = await self.client.events(self.match_id)
                return [e for e in events if e.type != REJECTED_TYPE]
            if not await self._seat_acts():
                await self._next_timer()
            await self.read()
        raise AssertionError(f"{self.module.name}: no MatchEnded after {MAX_STEPS} steps")

    async def _seat_acts(self) -> bool:
        for viewer, bot in self.bots.items():
            reply = bot.reply(next(self.seeds))
            if reply is None:
                continue
            message = client_message(self.module, reply, f"m{next(self.seeds)}")
            command = self.module.client.command(message, self.state.seat(viewer.seat).player_id)
            answer = await self.client.command(self.match_id, command)
            if answer.code == "game_over":
                # A real-time game may end by its own clock (the service's timer) meanwhile.
                await self.read()
                assert self.state.over
                return True
            assert answer.code is None, (reply, answer.code)
            self.sent.append(command)
            return True
        return False

    async def _next_timer(self) -> None:
        """Nobody acts: move the service's clock to its next deadline and wait for its answer."""
        worker = self.service.worker
        assert worker is not None
        # The worker arms a stream's timers after the append the client already reads: a
        # loaded machine may ask between the two.
        for _ in range(1000):
            if armed := worker.timers.armed(stream_of(self.match_id)):
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError(f"{self.module.name}: nobody can act and nothing is due")
        self.service.advance(max(0, armed[0].due_ms - self.service.clock()) / 1000 + 0.001)
        last = self.seen
        await self.client.wait_for(self.match_id, lambda e: e.sequence > last)


async def test_a_matrix_games_episode_runs_through_the_match_service(
    service: ServiceUnderTest,
) -> None:
    settings = mx.MatrixGamesSettings(
        beats=3, ticks_per_beat=10, min_beat_seconds=0, player_connect_timeout_seconds=60
    )
    policies = (
        "counter",
        "tit-for-tat",
        "fixed-pick",
        "always-first",
        "always-second",
        "counter",
        "fixed-pick",
    )
    seats = [human(1), *(scripted(n, p) for n, p in zip(range(2, 9), policies, strict=True))]
    start = match_pb2.StartMatch(
        match_id="mx", game="matrix-games", seats=seats, settings=pack(settings)
    )
    table = Table(service, MATRIX, "mx")
    events = await table.play(start)

    opened = events[0].payload
    assert isinstance(opened, match_pb2.MatchOpened) and opened.game == "matrix-games"
    assert isinstance(events[1].payload, mx.EpisodeStarted)
    # The seed nobody gave was drawn by the service and recorded.
    assert events[1].payload.settings.seed != 0
    played = [e.payload for e in events if isinstance(e.payload, mx.BeatPlayed)]
    assert [beat.beat for beat in played] == [0, 1, 2] and played[-1].last
    # The person's seat ordered every beat through its client; the scripted seats by policy.
    assert all(beat.orders[0].source == "player" for beat in played)
    assert all(order.source == "scripted" for beat in played for order in beat.orders[1:])
    ended = events[-1].payload
    assert isinstance(ended, match_pb2.MatchEnded) and ended.game == "matrix-games"
    assert ended.reason == "complete" and ended.detail.Is(mx.EpisodeEnded.DESCRIPTOR)
    assert [s.seat for s in ended.seats] == list(range(1, 9))
    assert table.state.over and len(table.sent) == 4  # joined, then an order per beat
    report = await verify_log(service.log)
    assert report.ok(strict=True), report.problems


async def test_a_matrix_seat_that_stops_answering_plays_the_fallback(
    service: ServiceUnderTest,
) -> None:
    """Presence is the service's and reaches the rules: an away seat is not waited for, and the
    beat deadline the service fires plays it by the fallback policy; nobody forfeits."""
    settings = mx.MatrixGamesSettings(
        beats=2, ticks_per_beat=10, min_beat_seconds=0, player_connect_timeout_seconds=0
    )
    seats = [human(1), human(2), *(scripted(n, "counter") for n in range(3, 9))]
    client = MatchClient(service.log)
    start = match_pb2.StartMatch(
        match_id="fb", game="matrix-games", seats=seats, settings=pack(settings)
    )
    assert (await client.command("fb", start)).code is None
    gone = await client.command("fb", match_pb2.PlayerDisconnected(player_id="p_2"))
    assert gone.payloads == [
        match_pb2.PlayerDisconnected(player_id="p_2", seat=2, reconnect_deadline_ms=0)
    ]
    order = mx.GiveOrder(player_id="p_1", beat=0, intent="hold")
    assert (await client.command("fb", order)).code is None
    # Seat 1 ordered and seat 2 is away: the beat is played at once, seat 2 by the fallback.
    events = await client.events("fb")
    first = next(e.payload for e in events if isinstance(e.payload, mx.BeatPlayed))
    assert (first.orders[0].source, first.orders[1].source) == ("player", "fallback")
    resign = await client.command("fb", match_pb2.Resign(player_id="p_1"))
    assert resign.code == "no_forfeit"
    # Nobody orders beat 1: its deadline (a timer) plays it, and the episode completes.
    state = await client.events("fb")
    worker = service.worker
    assert worker is not None
    (due,) = worker.timers.armed(stream_of("fb"))
    assert due.command_id.startswith("timer:beat-1:")
    service.advance((due.due_ms - service.clock()) / 1000 + 0.001)
    end = await client.wait_for("fb", lambda e: isinstance(e.payload, match_pb2.MatchEnded))
    assert end.payload.reason == "complete" and end.sequence > state[-1].sequence
    assert worker.timers.armed(stream_of("fb")) == []
    report = await verify_log(service.log)
    assert report.ok(strict=True), [str(p) for p in report.problems]


async def test_a_maze_match_runs_through_the_match_service(service: ServiceUnderTest) -> None:
    settings = mz.MazeSettings(width=5, height=5, cooldown_ms=0, countdown_ms=1000)
    start = match_pb2.StartMatch(
        match_id="mz",
        game="maze",
        seats=[human(1), human(2)],
        mode=match_pb2.MATCH_MODE_RANKED,
        settings=pack(settings),
    )
    table = Table(service, MAZE, "mz")
    events = await table.play(start)

    assert events[0].payload.game == "maze" and isinstance(events[1].payload, mz.MazeStarted)
    # The countdown ended by the service's timer, then the bots raced to an exit.
    assert any(e.causation_id.startswith("timer:countdown:") for e in events)
    assert any(isinstance(e.payload, mz.Moved) for e in events)
    ended = events[-1].payload
    assert isinstance(ended, match_pb2.MatchEnded) and ended.game == "maze"
    assert ended.detail.Is(mz.MazeDecided.DESCRIPTOR)
    assert sorted(s.rank for s in ended.seats) in ([1, 2], [1, 1])
    report = await verify_log(service.log)
    assert report.ok(strict=True), report.problems


async def test_a_start_match_that_does_not_fit_the_game_is_refused(
    service: ServiceUnderTest,
) -> None:
    client = MatchClient(service.log)
    maze = mz.MazeSettings()
    cases = [
        (match_pb2.StartMatch(match_id="u", game="chess", seats=[human(1)]), "unknown_game"),
        # The Maze takes two people, no scripted seat.
        (
            match_pb2.StartMatch(
                match_id="u", game="maze", seats=[human(1), scripted(2, "counter")]
            ),
            "invalid_match",
        ),
        # Matrix Games has no ranked mode; eight seats.
        (
            match_pb2.StartMatch(
                match_id="u",
                game="matrix-games",
                seats=[human(1), *(scripted(n, "counter") for n in range(2, 9))],
                mode=match_pb2.MATCH_MODE_RANKED,
            ),
            "invalid_match",
        ),
        (
            match_pb2.StartMatch(
                match_id="u", game="matrix-games", seats=[human(1), scripted(2, "counter")]
            ),
            "invalid_match",
        ),
        # Another game's settings.
        (
            match_pb2.StartMatch(
                match_id="u",
                game="matrix-games",
                seats=[human(1), *(scripted(n, "counter") for n in range(2, 9))],
                settings=pack(maze),
            ),
            "invalid_settings",
        ),
        # A scripted policy the game does not have.
        (
            match_pb2.StartMatch(
                match_id="u",
                game="matrix-games",
                seats=[human(1), *(scripted(n, "nobody") for n in range(2, 9))],
            ),
            "invalid_match",
        ),
    ]
    for start, code in cases:
        reply = await client.command("u", start)
        assert reply.code == code, (start, reply.code)
    assert (await client.events("u"))[-1].type == REJECTED_TYPE
    assert (await client.command("u", match_pb2.Resign(player_id="p_1"))).code == "unknown_match"
    report = await verify_log(service.log)
    assert report.ok(strict=True), [str(p) for p in report.problems]


async def test_a_digits_match_opens_and_keeps_no_presence(service: ServiceUnderTest) -> None:
    """A game with no presence (Digits lives for days): its match opens by StartMatch like any
    other, and a presence command is refused, changing nothing."""
    client = MatchClient(service.log)
    # The seeds given here; a start that draws them records the drawn seed (DigitsStarted.seed),
    # which `arena verify` decides the start again with (tests/services/matchmaking).
    settings = dg.DigitsSettings(player_seed=11, shop_seed=12)
    start = match_pb2.StartMatch(
        match_id="dg",
        game="digits",
        seats=[human(1)],
        mode=match_pb2.MATCH_MODE_CASUAL,
        settings=pack(settings),
    )
    opened = await client.command("dg", start)
    assert opened.code is None
    assert isinstance(opened.payloads[0], match_pb2.MatchOpened)
    assert opened.payloads[0].game == "digits" and len(opened.payloads) > 1
    before = await client.events("dg")
    gone = await client.command("dg", match_pb2.PlayerDisconnected(player_id="p_1"))
    assert gone.code == "no_presence"
    worker = service.worker
    assert worker is not None
    assert all(
        not t.command_id.startswith("timer:reconnect") for t in worker.timers.armed(stream_of("dg"))
    )
    assert [e.event_id for e in await client.events("dg")][: len(before)] == [
        e.event_id for e in before
    ]
    report = await verify_log(service.log)
    assert report.ok(strict=True), [str(p) for p in report.problems]
