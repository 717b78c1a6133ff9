"""Oversize WebSocket frames are refused from their header, never buffered: unauthenticated
clients sending 16 MiB frames at a real `arena serve` barely move its peak resident memory
(bench/oversize_frames.py measures it with 32 clients, and /healthz meanwhile)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes.arena_process import ArenaProcess, serving
from tests.processes.oversize import MIB, flood, peak_rss_during

CLIENTS = 8
#: Eight 16 MiB frames buffered whole (and decoded) would be well over 256 MB.
ALLOWED_GROWTH = 64 * MIB


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ArenaProcess]:
    with serving(tmp_path, ARENA_SERVE_PROJECTIONS="inline") as process:
        yield process


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
async def test_oversize_frames_leave_the_memory_of_the_process_alone(
    server: ArenaProcess,
) -> None:
    pid = server.proc.pid
    idle, _ = await peak_rss_during(pid, lambda: asyncio.sleep(0))
    peak, _ = await peak_rss_during(pid, lambda: flood("127.0.0.1", server.port, CLIENTS, 16 * MIB))
    assert peak - idle < ALLOWED_GROWTH, f"{(peak - idle) / MIB:.0f} MiB over the idle process"
    assert server.get("/healthz").status_code == 200
