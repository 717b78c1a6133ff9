"""Prometheus metrics of the matchmaking service (in the runtime's default registry)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

ROOMS_OPEN = Gauge(
    "arena_rooms_open",
    "Rooms open (waiting, playing or finished), as the matchmaking directory sees them.",
)
ROOM_TIMERS_FIRED = Counter(
    "arena_room_timers_fired",
    "Room timer commands sent by this instance (kind: waiting, idle).",
    ["kind"],
)
