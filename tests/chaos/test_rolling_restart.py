"""A rolling restart of every service, one at a time, during 40 live games on the distributed
stack: the Tansu broker, PostgreSQL, Redis, match, matchmaking, rating, projections and two
gateways, each its own `arena` process.

Each partitioned service and each gateway is restarted as a Kubernetes rollout does it
(``maxSurge: 1``, ``maxUnavailable: 0``): a new process first, ready, then SIGTERM to the old one;
the projections, a single replica, are stopped and then started (``Recreate``). A stopping gateway
pushes ``server_shutdown`` and closes its sockets with 1012; the scripted clients then reconnect
to another live gateway, ``reconnect`` into their game and send again, with the same id, what got
no answer, as docs/protocol.md asks of every client.

Every game moves all along (its seats skip in turn: always legal, so the games outlive the
rollout; the move clock is long enough that no timeout moves a turn). Afterwards: every game is
played on and ended, every acknowledged move is in its stream exactly once with the events its
player was told, and `arena verify` confirms the whole log. The longest stall of a game (the
longest wait between two acknowledged moves of one game) is printed per restarted service; the
figures are in docs/performance.md. The test asserts correctness, not time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import signal
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from arena_match.verify import verify_log
from arena_runtime.config import load_settings
from arena_runtime.eventlog.factory import open_event_log
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.e2e.client import Player
from tests.harness.kafka import ConsumerTimings
from tests.harness.postgres import database_of_its_own
from tests.processes.arena_process import ArenaProcess, arena_env, free_port
from tests.services.match.harness import MatchClient

pytestmark = [pytest.mark.slow, pytest.mark.kafka, pytest.mark.postgres, pytest.mark.redis]

GAMES = 40
PARTITIONS = 4
#: Restarted in this order, one at a time; the two gateways last (a player on each).
ROLLOUT = ("match", "matchmaking", "rating", "projections", "gateway", "gateway")
#: Single replicas restarted by stopping first (the projections' Recreate rollout).
RECREATED = frozenset({"projections"})
#: Between two moves of one game: the games go on at a pace the shared machine keeps up with.
PACE_SECONDS = 0.5
MOVES_AFTER = 2
#: A client's answer codes that mean "send it again, with the same id".
RETRY = frozenset({"timeout", "unavailable"})


class Stack:
    """The processes of the distributed stack, by service; restarted one at a time."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.env = env
        self.processes: dict[str, list[ArenaProcess]] = defaultdict(list)
        #: Those that answered /readyz 200: as behind a Kubernetes Service, clients reach only
        #: ready gateways.
        self.serving: set[ArenaProcess] = set()
        self._numbers = itertools.count(1)

    def start(self, name: str) -> ArenaProcess:
        number = next(self._numbers)
        env = arena_env(self.workdir / "var", free_port(), **self.env)
        process = ArenaProcess([name], env, self.workdir / f"{name}-{number}.log")
        self.processes[name].append(process)
        return process

    def gateways(self) -> list[str]:
        """The URLs of the gateways that serve: ready, and not being stopped."""
        return [
            p.url for p in self.processes["gateway"] if p in self.serving and p.proc.poll() is None
        ]

    async def ready(self, process: ArenaProcess) -> None:
        await asyncio.to_thread(process.wait_until, "/readyz", 200, 120)
        self.serving.add(process)

    async def stop(self, process: ArenaProcess) -> None:
        self.processes[next(n for n, ps in self.processes.items() if process in ps)].remove(process)
        code = await asyncio.to_thread(process.terminate, signal.SIGTERM)
        assert code == 0, f"{process.log_path.name} exited with {code}:\n{process.output()}"

    async def roll(self, name: str, index: int) -> None:
        old = [p for p in self.processes[name]][index]
        if name in RECREATED:
            await self.stop(old)
            await self.ready(self.start(name))
            return
        await self.ready(self.start(name))
        await self.stop(old)

    def close(self) -> None:
        for processes in self.processes.values():
            for process in processes:
                process.terminate()


