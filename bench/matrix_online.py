"""Matrix Games online: N concurrent rooms over real WebSockets against `arena serve` (embedded).

Each room has one person's seat, played by a scripted client on its socket (``MatrixGamesBot``,
ordering as ``counter`` on the observation it is pushed), and seven scripted seats; beat pacing
off (``min_beat_seconds`` 0), the reference's other defaults (12 beats of 50 ticks). With pacing
off the person's order is a beat's last, so it plays the beat: the latency is from sending that
order to receiving the next observation (the next beat's ``state``, or the settled one after the
last beat), p50 and p99. Beats per second over the run, counted from the first order; a room
that ends opens the next.

Then a fifth of the rooms again with the server under cProfile (its main thread's CPU time;
the whole load under the profiler timed the lobby's requests out), for where the
server's CPU goes: the engine (``arena_engine``) beside the game module on the seam
(``arena_games``), the services and the runtime, and libraries and the standard library. C
functions (JSON, protobuf, SQLite calls) count for the package of the Python function that called
them. cProfile slows every Python call alike, so the shares, not the times, are the figures.
Baseline, same run: the engine alone playing the same number of beats in this process (process
CPU per beat), beside the server's CPU per beat (unprofiled run).
"""

from __future__ import annotations

import asyncio
import json
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import psutil
import uvloop
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.online_games import BENCH_ENV, pct  # noqa: E402
from tests.processes.arena_process import ARENA, arena_env, free_port  # noqa: E402

ROOM_SETTINGS = {"min_beat_seconds": 0}
#: Where each profiled function's package is counted (the first match of its file's path).
GROUPS = (
    ("arena_engine/", "engine (arena_engine)"),
    ("arena_games/", "game modules (arena_games)"),
    ("arena_match/", "match service"),
    ("arena_gateway/", "gateway"),
    ("arena_runtime/", "runtime (log, streams, host)"),
    ("arena_", "other services"),
    ("websockets/", "websockets"),
    ("google/protobuf/", "protobuf"),
    ("json/", "json"),
    ("asyncio/", "asyncio"),
)
OTHER = "other libraries and stdlib"


