"""Online Maths Warriors through the gateway: N concurrent games of scripted players over real
WebSockets, on the embedded default (`arena serve`) and on the distributed stack (Tansu broker,
PostgreSQL, Redis; `arena gateway`, `arena match`, `arena matchmaking` each their own process).

Figures: moves per second and the latency from sending a move to receiving its result (the ack
that carries the move's event), p50 and p99. Baselines, measured in the same run: the raw
append-to-consume round trip of one record on the same log (the embedded log in this process; the
Tansu broker through aiokafka, acks=all). A move is two such trips (command, then its events) plus
the work around them; on Tansu a consumer already waiting at the tail sees a record only when its
fetch wait is over, so the distributed run also measures that, and two such hops through a bare
relay: the floor of any move that crosses the log twice (``tail_round_trip``). Memory: the match
service's resident size per 1,000 live games and the gateway's per 1,000 idle sockets.

Each stack is run twice under load. Paced first, on a fresh stack (the targets' figures): one
shared schedule releases a move every 1 / rate seconds (1 ms embedded, 5 ms distributed), so the
rate offered is the target's whatever the latency; the rate printed is the one achieved (below
the pace when the games cannot keep it, and then they queue as unpaced ones do) and the target's
p99 is read there. Then unpaced: every game sends its next move as soon as the last one is
answered, so the rate is the stack's capacity and its latency mostly queueing (with N games
always waiting, Little's law makes it about N / rate). Rates count from the first move (sockets
opened before it are not the stack's moves).

Targets: embedded >= 1,000 moves/s with p99 < 50 ms; distributed p99 within 3x the raw round
trip at 200 moves/s; < 50 MB per 1,000 games; < 200 MB per 1,000 idle sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import uvloop
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from arena_runtime.eventlog import OutgoingRecord
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.targets import target_line  # noqa: E402
from tests.processes.arena_process import ArenaProcess, arena_env, free_port  # noqa: E402

DICE = ("D4", "D6", "D8", "D10", "D12", "D20")
#: The embedded target's rate: its p99 is read with moves offered at this pace.
EMBEDDED_RATE = 1000.0
BENCH_ENV = {"ARENA_WS_RATE_LIMIT": "100000", "ARENA_LOG_LEVEL": "WARNING"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Socket:
    """A minimal protocol client: one request at a time, pushes kept aside."""

    def __init__(self, ws: ClientConnection, player_id: str) -> None:
        self.ws = ws
        self.player_id = player_id
        self.pushes: list[dict[str, Any]] = []
        self._n = 0

    @classmethod
    async def open(cls, base: str) -> Socket:
        async with httpx.AsyncClient(base_url=base) as http:
            guest = (await http.post("/v1/guests")).json()
        url = base.replace("http", "ws") + f"/v1/ws?token={guest['token']}"
        return cls(await connect(url, max_queue=None), guest["player_id"])

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        self._n += 1
        message_id = str(self._n)
        await self.ws.send(json.dumps({"type": type_, "id": message_id, **fields}))
        while True:
            message = json.loads(await self.ws.recv())
            if message.get("id") == message_id and message["type"] in ("ack", "error"):
                return dict(message)
            if message["type"] == "ping":
                await self.ws.send(json.dumps({"type": "pong", "id": f"p{message['id']}"}))
            elif message["type"] != "ack":
                self.pushes.append(message)

    async def push(self, type_: str, event: str = "") -> dict[str, Any]:
        """The next push of ``type_`` (and, for ``lobby`` pushes, of ``event``)."""
        while True:
            for i, message in enumerate(self.pushes):
                if message["type"] == type_ and message.get("event", "") == event:
                    return self.pushes.pop(i)
            message = json.loads(await self.ws.recv())
            if message["type"] != "ack":
                self.pushes.append(message)


def choose(dice: dict[str, dict[str, int | None]], seat: int) -> tuple[str, dict[str, Any]]:
    """A cheap scripted player: the first Strength capture it finds, else skip."""
    mine, theirs = dice[str(seat)], dice[str(3 - seat)]
    for target in DICE:
        if theirs[target] is None:
            continue
        for attacker in DICE:
            value = mine[attacker]
            if value is not None and value > theirs[target]:  # > : never the penalty's refusal
                return "strength", {"attacker": attacker, "target": target}
    return "skip", {}


def answered(answer: dict[str, Any]) -> dict[str, Any]:
    if answer["type"] != "ack":
        raise RuntimeError(f"refused: {answer}")
    return dict(answer["result"])


async def leave(socket: Socket, game_over: bool) -> None:
    """Leave the room. After game_over the room learns that its match ended from the match
    service, through the log, a moment later; a real client waits for the lobby's
    room_match_finished push before it leaves, and so does this one (asking again and again
    instead loaded the server with refusals, more of them the more games ran). A game cut off
    by the end of the run is simply left (the refusal is expected)."""
    if game_over:
        await asyncio.wait_for(socket.push("lobby", "room_match_finished"), 30)
    answer = await socket.request("leave_room")
    # room_not_found: the host left first, which closed the room.
    if game_over and answer.get("code") == "match_in_progress":
        raise RuntimeError(f"the room still holds its finished match: {answer}")


class Pacer:
    """One schedule shared by every game: a move may go every ``1 / rate`` seconds."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.next = time.perf_counter()

    async def wait(self) -> None:
        now = time.perf_counter()
        at = max(self.next, now)
        self.next = at + self.interval
        await asyncio.sleep(at - now)


