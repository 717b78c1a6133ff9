"""Outages of the servers under the distributed stack, each stopped and started again while games
are played: the platform recovers by itself, with nothing acknowledged lost.

Each test runs the server it stops privately (the shared ones on 127.0.0.1 are other sessions'
too): a PostgreSQL cluster of its own (the harness's ``LocalPostgres``), a redis-server of its
own with its append-only file (docs/operations.md, "Redis"). The rest is the session's broker and
servers. The games are the rolling-restart test's scripted players, who send a move again with
the same id when it gets no answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from sqlalchemy import text

from tests.chaos.test_rolling_restart import Game, Stack, assert_in_the_log, end_games, new_game
from tests.harness.kafka import ConsumerTimings, TansuBroker
from tests.harness.postgres import LocalPostgres, database_of_its_own, server_binaries
from tests.harness.support import free_port

pytestmark = [pytest.mark.slow, pytest.mark.kafka, pytest.mark.postgres, pytest.mark.redis]

GAMES = 4
OUTAGE_SECONDS = 4.0


class RedisServer:
    """A redis-server of this test, on its own port, keeping its data in an append-only file."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None, "redis-server is needed for the Redis outage test"
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = tempfile.mkdtemp(prefix="arena-redis-outage-")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                *("--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir),
                *("--save", "", "--appendonly", "yes", "--appendfsync", "always"),
                *("--maxmemory-policy", "noeviction"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        for _ in range(100):
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise AssertionError("the test's redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def distributed(
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_prefix: str,
    timings: ConsumerTimings,
    name: str,
    **servers: str,
) -> Stack:
    return Stack(
        tmp_path,
        {
            "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
            "ARENA_TOPIC_PREFIX": f"{topic_prefix}{name}.",
            "ARENA_PARTITIONS": "2",
            "ARENA_LOG_FORMAT": "json",
            "ARENA_COMMAND_TIMEOUT_SECONDS": "3",
            **timings.settings(),
            **servers,
        },
    )


async def play_through(games: list[Game], outage: object, during: float = OUTAGE_SECONDS) -> int:
    """Keep every game moving while ``outage()`` (an async callable) runs; the moves acked
    meanwhile."""
    assert callable(outage)
    stop = asyncio.Event()

    async def keep(game: Game) -> None:
        while not stop.is_set():
            await game.move()
            await asyncio.sleep(0.3)

    players = [asyncio.create_task(keep(game)) for game in games]
    try:
        await asyncio.sleep(1)
        before = sum(len(g.acked) for g in games)
        await outage()
        acked_during = sum(len(g.acked) for g in games) - before
        await asyncio.sleep(1)
    finally:
        stop.set()
        await asyncio.gather(*players)
    return acked_during


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


async def test_redis_stopped_and_restarted(
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_prefix: str,
    postgres_url: str,
    kafka_consumer_timings: ConsumerTimings,
    private_redis: RedisServer,
) -> None:
    """Redis down: the games go on (a move needs no Redis: the rate limit lets messages pass,
    saying so at WARNING); new sign-ins fail. Back with its append-only file: the sessions are
    still there, sign-ins work again."""
    stack = distributed(
        tmp_path,
        kafka_bootstrap,
        topic_prefix,
        kafka_consumer_timings,
        "redis-outage",
        ARENA_DATABASE_URL=database_of_its_own(postgres_url),
        ARENA_REDIS_URL=private_redis.url,
    )
    try:
        started = [stack.start(name) for name in ("match", "matchmaking", "gateway")]
        await asyncio.gather(*(stack.ready(p) for p in started))
        games = list(await asyncio.gather(*(new_game(stack, n) for n in range(GAMES))))
        gateway = stack.processes["gateway"][0]

        def acked() -> int:
            return sum(len(g.acked) for g in games)

        async def outage() -> None:
            private_redis.stop()
            before = acked()
            async with httpx.AsyncClient(base_url=gateway.url) as http:
                refused = await http.post("/v1/guests")
            # A typed answer to retry, not a crash: no traceback reaches the log.
            assert refused.status_code == 503, refused.text
            assert refused.json()["detail"]["code"] == "unavailable"
            assert refused.headers["Retry-After"]
            await asyncio.sleep(OUTAGE_SECONDS)
            # Down at least that long, and (a loaded machine is slower) until a move was
            # acknowledged meanwhile, for 30 s at most: play_through then counts it.
            for _ in range(300):
                if acked() > before:
                    break
                await asyncio.sleep(0.1)
            private_redis.start()

        assert await play_through(games, outage) > 0, "no move was acknowledged without Redis"
        assert "the cache cannot be reached" in gateway.output()
        assert "Traceback" not in gateway.output()
        # The same players' tokens still open sockets: their sessions outlived the restart.
        for game in games:
            for seat in game.seats.values():
                seat.player = None
                await seat.reconnect()
        async with httpx.AsyncClient(base_url=gateway.url) as http:
            assert (await http.post("/v1/guests")).status_code == 201
        await end_games(games)
        await assert_in_the_log(stack, games)
        assert all(p.proc.poll() is None for ps in stack.processes.values() for p in ps)
    finally:
        stack.close()


@pytest.fixture
def private_postgres() -> Iterator[LocalPostgres]:
    bindir = server_binaries()
    assert bindir is not None, "the PostgreSQL server package (initdb, pg_ctl) is needed"
    server = LocalPostgres(bindir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_postgres_stopped_and_restarted(
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_prefix: str,
    redis_url: str,
    redis_prefix: str,
    kafka_consumer_timings: ConsumerTimings,
    private_postgres: LocalPostgres,
) -> None:
    """PostgreSQL down: the games go on (the match service decides from the log); the
    projections wait, saying so at WARNING, instead of exiting; back, they resume from the
    offsets stored beside their rows and catch up with every game, by themselves."""
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{private_postgres.port}/postgres"
    stack = distributed(
        tmp_path,
        kafka_bootstrap,
        topic_prefix,
        kafka_consumer_timings,
        "postgres-outage",
        ARENA_DATABASE_URL=url,
        ARENA_REDIS_URL=redis_url,
        ARENA_CACHE_PREFIX=f"{redis_prefix}postgres-outage:",
    )
    try:
        names = ("match", "matchmaking", "gateway", "projections")
        started = [stack.start(name) for name in names]
        await asyncio.gather(*(stack.ready(p) for p in started))
        games = list(await asyncio.gather(*(new_game(stack, n) for n in range(GAMES))))
        projections = stack.processes["projections"][0]

        async def outage() -> None:
            await asyncio.to_thread(private_postgres.stop_server)
            await asyncio.sleep(OUTAGE_SECONDS)
            await asyncio.to_thread(private_postgres.start_server)

        assert await play_through(games, outage) > 0, "no move was acknowledged without SQL"
        assert "the database cannot be reached" in projections.output()
        await end_games(games)
        await assert_in_the_log(stack, games)
        assert all(p.proc.poll() is None for ps in stack.processes.values() for p in ps)

        # The read models catch up by themselves: every game's end is in the match history.
        from arena_runtime.sql import create_engine

        engine = create_engine(url)
        try:
            ids = {game.match_id for game in games}
            for _ in range(300):
                async with engine.connect() as connection:
                    rows = await connection.execute(text("SELECT match_id FROM match_index"))
                    found = {row[0] for row in rows} & ids
                if found == ids:
                    break
                await asyncio.sleep(0.1)
            assert found == ids
        finally:
            await engine.dispose()
    finally:
        stack.close()


class Cut:
    """A TCP proxy in front of the broker that can be cut (every connection closed, the port
    refusing) and restored: the broker unreachable, as the services see a broker down.

    Tansu keeps its topics in memory, so stopping its process would also empty the log, which a
    Kafka broker with its disks does not do; cutting it off is the outage without that loss.
    """

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def restore(self) -> None:
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", self.port)

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        await self._server.wait_closed()
        self._server = None

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}

        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(copy(reader, up_writer), copy(up_reader, writer))
        self._writers -= {writer, up_writer}


async def supervise(stack: Stack, stop: asyncio.Event, exits: list[tuple[str, int]]) -> None:
    """What Kubernetes does for a pod whose process exits: start it again (after a second)."""
    while not stop.is_set():
        for name, processes in list(stack.processes.items()):
            for process in list(processes):
                code = process.proc.poll()
                if code is not None:
                    exits.append((name, code))
                    processes.remove(process)
                    process.close()
                    stack.start(name)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)


async def test_the_broker_cut_off_and_back(
    tmp_path: Path,
    postgres_url: str,
    redis_url: str,
    redis_prefix: str,
) -> None:
    """The broker unreachable for a few seconds: no move is answered meanwhile (the appends
    wait for it; a move may be answered `timeout` and is sent again); a service that exits is
    started again as Kubernetes would (it exits 2 until the broker answers); then everything
    serves again by itself and every acknowledged move is in the log once."""
    broker = TansuBroker()
    cut = Cut(broker.port)
    broker.advertised = f"127.0.0.1:{cut.port}"
    broker.start()
    await cut.restore()
    stack = distributed(
        tmp_path,
        f"127.0.0.1:{cut.port}",
        "",
        ConsumerTimings(session_timeout_ms=3_000, heartbeat_interval_ms=300),
        "broker-outage",
        ARENA_DATABASE_URL=database_of_its_own(postgres_url),
        ARENA_REDIS_URL=redis_url,
        ARENA_CACHE_PREFIX=f"{redis_prefix}broker-outage:",
    )
    stop = asyncio.Event()
    exits: list[tuple[str, int]] = []
    supervisor: asyncio.Task[None] | None = None
    try:
        started = [stack.start(name) for name in ("match", "matchmaking", "gateway")]
        await asyncio.gather(*(stack.ready(p) for p in started))
        games = list(await asyncio.gather(*(new_game(stack, n) for n in range(GAMES))))
        supervisor = asyncio.create_task(supervise(stack, stop, exits))

        async def outage() -> None:
            await cut.cut()
            await asyncio.sleep(OUTAGE_SECONDS)
            await cut.restore()

        # Nothing is answered while the broker is away (but what was read before the cut).
        assert await play_through(games, outage) <= GAMES, "the proxy is not in the way"
        retried = sum(seat.retries for game in games for seat in game.seats.values())
        for processes in list(stack.processes.values()):
            for process in list(processes):
                await stack.ready(process)
        await end_games(games)
        await assert_in_the_log(stack, games)
        print(f"\nbroker outage: {retried} moves sent again; exits meanwhile: {exits}")
    finally:
        stop.set()
        if supervisor is not None:
            await supervisor
        stack.close()
        with contextlib.suppress(AssertionError):
            await cut.cut()
        broker.stop()
