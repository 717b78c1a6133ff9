"""Oversize WebSocket frames: 32 unauthenticated clients at once, each sending 16 MiB text frames
(three in a row, one per connection) at a fresh `arena serve`.

Figures: the serving process's peak resident memory during the attack above the same process
idle just before it (the kernel's VmHWM, reset first, and a 1 ms sampler), and the slowest
`/healthz` answered meanwhile to a client asking one request after another (the attackers run in
a process of their own); the same client's figures over 2 s of the idle process are the
baseline.

Targets: < 64 MB above idle (a frame over ARENA_WS_MAX_MESSAGE_BYTES is refused from its header,
never buffered); slowest /healthz < 100 ms. Before the limit applied at the protocol layer the
frames were buffered whole: 131 MB idle went to 1.09 GB, and /healthz stalled for seconds.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TypeVar

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.targets import target_line  # noqa: E402
from tests.processes.arena_process import serving  # noqa: E402
from tests.processes.oversize import MIB, flood, peak_rss_during  # noqa: E402

CLIENTS = 32
FRAME_BYTES = 16 * MIB
TARGET_GROWTH_MB = 64
TARGET_HEALTHZ_MS = 100
T = TypeVar("T")


async def probe_healthz(url: str, stop: asyncio.Event) -> list[float]:
    """Seconds each /healthz took, asked one request after another until ``stop`` (at least
    once)."""
    took = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        await http.get("/healthz")  # the connection, made before the clock starts
        while not took or not stop.is_set():  # at least one, however short the work
            started = time.perf_counter()
            response = await http.get("/healthz")
            took.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"/healthz answered {response.status_code}")
    return took


def _flood(port: int, clients: int, rounds: int) -> float:
    """The attack, in a process of its own: the clients' CPU is not the probe's."""
    started = time.perf_counter()
    asyncio.run(flood("127.0.0.1", port, clients, FRAME_BYTES, rounds))
    return time.perf_counter() - started


async def probed(url: str, work: Awaitable[T]) -> tuple[list[float], T]:
    """(every /healthz latency while ``work`` ran, its result)."""
    stop = asyncio.Event()
    prober = asyncio.create_task(probe_healthz(url, stop))
    try:
        result = await work
    finally:
        stop.set()
    return await prober, result


async def attack(url: str, port: int, clients: int, rounds: int) -> tuple[list[float], float]:
    """(every /healthz latency during the attack, the attack's duration in seconds)."""
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        await loop.run_in_executor(pool, _flood, port, 0, 0)  # started, imports done
        return await probed(url, loop.run_in_executor(pool, _flood, port, clients, rounds))


def run(quick: bool = False) -> None:
    clients, rounds = (8, 1) if quick else (CLIENTS, 3)
    with tempfile.TemporaryDirectory(prefix="arena-bench-frames-") as tmp:
        workdir = Path(tmp)
        with serving(workdir, timeout=180, ARENA_LOG_LEVEL="WARNING") as server:
            pid = server.proc.pid
            idle, (calm, _) = asyncio.run(
                peak_rss_during(pid, lambda: probed(server.url, asyncio.sleep(2.0)))
            )
            peak, (latencies, seconds) = asyncio.run(
                peak_rss_during(pid, lambda: attack(server.url, server.port, clients, rounds))
            )
    growth = (peak - idle) / MIB
    slowest = max(latencies) * 1000
    sent = clients * rounds * FRAME_BYTES / MIB
    print(f"{clients} unauthenticated clients, {rounds} frames of 16 MiB each: {sent:.0f} MiB")
    print(f"  sent in {seconds:.2f} s")
    growth_target = target_line(growth, "<", TARGET_GROWTH_MB, f"{TARGET_GROWTH_MB} MB", "rise")
    print(
        f"peak RSS      : {peak / MIB:.0f} MB, idle {idle / MIB:.0f} MB: +{growth:.1f} MB "
        f"({growth_target})"
    )
    slowest_target = target_line(
        slowest, "<", TARGET_HEALTHZ_MS, f"{TARGET_HEALTHZ_MS} ms", "slowest"
    )
    print(
        f"/healthz      : slowest {slowest:.1f} ms of {len(latencies)} during the attack "
        f"({slowest_target}); median {statistics.median(latencies) * 1000:.1f} ms"
    )
    print(
        f"  baseline    : slowest {max(calm) * 1000:.1f} ms of {len(calm)} idle, "
        f"median {statistics.median(calm) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    run()