async def play_games(
    base: str,
    until: float,
    latencies: list[float],
    pace: float,
    pacer: Pacer | None,
    first_moves: list[float] | None = None,
) -> int:
    """One pair of players: room after room until ``until``; returns the moves played.

    ``pace``: a pause after each move (one unloaded game); ``pacer``: a shared schedule;
    ``first_moves``: gets the time this pair's first move was sent.
    """
    host, guest = await Socket.open(base), await Socket.open(base)
    moves = 0
    try:
        while time.perf_counter() < until:
            code = answered(await host.request("create_room"))["code"]
            await guest.request("join_room", code=code)
            snapshot = await host.push("snapshot")
            await guest.push("snapshot")
            ids = {s["player_id"]: s["seat"] for s in snapshot["seats"]}
            by_seat = {ids[host.player_id]: host, ids[guest.player_id]: guest}
            dice, to_move = snapshot["dice"], snapshot["to_move"]
            over = False
            while time.perf_counter() < until:
                kind, fields = choose(dice, to_move)
                if pacer is not None:
                    await pacer.wait()
                started = time.perf_counter()
                if first_moves is not None and not moves:
                    first_moves.append(started)
                answer = await by_seat[to_move].request(kind, **fields)
                latencies.append(time.perf_counter() - started)
                moves += 1
                if answer["type"] != "ack":
                    break
                for event in answer["result"]["events"]:
                    if event["type"] == "strength_attacked":
                        dice[str(3 - event["player"])][event["target"]] = None
                        dice[str(event["player"])].update(event["rerolls"])
                    if event["type"] in ("strength_attacked", "turn_skipped"):
                        to_move = event["to_move"]
                    over = over or event["type"] == "game_over"
                if over:
                    break
                if pace:
                    await asyncio.sleep(pace)
            await leave(host, over)
            await leave(guest, over)
            host.pushes.clear()
            guest.pushes.clear()
    finally:
        await host.ws.close()
        await guest.ws.close()
    return moves