class Seat:
    """One room's person: a socket, its pushes and answers read as they come."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.queue: list[dict[str, Any]] = []
        self._n = 0

    @classmethod
    async def open(cls, base: str) -> Seat:
        # Generous waits: under the profiler, 50 sockets opening at once are slow to answer.
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            guest = (await http.post("/v1/guests")).json()
        url = base.replace("http", "ws") + f"/v1/ws?token={guest['token']}"
        return cls(await connect(url, max_queue=None, max_size=None, open_timeout=60))

    async def send(self, type_: str, **fields: Any) -> str:
        self._n += 1
        await self.ws.send(json.dumps({"type": type_, "id": str(self._n), **fields}))
        return str(self._n)

    async def next(self) -> dict[str, Any]:
        message = dict(json.loads(await self.ws.recv()))
        if message["type"] == "ping":
            await self.ws.send(json.dumps({"type": "pong", "id": f"p{message['id']}"}))
        return message

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        message_id = await self.send(type_, **fields)
        while True:
            message = await self.next()
            if message.get("id") == message_id and message["type"] in ("ack", "error"):
                if message["type"] == "error":
                    raise RuntimeError(f"refused: {message}")
                return dict(message["result"])
            if message["type"] not in ("ack", "error"):
                self.queue.append(message)

    async def push(self, type_: str, event: str = "") -> dict[str, Any]:
        while True:
            for i, message in enumerate(self.queue):
                if message["type"] == type_ and message.get("event", "") == event:
                    return self.queue.pop(i)
            message = await self.next()
            if message["type"] not in ("ack", "error"):
                self.queue.append(message)


def observation(message: dict[str, Any]) -> bool:
    return message.get("type") == "state" and message.get("protocol") == "matrix.player.v1"


async def play_rooms(
    base: str, until: float, latencies: list[float], first: list[float]
) -> tuple[int, int]:
    """Room after room until ``until``: the beats played and the episodes finished."""
    from arena_games.contract import Viewer
    from arena_games.matrix_games.bot import MatrixGamesBot

    seat = await Seat.open(base)
    beats = episodes = 0
    try:
        while time.perf_counter() < until:
            await seat.request("create_room", game="matrix-games", settings=ROOM_SETTINGS)
            await seat.request("start_room")
            welcome = await seat.push("welcome")
            bot = MatrixGamesBot(Viewer(welcome["slot"] + 1))
            bot.reply(0)  # the join: sent here, its ack read below
            await seat.request("matrix_join")
            over = False
            while not over and time.perf_counter() < until:
                while bot.observation is None or bot.observation["beat"] in bot.ordered:
                    bot.observe(await seat.push("state"))
                beat = bot.observation["beat"]
                reply = bot.reply(beat)
                assert reply is not None
                kind = reply.pop("type")
                sent = time.perf_counter()
                if not first:
                    first.append(sent)
                order_id = await seat.send(kind, **reply)
                answered = shown = False
                while not (answered and shown):
                    message = await seat.next()
                    if message["type"] == "error" and message.get("id") == order_id:
                        raise RuntimeError(f"order refused: {message}")
                    if message["type"] == "ack" and message.get("id") == order_id:
                        answered = True
                    elif observation(message) and message["beat"] > beat:
                        latencies.append(time.perf_counter() - sent)
                        beats += 1
                        shown = True
                        over = message.get("deadline_ms") is None
                        bot.observe(message)
                    elif message["type"] not in ("ack", "error"):
                        seat.queue.append(message)  # the final, the lobby's pushes
            if not over:
                break  # the run is over; the room holds its match until it ends
            episodes += 1
            await seat.push("final")
            await seat.push("lobby", "room_match_finished")
            await seat.request("leave_room")
            seat.queue.clear()
    finally:
        await seat.ws.close()
    return beats, episodes


async def drive(base: str, rooms: int, seconds: float) -> tuple[float, int, int, list[float]]:
    """Beats per second from the first order, beats, episodes and each beat's latency."""
    latencies: list[float] = []
    first: list[float] = []
    until = time.perf_counter() + seconds
    counts = await asyncio.gather(
        *(play_rooms(base, until, latencies, first) for _ in range(rooms))
    )
    beats = sum(c[0] for c in counts)
    elapsed = time.perf_counter() - (first[0] if first else until - seconds)
    return beats / elapsed, beats, sum(c[1] for c in counts), latencies


#: `arena serve` with a profiler of its main thread that SIGUSR1 starts and SIGUSR2 stops and
#: writes to argv[1]: only the load is profiled, not start-up's imports nor the shutdown. It
#: counts the thread's CPU time: a wait (a future, a lock) costs nothing.
PROFILED = """
import cProfile, signal, sys, time
profile, path = cProfile.Profile(time.thread_time), sys.argv.pop(1)
signal.signal(signal.SIGUSR1, lambda *_: profile.enable())
signal.signal(signal.SIGUSR2, lambda *_: (profile.disable(), profile.dump_stats(path)))
from arena_cli.main import main
sys.exit(main())
"""


