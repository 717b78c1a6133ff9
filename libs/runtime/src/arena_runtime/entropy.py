"""Unpredictable bytes for ids and seeds, a system call per few hundred rather than per value.

``uuid.uuid4()`` and ``secrets.randbits()`` each read the kernel's random source: a system call
per id or seed, and a move makes several (its command, its events, its batch, its dice). This
reads the same source (``os.urandom``) in blocks and hands out slices, so the values are as
unpredictable as before: dice seeds must stay so, or a player who saw enough of them could tell
the next rolls.
"""

from __future__ import annotations

import os
import threading

_BLOCK = 4096


class RandomBytes:
    """Slices of ``os.urandom`` blocks; safe to share between threads."""

    def __init__(self, block: int = _BLOCK) -> None:
        self._block = block
        self._buffer = b""
        self._at = 0
        self._lock = threading.Lock()

    def take(self, size: int) -> bytes:
        with self._lock:
            if self._at + size > len(self._buffer):
                self._buffer, self._at = os.urandom(max(self._block, size)), 0
            chunk = self._buffer[self._at : self._at + size]
            self._at += size
            return chunk


_SOURCE = RandomBytes()


def new_uuid() -> str:
    """A random (version 4) UUID, as ``str(uuid.uuid4())`` gives (formatted here: ``uuid.UUID``
    costs a few microseconds, and a move makes several ids)."""
    raw = bytearray(_SOURCE.take(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def random_bits(bits: int) -> int:
    """A random non-negative integer below ``2 ** bits``, as ``secrets.randbits`` gives."""
    return int.from_bytes(_SOURCE.take((bits + 7) // 8), "big") >> (-bits % 8)
