"""The Maze online through the service (issue 17): concurrent games of scripted players over real
WebSockets against the embedded default (`arena serve`).

Each game is two sockets, each played by the contract's bot (``arena_games.maze.bot``: the
engine's Explorer on exactly the records its socket is pushed) at the cooldown's pace: a player
sends its next action one cooldown after the last ack (so no move is refused for the cooldown,
whatever the latency). A game that ends is followed by its rematch (seats swapped), so the load
holds for the whole run. Default settings (15 x 15, cooldown 150 ms) but a 1 s countdown.

Figures: accepted moves per second (from the first move), and the latency from sending a move to
both views being pushed: the mover's view of that state sequence and, when the change lay in the
other player's square (the module's rule, docs/rules/maze.md "Online"), the other's too; p50 and
p99. Baselines in the same run: the raw append-to-consume round trip of the embedded log, and the
same measure for one game alone on the same server. The machine's load average is printed.

Target (issue 17): p99 under 30 ms embedded with 200 concurrent games.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import uvloop
from arena_games.contract import Viewer
from arena_games.maze.bot import MazeBot
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.online_games import BENCH_ENV, embedded_round_trip, pct, processes  # noqa: E402
from bench.targets import target_line  # noqa: E402
from tests.processes.arena_process import arena_env, free_port  # noqa: E402

GAMES = 200
P99_TARGET_MS = 30.0
SETTINGS = {"countdown_ms": 1000}
COOLDOWN_S = 0.150  # the default cooldown, which SETTINGS keep


class MazeSocket:
    """One player's socket: acks matched by id; each completed view's arrival time kept by
    (match, state sequence) and shown to the bot."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._n = 0
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.arrived = asyncio.Event()
        self.lobby: list[str] = []
        self.match_id = ""
        self.bot: MazeBot | None = None
        self.views: dict[tuple[str, int], float] = {}
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, http: httpx.AsyncClient, base: str) -> MazeSocket:
        token = (await http.post("/v1/guests")).json()["token"]
        url = base.replace("http", "ws") + f"/v1/ws?token={token}"
        return cls(await connect(url, max_queue=None))

    async def _read(self) -> None:
        async for raw in self.ws:
            now = time.perf_counter()
            message = json.loads(raw)
            kind = message["type"]
            if kind in ("ack", "error") and message.get("id") in self._answers:
                self._answers.pop(message["id"]).set_result(message)
                continue
            if kind == "maze_view":
                if message["chunk"] == message["chunks"] - 1:  # a view's records come in order
                    self.views[(self.match_id, message["seq"])] = now
                if self.bot is not None:
                    self.bot.observe(message)
            elif kind == "maze_match":
                self.match_id = message["match_id"]
                self.bot = MazeBot(Viewer(int(message["role"])))
            elif kind == "lobby":
                self.lobby.append(message["event"])
            elif kind == "ping":
                await self.ws.send(json.dumps({"type": "pong", "id": f"p{message['id']}"}))
            self.arrived.set()

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        self._n += 1
        message_id = fields.pop("id", None) or str(self._n)
        future = self._answers[message_id] = asyncio.get_running_loop().create_future()
        await self.ws.send(json.dumps({"type": type_, "id": message_id, **fields}))
        return await asyncio.wait_for(future, 30)

    async def ok(self, type_: str, **fields: Any) -> dict[str, Any]:
        """An acked request; a lobby request that timed out under the start's load is sent
        again with the same id (the lobby answers a repeated id once)."""
        answer = await self.request(type_, **fields)
        for _ in range(5):
            if answer.get("code") != "timeout":
                break
            answer = await self.request(type_, id=answer["id"], **fields)
        if answer["type"] != "ack":
            raise RuntimeError(f"{type_} refused: {answer}")
        return dict(answer["result"])

    async def until(self, done: Any) -> None:
        while True:
            self.arrived.clear()
            if done():
                return
            await asyncio.wait_for(self.arrived.wait(), 30)

    async def lobby_event(self, event: str) -> None:
        await self.until(lambda: event in self.lobby)
        self.lobby.remove(event)

    def phase(self) -> str:
        view = self.bot.view if self.bot is not None else None
        return view.phase if view is not None else "countdown"