def serve(workdir: Path, profile: Path | None = None) -> subprocess.Popen[bytes]:
    """`arena serve` (profiled on signal when ``profile`` names its output), ready."""
    port = free_port()
    env = arena_env(workdir / ("profiled" if profile else "plain"), port, **BENCH_ENV)
    command = [str(ARENA), "serve"]
    if profile is not None:
        command = [sys.executable, "-c", PROFILED, str(profile), "serve"]
    log = (workdir / f"serve-{port}.log").open("wb")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    process.args = f"http://127.0.0.1:{port}"  # the base URL, kept with the process
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"arena serve exited: {(workdir / f'serve-{port}.log').read_text()}")
        try:
            if httpx.get(f"{process.args}/readyz", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("arena serve never became ready")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def group_of(filename: str) -> str:
    for marker, name in GROUPS:
        if f"/{marker}" in filename:
            return name
    return OTHER


def shares(profile: Path) -> tuple[dict[str, float], dict[str, float]]:
    """Seconds of the profiled thread per group, and per place for the other libraries and the
    standard library; a C function's time goes to its Python callers' groups, in proportion to
    the time each caller spent in it."""
    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    seconds: dict[str, float] = defaultdict(float)
    others: dict[str, float] = defaultdict(float)

    def count(filename: str, name: str, spent: float) -> None:
        group = group_of(filename)
        seconds[group] += spent
        if group == OTHER:
            others[name if filename == "~" else "/".join(Path(filename).parts[-2:])] += spent

    for (filename, _, name), (_, _, tottime, _, callers) in stats.items():
        if filename != "~":
            count(filename, name, tottime)
            continue
        spent = {caller: entry[2] for caller, entry in callers.items()}
        total = sum(spent.values())
        if not total:
            count(filename, name, tottime)
            continue
        for (caller_file, _, caller_name), part in spent.items():
            count(caller_file, name if caller_file == "~" else caller_name, tottime * part / total)
    return dict(seconds), dict(others)


def engine_cpu_per_beat(beats: int) -> float:
    """The engine alone: full episodes of the same setup (one ``counter`` seat, seven scripted
    ``counter`` seats, 12 beats of 50 ticks) until ``beats`` are played; process CPU per beat."""
    from arena_engine.matrix_games import Settings, Sim
    from arena_engine.matrix_games.episode import play_beat, scripted_orders

    policies = ["counter"] * 8
    played = seed = 0
    started = time.process_time()
    while played < beats:
        sim = Sim(Settings(seed=seed), policies)
        seed += 1
        while sim.beat < sim.settings.beats and not sim.done and played < beats:
            play_beat(sim, scripted_orders(sim, policies))
            played += 1
    return (time.process_time() - started) / max(1, played)


def run(quick: bool = False) -> None:
    rooms = 10 if quick else 50
    seconds = 6.0 if quick else 20.0
    print(f"{rooms} concurrent Matrix Games rooms (1 socket seat + 7 scripted), {seconds:.0f} s")
    with tempfile.TemporaryDirectory(prefix="arena-bench-matrix-") as tmp:
        workdir = Path(tmp)
        server = serve(workdir)
        try:
            cpu = psutil.Process(server.pid).cpu_times()
            rate, beats, episodes, latencies = uvloop.run(drive(str(server.args), rooms, seconds))
            after = psutil.Process(server.pid).cpu_times()
        finally:
            stop(server)
        used = (after.user + after.system - cpu.user - cpu.system) / max(1, beats)
        print(
            f"  embedded (arena serve)  {rate:7.1f} beats/s  ({beats} beats, {episodes} episodes)"
            f"   order -> next observation p50 {pct(latencies, 0.5) * 1000:6.1f} ms"
            f"   p99 {pct(latencies, 0.99) * 1000:6.1f} ms"
        )
        engine = engine_cpu_per_beat(min(beats, 600) or 12)
        print(
            f"  server CPU per beat      {used * 1000:6.2f} ms   the engine alone, same beats: "
            f"{engine * 1000:6.2f} ms ({engine / used:.0%} of the server's)"
        )

        # A fifth of the rooms: under the profiler the full load times the lobby's requests out.
        profiled = max(1, rooms // 5)
        profile = workdir / "serve.prof"
        server = serve(workdir, profile)
        try:
            server.send_signal(signal.SIGUSR1)
            _, profiled_beats, _, _ = uvloop.run(drive(str(server.args), profiled, seconds))
            server.send_signal(signal.SIGUSR2)
            deadline = time.monotonic() + 60
            while not profile.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1.0)  # the dump is written whole
        finally:
            stop(server)
        seconds_by_group, others = shares(profile)
        total = sum(seconds_by_group.values())
        print(
            f"  under cProfile ({profiled} rooms, {profiled_beats} beats), the CPU time of the "
            "server's main thread:"
        )
        for name, spent in sorted(seconds_by_group.items(), key=lambda item: -item[1]):
            print(f"    {name:<32} {spent / total:6.1%}")
        top = sorted(others.items(), key=lambda item: -item[1])[:6]
        print("    of the others: " + ", ".join(f"{n} {t / total:.1%}" for n, t in top))