async def drive(
    base: str, games: int, seconds: float, pace: float = 0.0, rate: float = 0.0
) -> tuple[float, list[float]]:
    """Moves per second over the whole run (lobby requests included) and each move's latency.

    The clock starts at the first move: opening 80 sockets and the first rooms took 2 of 10 s
    on the distributed stack, which read as a rate short of what the stack kept up.
    """
    latencies: list[float] = []
    pacer = Pacer(rate) if rate else None
    first_moves: list[float] = []
    until = time.perf_counter() + seconds
    counts = await asyncio.gather(
        *(play_games(base, until, latencies, pace, pacer, first_moves) for _ in range(games))
    )
    started = min(first_moves, default=until - seconds)
    return sum(counts) / (time.perf_counter() - started), latencies


def report(label: str, rate: float, latencies: list[float], extra: str = "") -> None:
    p50, p99 = pct(latencies, 0.5) * 1000, pct(latencies, 0.99) * 1000
    print(f"  {label:<34} {rate:8.0f} moves/s   p50 {p50:6.1f} ms   p99 {p99:6.1f} ms  {extra}")


@contextmanager
def processes(
    specs: list[tuple[str, dict[str, str]]], workdir: Path
) -> Iterator[list[ArenaProcess]]:
    started: list[ArenaProcess] = []
    try:
        for number, (command, env) in enumerate(specs):
            started.append(ArenaProcess([command], env, workdir / f"{command}-{number}.log"))
            started[-1].wait_until("/healthz", 200)
        for process in started:
            process.wait_until("/readyz", 200)
        yield started
    finally:
        for process in started:
            process.terminate()


def cpu_seconds(*started: ArenaProcess) -> float:
    """The CPU time (user + system) the processes and their children have used so far, and
    this process's (the players')."""
    total = 0.0
    for process in started:
        parent = psutil.Process(process.proc.pid)
        for each in (parent, *parent.children(recursive=True)):
            with contextlib.suppress(psutil.NoSuchProcess):
                times = each.cpu_times()
                total += times.user + times.system
    return total


def players_cpu() -> float:
    """CPU seconds this process (the scripted players and their sockets) has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_per_move(
    before: float, after: float, latencies: list[float], players: float | None = None
) -> str:
    """The server's CPU per move over a run (the lobby's requests of the run included), with
    its children, and the players' (``players``: their CPU seconds over the run)."""
    moves = max(1, len(latencies))
    server = f"server CPU {(after - before) * 1000 / moves:.2f} ms/move with its children"
    return server if players is None else f"{server}, the players' {players * 1000 / moves:.2f}"


def rss_mb(process: ArenaProcess) -> float:
    return psutil.Process(process.proc.pid).memory_info().rss / 1e6


async def raw_round_trip(bootstrap: str, count: int) -> list[float]:
    """Produce one record and consume it back, ``count`` times: the broker's floor."""
    topic = f"bench.roundtrip.{uuid.uuid4().hex[:8]}"
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await producer.start()
    await producer.send_and_wait(topic, b"warm-up")
    await consumer.start()
    await consumer.getone()
    latencies = []
    try:
        for i in range(count):
            started = time.perf_counter()
            await producer.send_and_wait(topic, str(i).encode())
            await consumer.getone()
            latencies.append(time.perf_counter() - started)
    finally:
        await consumer.stop()
        await producer.stop()
    return latencies


