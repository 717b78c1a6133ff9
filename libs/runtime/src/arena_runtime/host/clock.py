"""How long each phase of a process's start took, counted from the process's spawn.

The host marks each phase as it ends (settings read, log opened, database migrated, cache opened,
services built, HTTP listening, workers started: their groups joined, ready) and logs them once
ready, so a slow start says where its time went; `python -m bench cold_start` prints them.
"""

from __future__ import annotations

import os
import time


def since_spawn() -> float | None:
    """Seconds since this process was spawned (from /proc on Linux), None where unknown."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as uptime:
            now = float(uptime.read().split()[0])
        return now - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class StartClock:
    """Phases in the order they end, each as seconds since spawn (or since the clock was made,
    where the spawn time is unknown)."""

    def __init__(self) -> None:
        self._offset = since_spawn() or 0.0
        self._origin = time.monotonic()
        self.phases: dict[str, float] = {}

    def now(self) -> float:
        return round(self._offset + time.monotonic() - self._origin, 3)

    def mark(self, phase: str) -> None:
        self.phases[phase] = self.now()
