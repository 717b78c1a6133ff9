"""Room timers: each open room's deadline fires a RoomTimer command into its stream.

Deadlines live in the room events, so the lobby directory re-arms every timer while it reads the
log after a restart. Every instance arms every room's timer, but only the instance that owns the
room's partition fires it; the others look again every second, so the timer still fires if the
partition moves to them (its owner died) before the room's deadline changes. The command id
``timer:<kind>:<deadline_ms>`` makes a repeat (around a rebalance) harmless, and a deadline the
room no longer has changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
from collections.abc import Awaitable, Callable

from arena_runtime import telemetry
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb

from arena_matchmaking.metrics import ROOM_TIMERS_FIRED
from arena_matchmaking.rooms import Room

log = telemetry.get_logger(__name__)

KINDS = {"waiting": pb.ROOM_TIMER_KIND_WAITING, "idle": pb.ROOM_TIMER_KIND_IDLE}
RETRY_MS = 1000
NOT_READY_POLL_SECONDS = 0.05
#: Fire(code, command id, timer).
Fire = Callable[[str, str, pb.RoomTimer], Awaitable[None]]


def timer_command_id(kind: str, deadline_ms: int) -> str:
    return f"timer:{kind}:{deadline_ms}"


class RoomTimers:
    """The pending deadline of every room, and a worker that fires them when due."""

    def __init__(self, fire: Fire, now_ms: Callable[[], int], max_sleep: float = 1.0) -> None:
        self.name = "matchmaking:timers"
        self.fire = fire
        self.now_ms = now_ms
        self.max_sleep = max_sleep
        #: code -> (kind, deadline_ms) the room waits for now.
        self.armed: dict[str, tuple[str, int]] = {}
        #: (fire at ms, code, kind, deadline ms); entries the room no longer waits for are skipped.
        self._heap: list[tuple[int, str, str, int]] = []
        self._changed = asyncio.Event()
        self._stopping = asyncio.Event()
        #: Whether the rooms' deadlines are current. While the directory is still reading the log
        #: after a start, a room may look waiting that later events closed: its timer would only
        #: be stale, but there is no point sending it.
        self.may_fire: Callable[[], bool] = lambda: True
        #: Whether this instance owns the room's partition, so that it alone fires its timer.
        self.owns: Callable[[str], bool] = lambda code: True

    def track(self, room: Room) -> None:
        """Arm (or disarm) the room's timer after one of its events."""
        deadline = room.deadline()
        if deadline is None:
            self.armed.pop(room.code, None)
            return
        if self.armed.get(room.code) != deadline:
            self.armed[room.code] = deadline
            heapq.heappush(self._heap, (deadline[1], room.code, deadline[0], deadline[1]))
            self._changed.set()

    def due(self) -> list[tuple[str, str, int]]:
        """Pop the timers due now: (code, kind, deadline_ms); stale heap entries are dropped."""
        now = self.now_ms()
        fired = []
        while self._heap and self._heap[0][0] <= now:
            _, code, kind, deadline = heapq.heappop(self._heap)
            if self.armed.get(code) == (kind, deadline):
                fired.append((code, kind, deadline))
        return fired

    async def start(self) -> None:
        pass

    async def run(self) -> None:
        while not self._stopping.is_set():
            if not self.may_fire():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), NOT_READY_POLL_SECONDS)
                continue
            for code, kind, deadline in self.due():
                if not self.owns(code):
                    later = (self.now_ms() + RETRY_MS, code, kind, deadline)
                    heapq.heappush(self._heap, later)
                    continue
                timer = pb.RoomTimer(kind=KINDS[kind], deadline_ms=deadline)
                try:
                    await self.fire(code, timer_command_id(kind, deadline), timer)
                    ROOM_TIMERS_FIRED.labels(kind).inc()
                except Exception:
                    log.exception("room timer not sent; retrying in a second", room=code)
                    retry = (self.now_ms() + RETRY_MS, code, kind, deadline)
                    heapq.heappush(self._heap, retry)
            self._changed.clear()
            sleep = self.max_sleep
            if self._heap:
                sleep = min(sleep, max(0.0, (self._heap[0][0] - self.now_ms()) / 1000))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wait_change_or_stop(), sleep)

    async def _wait_change_or_stop(self) -> None:
        stop = asyncio.ensure_future(self._stopping.wait())
        change = asyncio.ensure_future(self._changed.wait())
        try:
            await asyncio.wait({stop, change}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            change.cancel()

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return True