async def tail_round_trip(
    bootstrap: str, count: int, fetch_max_wait_ms: int, hops: int = 1
) -> list[float]:
    """Like ``raw_round_trip``, but the consumer already waits at the tail when the record is
    produced, as a service's consumer does: on Tansu such a fetch is answered only when its wait
    is over, which ``getone`` right after the produce never shows (it fetches afterwards).

    ``hops`` > 1 chains that many topics, each but the last read by a relay that produces every
    record on to the next (acks=all): with 2, the floor of any design whose moves cross the log
    twice, as Arena's do (the command to the match service, its events back), with nothing
    decoded, decided or pushed.
    """
    suffix = uuid.uuid4().hex[:8]
    topics = [f"bench.tail{hop}.{suffix}" for hop in range(hops)]
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    relay_producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    consumers = [
        AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=fetch_max_wait_ms,
        )
        for topic in topics
    ]
    clients = [producer, relay_producer, *consumers]
    for client in clients:
        await client.start()

    async def relay(consumer: AIOKafkaConsumer, onward: str) -> None:
        while True:
            for batch in (await consumer.getmany(timeout_ms=1000)).values():
                for record in batch:
                    await relay_producer.send_and_wait(onward, record.value)

    relays = [
        asyncio.create_task(relay(c, t)) for c, t in zip(consumers[:-1], topics[1:], strict=True)
    ]
    latencies = []
    try:
        for i in range(count + 1):  # the first one is the warm-up
            await asyncio.sleep(0.002 + (i % 7) * 0.0011)  # the fetches are somewhere in their wait
            started = time.perf_counter()
            await producer.send_and_wait(topics[0], str(i).encode())
            while not await consumers[-1].getmany(timeout_ms=5000):
                pass
            if i:
                latencies.append(time.perf_counter() - started)
    finally:
        for task in relays:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for client in reversed(clients):
            await client.stop()
    return latencies


async def embedded_round_trip(data_dir: Path, count: int) -> list[float]:
    """Append one record to the embedded log and consume it back in the same process, ``count``
    times: the floor of one hop of a move on the embedded default."""
    from arena_runtime.eventlog import TopicSpec
    from arena_runtime.eventlog.embedded import EmbeddedEventLog

    log = EmbeddedEventLog(data_dir / "roundtrip.db")
    await log.start()
    await log.create_topics([TopicSpec("roundtrip", partitions=1)])
    consumer = log.consumer("roundtrip", ["roundtrip"])
    await consumer.start()
    latencies = []
    try:
        for i in range(count):
            started = time.perf_counter()
            await log.append("roundtrip", [OutgoingRecord(str(i).encode())])
            while not await consumer.poll(timeout_ms=1000):
                pass
            latencies.append(time.perf_counter() - started)
    finally:
        await consumer.stop()
        await log.close()
    return latencies


async def idle_sockets(base: str, count: int) -> list[Socket]:
    sockets = []
    for _ in range(count):
        sockets.append(await Socket.open(base))
    return sockets


def live_games_rss(workdir: Path, games: int) -> tuple[float, float]:
    """RSS of `arena match` alone before and after ``games`` matches are created in it."""
    env = arena_env(workdir / "mem", free_port(), **BENCH_ENV)
    with processes([("match", env)], workdir) as (match,):
        before = rss_mb(match)
        uvloop.run(_create_matches(workdir / "mem", games))
        return before, rss_mb(match)


async def _create_matches(data_dir: Path, games: int) -> None:
    from arena_runtime import topics
    from arena_runtime.config import Settings
    from arena_runtime.envelope import CODEC, new_command
    from arena_runtime.eventlog.factory import open_event_log
    from arena_runtime.proto_gen.arena.v1 import match_pb2 as pb

    log = open_event_log(Settings.model_validate({"data_dir": data_dir}))
    await log.start()
    try:
        ends = sum((await log.end_offsets(topics.MATCH_EVENTS)).values())
        records = []
        for i in range(games):
            seats = [
                pb.MatchSeat(player_id=f"p_a{i}", display_name="A", kind=pb.SEAT_KIND_HUMAN),
                pb.MatchSeat(player_id=f"p_b{i}", display_name="B", kind=pb.SEAT_KIND_HUMAN),
            ]
            match_id = uuid.uuid4().hex
            payload = pb.StartMatch(
                match_id=match_id, game="maths-warriors", seats=seats, mode=pb.MATCH_MODE_CASUAL
            )
            command = new_command(f"match-{match_id}", payload, command_id=f"bench:{match_id}")
            records.append(CODEC.command_record(command))
        for start in range(0, games, 500):
            await log.append(topics.MATCH_COMMANDS, records[start : start + 500])
        target = ends + 2 * games  # MatchOpened + GameStarted each
        deadline = time.monotonic() + 120
        while sum((await log.end_offsets(topics.MATCH_EVENTS)).values()) < target:
            if time.monotonic() > deadline:
                raise RuntimeError("the match service did not create every game in time")
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # let the allocator settle
    finally:
        await log.close()


