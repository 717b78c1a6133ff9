"""Cold start of each service: a new `arena <service>` process over the Tansu broker, PostgreSQL
and Redis, from its spawn to `/healthz` answering (its dependencies reached: settings checked,
topics created or checked, the database migrated, the cache opened) and to `/readyz` 200 (caught
up with the log, its partitions assigned).

Each service is started alone, one after the other, twice: first on a new deployment (empty
database and no topics: the first process creates and migrates them), then again on the same
ones, which is what a restart or a new replica does. The log holds the first round's games:
a few matches played through the gateway between the rounds, so every group has something to
catch up on. (Cold start with 100,000 finished matches in the log comes with the match service's
stream-state snapshots, whose bench measures failover on that log.)

Same-run baselines, measured first: spawning the interpreter (`python -c pass`) and importing
the runtime host alone (`python -c "import arena_runtime.host"`), so a slow figure can be told
from a slow machine. Each start's phases (seconds since spawn when each ended, from the process's
own "ready" log line, see arena_runtime.host.clock) say where its time went.

Target: ready in < 10 s for every service (issue 18).

The consumer-group timings are the product's defaults unless ``ARENA_CONSUMER_SESSION_TIMEOUT_MS``
or ``ARENA_CONSUMER_HEARTBEAT_MS`` is set in the bench's own environment: it is passed on to
every process, so other settings can be measured on the same code.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.targets import target_line  # noqa: E402
from tests.harness.kafka import TansuBroker  # noqa: E402
from tests.harness.postgres import _admin, postgres_server  # noqa: E402
from tests.harness.redis import redis_server  # noqa: E402
from tests.harness.support import run_sync  # noqa: E402
from tests.processes.arena_process import ArenaProcess, arena_env, free_port  # noqa: E402

SERVICES = ("gateway", "match", "matchmaking", "rating", "projections")
#: Settings passed on from the bench's environment (the test processes' is cleared of ARENA_*).
PASSED_ON = ("ARENA_CONSUMER_SESSION_TIMEOUT_MS", "ARENA_CONSUMER_HEARTBEAT_MS")
TARGET_SECONDS = 10.0
GAMES = 5


def _baseline(code: str, runs: int = 3) -> float:
    """The median seconds of `python -c code`, spawn to exit."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _stale_bytecode() -> list[Path]:
    """Sources of the libraries and services whose compiled bytecode is missing or older: with
    PYTHONDONTWRITEBYTECODE set (as here) each process compiles those again at every start."""
    stale = []
    for source in sorted(ROOT.glob("libs/*/src/**/*.py")) + sorted(
        ROOT.glob("services/*/src/**/*.py")
    ):
        compiled = Path(importlib.util.cache_from_source(str(source)))
        try:
            header = compiled.read_bytes()[:16]
        except OSError:
            stale.append(source)
            continue
        # The header (PEP 552): magic, flags, then the source's mtime and size it was made from.
        # (Hash-based bytecode, flags not 0, is checked otherwise: taken as current.)
        mtime = int.from_bytes(header[8:12], "little")
        by_time = header[4:8] == b"\0\0\0\0"
        if header[:4] != importlib.util.MAGIC_NUMBER or (
            by_time and mtime != int(source.stat().st_mtime) & 0xFFFFFFFF
        ):
            stale.append(source)
    return stale


def _phases(log: str) -> dict[str, float]:
    """The phases of the start from the process's "ready" line (JSON logs), empty if absent."""
    for line in log.splitlines():
        if '"ready"' not in line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") == "ready":
            return dict(entry.get("phases", {}))
    return {}


def _time_start(
    name: str, workdir: Path, env: dict[str, str], label: str
) -> tuple[float, float, dict[str, float]]:
    """(seconds to /healthz 200, seconds to /readyz 200, the phases the process logged) of one
    new process; then SIGTERM."""
    env = {**env, "ARENA_LOG_LEVEL": "INFO", "ARENA_LOG_FORMAT": "json"}
    process = ArenaProcess(
        [name], arena_env(workdir / "var", free_port(), **env), workdir / f"{name}-{label}.log"
    )
    started = time.perf_counter()
    try:
        process.wait_until("/healthz", 200, timeout=120)
        up = time.perf_counter() - started
        process.wait_until("/readyz", 200, timeout=120)
        ready = time.perf_counter() - started
        deadline = time.monotonic() + 5
        while not (phases := _phases(process.output())) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        process.terminate()
    return up, ready, phases