@dataclass
class Seat:
    """One player of a game, who reconnects to another gateway whenever its socket closes."""

    stack: Stack
    player_id: str
    token: str
    match_id: str = ""
    player: Player | None = None
    reconnects: int = 0
    #: Answers `timeout` or `unavailable` this seat got (and sent the message again after).
    retries: int = 0
    #: The snapshot of the last reconnect into the game.
    snapshot: dict[str, Any] = field(default_factory=dict)

    async def send(self, kind: str, message_id: str, **fields: Any) -> dict[str, Any]:
        """The message's ack result, however many sockets it takes; same id every time."""
        for _ in range(200):
            if self.player is None or self._going(self.player):
                await self.reconnect()
            assert self.player is not None
            try:
                answer = await self.player.request(kind, id=message_id, **fields)
            except (ConnectionError, ConnectionClosed, TimeoutError):
                self.player = None
                continue
            if answer["type"] == "ack":
                return dict(answer["result"])
            assert answer["code"] in RETRY, answer
            self.retries += 1
            await asyncio.sleep(0.2)
        raise AssertionError(f"{message_id} was never answered")

    @staticmethod
    def _going(player: Player) -> bool:
        return player.has("server_shutdown") or player.has("closed")

    async def reconnect(self) -> dict[str, Any]:
        """A new socket on a live gateway, back in the game: its snapshot."""
        if self.player is not None:
            old, self.player = self.player, None
            with contextlib.suppress(Exception):  # the old socket is gone either way
                await old.close()
        for _ in range(100):
            urls = self.stack.gateways()
            player = Player(random.choice(urls)) if urls else None
            if player is not None:
                player.player_id, player.token = self.player_id, self.token
                try:
                    await player.connect()
                    if self.match_id:
                        await player.ok(
                            "reconnect",
                            match_id=self.match_id,
                            player_id=self.player_id,
                            token=self.token,
                        )
                        snapshot = await player.push("snapshot")
                    else:
                        snapshot = {}
                except (OSError, ConnectionError, ConnectionClosed, InvalidStatus, TimeoutError):
                    pass
                except AssertionError:  # refused: this gateway is draining
                    pass
                else:
                    self.player, self.snapshot = player, snapshot
                    self.reconnects += 1
                    return snapshot
            await asyncio.sleep(0.2)
        raise AssertionError(f"{self.player_id} could not reconnect")


@dataclass
class Game:
    tag: str
    match_id: str
    seats: dict[int, Seat]
    to_move: int
    sequence: int
    moves: int = 0
    #: Message id -> the sequences of the events its ack carried.
    acked: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: monotonic time of each ack.
    acks: list[float] = field(default_factory=list)

    async def move(self) -> None:
        seat = self.seats[self.to_move]
        message_id = f"{self.tag}-{self.moves}"
        result = await seat.send("skip", message_id)
        sequences = tuple(e["sequence"] for e in result["events"])
        assert sequences, result
        self.acked[message_id] = sequences
        self.acks.append(time.monotonic())
        self.moves += 1
        # Only these seats move (the move clock is long): the latest word on the game is the
        # highest sequence seen, in this ack or in a snapshot a reconnect brought (a move
        # answered again after a reconnect was already in that snapshot).
        last = result["events"][-1]
        latest = [(last["sequence"], last["to_move"])]
        latest += [
            (s.snapshot["sequence"], s.snapshot["to_move"])
            for s in self.seats.values()
            if s.snapshot
        ]
        self.sequence, self.to_move = max([(self.sequence, self.to_move), *latest])


async def new_game(stack: Stack, number: int) -> Game:
    urls = stack.gateways()
    seats = []
    for url in (urls[number % len(urls)], urls[(number + 1) % len(urls)]):
        guest = await Player(url).sign_in()
        seat = Seat(stack, guest.player_id, guest.token)
        await seat.reconnect()
        seats.append(seat)
    host, guest = seats
    assert host.player is not None and guest.player is not None
    code = (await host.player.ok("create_room", settings={"move_seconds": 120}))["code"]
    await guest.player.ok("join_room", code=code)
    snapshot = await host.player.push("snapshot")
    await guest.player.push("snapshot")
    by_id = {host.player_id: host, guest.player_id: guest}
    for seat in seats:
        seat.match_id = snapshot["match_id"]
    return Game(
        tag=f"g{number}x{random.getrandbits(24):06x}",
        match_id=snapshot["match_id"],
        seats={s["seat"]: by_id[s["player_id"]] for s in snapshot["seats"]},
        to_move=snapshot["to_move"],
        sequence=snapshot["sequence"],
    )


async def keep_playing(game: Game, until: asyncio.Event) -> None:
    await asyncio.sleep(random.uniform(0, PACE_SECONDS))
    while not until.is_set():
        await game.move()
        await asyncio.sleep(PACE_SECONDS)