@dataclass
class Run:
    until: float = float("inf")
    #: Pairs whose room is made; the run's end is set once all are.
    ready: int = 0
    #: (match, state sequence, sent, mover, other) of every accepted move.
    moves: list[tuple[str, int, float, MazeSocket, MazeSocket]] = field(default_factory=list)
    refused: int = 0
    games: int = 0
    #: CPU seconds the bots (this process) used over the measured window.
    bots_cpu: float = 0.0


async def play(me: MazeSocket, other: MazeSocket, run: Run) -> None:
    """One seat of one match, at the cooldown's pace, until it is over or the run is."""
    match_id = me.match_id
    while time.perf_counter() < run.until:
        await me.until(lambda: me.phase() != "countdown")
        if me.phase() == "over":
            return
        assert me.bot is not None
        reply = me.bot.reply(0)
        if reply is None:  # out of the maze, waiting for the window to close
            me.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(me.arrived.wait(), 1)
            continue
        kind = reply.pop("type")
        sent = time.perf_counter()
        answer = await me.request(kind, **reply)
        if answer["type"] == "ack" and answer["result"]["seq"] is not None:
            run.moves.append((match_id, answer["result"]["seq"], sent, me, other))
        else:
            run.refused += 1
        await asyncio.sleep(COOLDOWN_S)


async def pair(http: httpx.AsyncClient, base: str, run: Run, opening: asyncio.Semaphore) -> None:
    """Two players: a room, then rematch after rematch until the run is over."""
    async with opening:  # 200 rooms asked for at once time out on a loaded machine
        host, guest = await MazeSocket.open(http, base), await MazeSocket.open(http, base)
        code = (await host.ok("create_room", game="maze", settings=SETTINGS))["code"]
        await guest.ok("join_room", code=code)
    run.ready += 1
    try:
        while True:
            await host.until(lambda: host.bot is not None)
            await guest.until(lambda: guest.bot is not None and guest.match_id == host.match_id)
            await asyncio.gather(play(host, guest, run), play(guest, host, run))
            if time.perf_counter() >= run.until:
                return
            run.games += 1
            await host.lobby_event("room_match_finished")
            host.bot = guest.bot = None
            await host.ok("rematch_request")
            await guest.ok("rematch_accept")
    finally:
        for socket in (host, guest):
            await socket.ws.close()
            await asyncio.gather(socket.reader, return_exceptions=True)


def latencies(run: Run) -> tuple[list[float], list[float], float]:
    """Each accepted move's time to the mover's view and to both views (the other player's
    when they were pushed one), and the share of moves the other player was shown."""
    mover, both, shown = [], [], 0
    for match_id, seq, sent, me, other in run.moves:
        mine = me.views.get((match_id, seq))
        if mine is None:
            continue  # cut off by the end of the run
        theirs = other.views.get((match_id, seq))
        shown += theirs is not None
        mover.append(mine - sent)
        both.append(max(mine, theirs or mine) - sent)
    return mover, both, shown / max(1, len(mover))