async def _play(url: str, games: int) -> None:
    """A few games against the AI, resigned after the first move: records in every topic."""
    from tests.e2e.client import signed_in

    for _ in range(games):
        player = await signed_in(url)
        await player.ok("play_ai", level="easy")
        await player.push("snapshot")
        await player.ok("resign")
        await player.close()


def run(quick: bool = False) -> None:
    broker = TansuBroker()
    bootstrap = broker.start()
    try:
        with postgres_server() as server, redis_server() as redis_url:
            database = f"arena_bench_{secrets.token_hex(4)}"
            run_sync(lambda: _admin(server, f'CREATE DATABASE "{database}"'))
            try:
                url = server.set(drivername="postgresql+asyncpg", database=database)
                env = {
                    "ARENA_KAFKA_BOOTSTRAP": bootstrap,
                    "ARENA_DATABASE_URL": url.render_as_string(hide_password=False),
                    "ARENA_REDIS_URL": redis_url,
                    "ARENA_CACHE_PREFIX": f"bench_{secrets.token_hex(4)}:",
                    "ARENA_LOG_LEVEL": "WARNING",
                    **{name: os.environ[name] for name in PASSED_ON if os.environ.get(name)},
                }
                print(
                    "consumer groups: "
                    + ", ".join(f"{name}={env.get(name, 'default')}" for name in PASSED_ON),
                    flush=True,
                )
                _measure(env, quick)
            finally:
                run_sync(
                    lambda: _admin(server, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
                )
    finally:
        broker.stop()


def _measure(env: dict[str, str], quick: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="arena-cold-start-") as tmp:
        workdir = Path(tmp)
        rounds = ["new deployment"] if quick else ["new deployment", "restart"]
        stale = _stale_bytecode()
        if stale:
            print(
                f"warning: {len(stale)} source files newer than their bytecode, compiled again "
                f"at every start (make install compiles them), e.g. {stale[0].relative_to(ROOT)}",
                flush=True,
            )
        interpreter = _baseline("pass")
        runtime = _baseline("import arena_runtime.host")
        print(
            f"baseline: python -c pass {interpreter:.2f} s, "
            f"import arena_runtime.host {runtime:.2f} s",
            flush=True,
        )
        results: dict[str, dict[str, tuple[float, float]]] = {}
        for number, label in enumerate(rounds):
            if number == 1:
                _with_games(workdir, env)
            for name in SERVICES:
                up, ready, phases = _time_start(name, workdir, env, f"{number}")
                results.setdefault(name, {})[label] = (up, ready)
                print(f"{name:12s} {label:15s} up {up:5.2f} s, ready {ready:5.2f} s", flush=True)
                if phases:
                    steps = ", ".join(f"{phase} {at:.2f}" for phase, at in phases.items())
                    print(f"{'':12s} phases (s since spawn): {steps}", flush=True)
        worst = max(ready for by_round in results.values() for _, ready in by_round.values())
        print(f"slowest cold start: {worst:.2f} s")
        print(
            target_line(worst, "<", TARGET_SECONDS, f"{TARGET_SECONDS:g} s", "every service ready")
        )


def _with_games(workdir: Path, env: dict[str, str]) -> None:
    """The whole stack for a moment: a few games, so the restart round has a log to read."""
    processes = [
        ArenaProcess(
            [name], arena_env(workdir / "var", free_port(), **env), workdir / f"{name}-play.log"
        )
        for name in ("gateway", "match", "matchmaking", "rating", "projections")
    ]
    try:
        for process in processes:
            process.wait_until("/readyz", 200, timeout=120)
        asyncio.run(_play(processes[0].url, GAMES))
        # The projections apply what was played before they stop.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            metrics = httpx.get(processes[-1].url + "/metrics").text
            if "arena_projection_records_applied_total" in metrics:
                break
            time.sleep(0.2)
    finally:
        for process in processes:
            process.terminate()
