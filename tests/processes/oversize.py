"""Unauthenticated clients sending oversize WebSocket frames, and the peak resident memory of the
process they are sent to: shared by tests/processes/test_oversize_frames.py and
bench/oversize_frames.py.

The clients speak raw WebSocket over TCP: a handshake, one text frame's header (masked with a zero
key, so the payload goes as it is) and its payload written in slices of one shared buffer, so a
client costs no copy of the frame however many run at once.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import struct
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import psutil

MIB = 1024 * 1024
CHUNK = 256 * 1024
T = TypeVar("T")


def text_frame_header(length: int) -> bytes:
    """FIN and text, masked (clients must mask) with a zero key, a 64-bit length."""
    return struct.pack("!BBQ", 0x81, 0x80 | 127, length) + b"\x00\x00\x00\x00"


async def send_oversize_frame(host: str, port: int, payload: memoryview) -> None:
    """Open a WebSocket, send ``payload`` as one text frame, and wait until the server closes.
    A server that refuses the frame from its header closes while the payload is still going:
    the client's writes then fail, and that is the end of it too."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            f"GET /v1/ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise RuntimeError(f"no WebSocket: {head[:40]!r}")
        with contextlib.suppress(ConnectionError):
            writer.write(text_frame_header(len(payload)))
            for start in range(0, len(payload), CHUNK):
                writer.write(payload[start : start + CHUNK])
                await writer.drain()
            while await reader.read(65536):  # the server's answer, until it closes
                pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def flood(host: str, port: int, clients: int, frame_bytes: int, rounds: int = 1) -> None:
    """``clients`` clients at once, each sending ``rounds`` frames of ``frame_bytes``, one per
    connection."""
    payload = memoryview(b"x" * frame_bytes)

    async def client() -> None:
        for _ in range(rounds):
            await send_oversize_frame(host, port, payload)

    await asyncio.gather(*(client() for _ in range(clients)))


async def peak_rss_during(pid: int, work: Callable[[], Awaitable[T]]) -> tuple[int, T]:
    """(the most memory ``pid`` had resident while ``work`` ran, in bytes; its result).

    The kernel's own high-water mark (VmHWM) is reset first where we may (clear_refs, our own
    processes); a thread sampling the resident size every millisecond covers the rest.
    """
    hwm = _reset_high_water_mark(pid)
    process = psutil.Process(pid)
    sampled = [process.memory_info().rss]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            with contextlib.suppress(psutil.Error):
                sampled.append(process.memory_info().rss)
            time.sleep(0.001)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = await work()
    finally:
        done.set()
        sampler.join()
    peak = max(sampled)
    if hwm:
        peak = max(peak, _high_water_mark(pid))
    return peak, result


def _reset_high_water_mark(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _high_water_mark(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(x for x in status if x.startswith("VmHWM:")).split()[1]) * 1024