def own_cpu() -> float:
    """CPU seconds (user + system) of this process so far: the bots' and their sockets'."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def drive(base: str, pid: int, games: int, seconds: float) -> tuple[Run, float, float]:
    """``games`` pairs for ``seconds`` once all are made: the run, the accepted moves per second
    and the server's CPU seconds over the same window (the bots' in ``run.bots_cpu``)."""
    run = Run()
    opening = asyncio.Semaphore(20)
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        pairs = asyncio.gather(*(pair(http, base, run, opening) for _ in range(games)))
        while run.ready < games:
            await asyncio.wait([pairs], timeout=0.1)
            if pairs.done():
                pairs.result()  # a pair failed: raise it
        run.until = time.perf_counter() + 1.5 + seconds  # the last rooms' countdown, then play
        await asyncio.sleep(1.5)
        start, cpu, bots = time.perf_counter(), server_cpu(pid), own_cpu()
        await pairs
        cpu = server_cpu(pid) - cpu
        run.bots_cpu = own_cpu() - bots
    # The figures are read while every game is playing: after the last rooms' countdown.
    run.moves = [m for m in run.moves if m[2] >= start]
    return run, len(run.moves) / (run.until - start), cpu


def report(label: str, run: Run, rate: float) -> float:
    mover, both, shown = latencies(run)
    p99 = pct(both, 0.99) * 1000
    print(
        f"  {label:<30} {rate:7.0f} moves/s ({len(run.moves)} accepted, {run.refused} refused, "
        f"{run.games} games ended); to the mover's view p50 {pct(mover, 0.5) * 1000:5.1f} "
        f"p99 {pct(mover, 0.99) * 1000:5.1f} ms; to both views p50 {pct(both, 0.5) * 1000:5.1f} "
        f"p99 {p99:5.1f} ms (the other shown {shown:.0%} of moves)"
    )
    return p99


def budget(games: int, run: Run, server_seconds: float) -> None:
    """The server's and the bots' CPU per accepted move, and how many of the machine's cores
    carrying every move offered at that cost would take: the bench's physical limit."""
    moves = max(1, len(run.moves))
    server, bots = server_seconds * 1000 / moves, run.bots_cpu * 1000 / moves
    offered = games * 2 / COOLDOWN_S
    print(
        f"  {games} games: server CPU {server:.2f} ms per accepted move (`arena serve` and its "
        f"children, over the same window), the bots' {bots:.2f} ms (this process); "
        f"offered {offered:.0f} moves/s at the cooldown's pace, which at that cost would take "
        f"{offered * (server + bots) / 1000:.1f} of the machine's {os.cpu_count()} cores"
    )


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children so far."""
    process = psutil.Process(pid)
    total = 0.0
    for each in (process, *process.children(recursive=True)):
        with contextlib.suppress(psutil.NoSuchProcess):
            times = each.cpu_times()
            total += times.user + times.system
    return total


def run(quick: bool = False) -> None:
    games = 20 if quick else GAMES
    seconds = 5.0 if quick else 20.0
    with tempfile.TemporaryDirectory(prefix="arena-bench-maze-") as tmp:
        workdir = Path(tmp)
        print(f"load average {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs")
        (workdir / "raw").mkdir()
        raw = uvloop.run(embedded_round_trip(workdir / "raw", 200))
        raw_p99 = pct(raw, 0.99) * 1000
        raw_p50 = pct(raw, 0.5) * 1000
        print(f"  raw embedded log round trip    p50 {raw_p50:5.1f} p99 {raw_p99:5.1f} ms")
        env = arena_env(workdir / "embedded", free_port(), **BENCH_ENV)
        with processes([("serve", env)], workdir) as (serve,):
            pid = serve.proc.pid
            alone, rate, _ = uvloop.run(drive(serve.url, pid, 1, seconds / 2))
            alone_p99 = report("one game alone", alone, rate)
            for count in (games // 10, games):
                loaded, rate, cpu = uvloop.run(drive(serve.url, pid, count, seconds))
                p99 = report(f"{count} games", loaded, rate)
                budget(count, loaded, cpu)
        env = arena_env(workdir / "apart", free_port(), ARENA_SERVE_SERVICES="match", **BENCH_ENV)
        with processes([("serve", env)], workdir) as (serve,):
            loaded, rate, cpu = uvloop.run(drive(serve.url, serve.proc.pid, games, seconds))
            apart_p99 = report(f"{games} games, match apart", loaded, rate)
            budget(games, loaded, cpu)
        print(
            f"  {games} games: p99 {p99:.1f} ms = {p99 / alone_p99:.1f}x one game alone, "
            f"{p99 / raw_p99:.1f}x the raw round trip; "
            + target_line(p99, "<", P99_TARGET_MS, f"{P99_TARGET_MS:g} ms", "p99 to both views")
        )
        print(
            f"  {games} games, match apart (ARENA_SERVE_SERVICES=match): p99 {apart_p99:.1f} ms; "
            + target_line(
                apart_p99, "<", P99_TARGET_MS, f"{P99_TARGET_MS:g} ms", "p99 to both views"
            )
        )
        print(f"load average {os.getloadavg()[0]:.1f} (1 min)")