#: The services `arena serve` runs in children of their own for the second paced run.
APART = "match,matchmaking,rating"


def paced(serve: ArenaProcess, label: str, games: int, seconds: float, raw_p99: float) -> None:
    """The paced run on ``serve``: its moves/s and p99 against the embedded targets."""
    cpu, players = cpu_seconds(serve), players_cpu()
    rate, latencies = uvloop.run(drive(serve.url, games, seconds, rate=EMBEDDED_RATE))
    used = cpu_per_move(cpu, cpu_seconds(serve), latencies, players_cpu() - players)
    p99 = pct(latencies, 0.99) * 1000
    report(
        label,
        rate,
        latencies,
        f"paced to {EMBEDDED_RATE:.0f}/s; {used}; p99 = {p99 / raw_p99:.1f}x raw; "
        + target_line(rate, ">=", 1000, "1,000 moves/s")
        + "; "
        + target_line(p99, "<", 50, "50 ms", "p99"),
    )


def run(quick: bool = False) -> None:
    games = 10 if quick else 40
    seconds = 5.0 if quick else 15.0
    with tempfile.TemporaryDirectory(prefix="arena-bench-online-") as tmp:
        workdir = Path(tmp)
        print(f"{games} concurrent games of scripted players, {seconds:.0f} s per stack")

        (workdir / "raw").mkdir()
        raw = uvloop.run(embedded_round_trip(workdir / "raw", 200))
        raw_p50, raw_p99 = pct(raw, 0.5) * 1000, pct(raw, 0.99) * 1000
        print(f"  raw embedded log round trip        p50 {raw_p50:6.1f} ms   p99 {raw_p99:6.1f} ms")
        env = arena_env(workdir / "embedded", free_port(), **BENCH_ENV)
        with processes([("serve", env)], workdir) as (serve,):
            rate, latencies = uvloop.run(drive(serve.url, 1, seconds / 3, pace=0.02))
            ratio = pct(latencies, 0.5) * 1000 / raw_p50
            report("embedded, one game (unloaded)", rate, latencies, f"p50 = {ratio:.1f}x raw")
            paced(serve, "embedded (arena serve)", games, seconds, raw_p99)
            cpu, players = cpu_seconds(serve), players_cpu()
            rate, latencies = uvloop.run(drive(serve.url, games, seconds))
            used = cpu_per_move(cpu, cpu_seconds(serve), latencies, players_cpu() - players)
            report("embedded, as fast as it answers", rate, latencies, f"(capacity); {used}")
            sockets = 100 if quick else 500
            before = rss_mb(serve)

            async def hold() -> float:
                opened = await idle_sockets(serve.url, sockets)
                await asyncio.sleep(1.0)
                grown = rss_mb(serve) - before
                for socket in opened:
                    await socket.ws.close()
                return grown

            grown = uvloop.run(hold())
            per_1000 = grown * 1000 / sockets
            print(
                f"  gateway RSS per 1,000 idle sockets: {per_1000:6.1f} MB "
                f"(measured over {sockets})  " + target_line(per_1000, "<", 200, "200 MB")
            )

        env = arena_env(workdir / "apart", free_port(), ARENA_SERVE_SERVICES=APART, **BENCH_ENV)
        with processes([("serve", env)], workdir) as (serve,):
            paced(serve, "embedded, services apart", games, seconds, raw_p99)

        count = 200 if quick else 1000
        before, after = live_games_rss(workdir, count)
        per_1000 = (after - before) * 1000 / count
        print(
            f"  match RSS per 1,000 live games:     {per_1000:6.1f} MB "
            f"(over {count} games, {before:.0f} -> {after:.0f} MB)  "
            + target_line(per_1000, "<", 50, "50 MB")
        )
        _distributed(workdir, games, seconds)