def longest_gap(games: list[Game], start: float, end: float) -> float:
    """The longest wait between two acks of one game that overlaps [start, end]."""
    longest = 0.0
    for game in games:
        for before, after in itertools.pairwise(game.acks):
            if after >= start and before <= end:
                longest = max(longest, after - before)
    return longest


async def assert_in_the_log(stack: Stack, games: list[Game]) -> None:
    """Every acknowledged move is in its stream once, with the events its player was told;
    every game ended; `arena verify` finds nothing wrong."""
    env = arena_env(stack.workdir / "var", 0, **stack.env)
    settings = load_settings({k: v for k, v in env.items() if k.startswith("ARENA_")})
    async with open_event_log(settings) as event_log:
        client = MatchClient(event_log)
        for game in games:
            events = await client.events(game.match_id)
            by_message: dict[str, list[int]] = defaultdict(list)
            for event in events:
                by_message[event.causation_id.rpartition(":")[2]].append(event.sequence)
            for message_id, sequences in game.acked.items():
                assert tuple(by_message.get(message_id, ())) == sequences, (
                    game.match_id,
                    message_id,
                )
            assert any(e.type == "arena.v1.MatchEnded" for e in events), game.match_id
        report = await verify_log(event_log)
        assert report.problems == [], report.problems
        assert report.matches >= len(games)


async def end_games(games: list[Game], moves_after: int = MOVES_AFTER) -> None:
    """Each game plays on a few moves (it was not lost), then its first seat resigns."""
    for game in games:
        for _ in range(moves_after):
            await game.move()
    for game in games:
        result = await game.seats[1].send("resign", f"{game.tag}-resign")
        assert result["events"][-1]["type"] == "game_over", result


@pytest.fixture
def stack(
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_prefix: str,
    postgres_url: str,
    redis_url: str,
    redis_prefix: str,
    kafka_consumer_timings: ConsumerTimings,
) -> Any:
    stack = Stack(
        tmp_path,
        {
            "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
            "ARENA_TOPIC_PREFIX": f"{topic_prefix}rolling.",
            "ARENA_DATABASE_URL": database_of_its_own(postgres_url),
            "ARENA_REDIS_URL": redis_url,
            "ARENA_CACHE_PREFIX": f"{redis_prefix}rolling:",
            "ARENA_PARTITIONS": str(PARTITIONS),
            "ARENA_LOG_LEVEL": "WARNING",
            **kafka_consumer_timings.settings(),
        },
    )
    try:
        yield stack
    finally:
        stack.close()


async def test_a_rolling_restart_of_every_service_loses_no_move_and_no_game(stack: Stack) -> None:
    started = [stack.start(name) for name in dict.fromkeys(ROLLOUT)]
    started.append(stack.start("gateway"))
    await asyncio.gather(*(stack.ready(p) for p in started))
    games: list[Game] = []
    for first in range(0, GAMES, 10):  # ten at a time: 80 guests at once only time out under load
        games += await asyncio.gather(*(new_game(stack, n) for n in range(first, first + 10)))

    rolling = asyncio.Event()
    players = [asyncio.create_task(keep_playing(game, rolling)) for game in games]
    windows: list[tuple[str, float, float]] = []
    try:
        await asyncio.sleep(2)
        for name, index in zip(ROLLOUT, (0, 0, 0, 0, 0, 0), strict=True):
            begun = time.monotonic()
            await stack.roll(name, index)
            windows.append((name, begun, time.monotonic()))
            await asyncio.sleep(1)
        rolling.set()
        await asyncio.gather(*players)
    finally:
        rolling.set()
        for task in players:
            task.cancel()
        await asyncio.gather(*players, return_exceptions=True)

    # No game lost: each plays on after the rollout, then ends.
    await end_games(games)
    await assert_in_the_log(stack, games)

    reconnects = sum(seat.reconnects for game in games for seat in game.seats.values())
    moves = sum(len(game.acked) for game in games)
    stalls = ", ".join(f"{n} {longest_gap(games, a, b):.1f} s" for n, a, b in windows)
    print(
        f"\nrolling restart: {GAMES} games, {moves} acknowledged moves, {reconnects} socket "
        f"(re)connections; longest stall per restarted service: {stalls}; "
        f"overall {max(longest_gap(games, a, b) for _, a, b in windows):.1f} s"
    )