def _distributed(workdir: Path, games: int, seconds: float) -> None:
    from arena_runtime.eventlog.kafka import KafkaEventLog

    from tests.harness.kafka import TansuBroker

    redis_url = os.environ.get("ARENA_TEST_REDIS", "redis://127.0.0.1:6379/0")
    postgres = os.environ.get(
        "ARENA_TEST_POSTGRES", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    broker = TansuBroker()
    bootstrap = broker.start()
    try:
        raw = uvloop.run(raw_round_trip(bootstrap, 200))
        raw_p50, raw_p99 = pct(raw, 0.5) * 1000, pct(raw, 0.99) * 1000
        print(f"  raw broker round trip (Tansu)      p50 {raw_p50:6.1f} ms   p99 {raw_p99:6.1f} ms")
        wait_ms = KafkaEventLog(bootstrap).fetch_max_wait_ms
        tail = uvloop.run(tail_round_trip(bootstrap, 200, wait_ms))
        print(
            f"  same, consumer waiting at the tail p50 {pct(tail, 0.5) * 1000:6.1f} ms   "
            f"p99 {pct(tail, 0.99) * 1000:6.1f} ms  (fetch wait {wait_ms} ms, as the services)"
        )
        relay = uvloop.run(tail_round_trip(bootstrap, 200, wait_ms, hops=2))
        relay_p99 = pct(relay, 0.99) * 1000
        print(
            f"  two hops through a bare relay      p50 {pct(relay, 0.5) * 1000:6.1f} ms   "
            f"p99 {relay_p99:6.1f} ms  (the floor of a move: {relay_p99 / raw_p99:.1f}x raw p99)"
        )
        shared = {
            **BENCH_ENV,
            "ARENA_KAFKA_BOOTSTRAP": bootstrap,
            "ARENA_TOPIC_PREFIX": f"bench{uuid.uuid4().hex[:6]}.",
            "ARENA_DATABASE_URL": postgres,
            "ARENA_REDIS_URL": redis_url,
            "ARENA_CACHE_PREFIX": f"bench{uuid.uuid4().hex[:6]}:",
            "ARENA_PARTITIONS": "4",
        }
        specs = [
            (name, arena_env(workdir / "dist", free_port(), **shared))
            for name in ("match", "matchmaking", "gateway")
        ]
        with processes(specs, workdir) as started:
            gateway = started[-1]
            rate, latencies = uvloop.run(drive(gateway.url, 1, seconds / 3, pace=0.02))
            ratio = pct(latencies, 0.99) * 1000 / raw_p99
            report("distributed, one game (unloaded)", rate, latencies, f"p99 = {ratio:.1f}x raw")
            cpu = cpu_seconds(*started)
            rate, latencies = uvloop.run(drive(gateway.url, games, seconds, rate=200.0))
            used = cpu_per_move(cpu, cpu_seconds(*started), latencies)
            ratio = pct(latencies, 0.99) * 1000 / raw_p99
            report(
                "distributed (3 processes)",
                rate,
                latencies,
                f"paced to 200/s; {used}; p99 = {ratio:.1f}x raw p99, "
                f"{pct(latencies, 0.99) * 1000 / relay_p99:.1f}x the two-hop floor; "
                + target_line(ratio, "<=", 3, "3x raw p99", "p99"),
            )
            cpu = cpu_seconds(*started)
            rate, latencies = uvloop.run(drive(gateway.url, games, seconds))
            used = cpu_per_move(cpu, cpu_seconds(*started), latencies)
            report("distributed, as fast as it answers", rate, latencies, f"(capacity); {used}")
    finally:
        broker.stop()
