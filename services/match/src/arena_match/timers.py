"""The match's deadlines, read from its folded state, and the wheel that fires them.

A timer is a command the match service sends itself into ``arena.commands.match`` when a
deadline is due, with the id ``timer:<kind>:<deadline_ms>``: sending it twice is harmless (the
stream answers a command id once), and the handler compares the deadline with the state, so a
timer that fires after the state moved on is rejected as ``stale_timer``. Nothing about timers is
kept outside the log: after a restart or a partition reassignment the wheel is re-armed from the
folded streams.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Awaitable, Callable

from arena_games.contract import Presence, Timer
from arena_runtime import telemetry
from arena_runtime.proto_gen.arena.v1 import match_pb2

from arena_match.clock import now_ms
from arena_match.state import MatchState

log = telemetry.get_logger(__name__)

#: How long to wait before sending a timer command again after the log refused it.
RETRY_MS = 1000


__all__ = ["Timer", "TimerWheel", "timers_of"]


def timers_of(state: MatchState) -> list[Timer]:
    """Every deadline the match is waiting for now: the game's (``rules.timers``), and the
    reconnect window of each away seat of a game whose absent seats forfeit."""
    if not state.created or state.over or state.module is None:
        return []
    timers = list(state.module.rules.timers(state.game))
    if state.away and state.presence is Presence.FORFEIT:
        for seat, deadline in state.away:
            timers.append(
                Timer(
                    deadline,
                    f"timer:reconnect-{seat}:{deadline}",
                    match_pb2.ReconnectExpired(seat=seat, deadline_ms=deadline),
                )
            )
    return timers


Fire = Callable[[str, Timer], Awaitable[None]]


class TimerWheel:
    """Keeps the armed timers of each stream and calls ``fire(stream, timer)`` when one is due."""

    def __init__(self, fire: Fire, clock: Callable[[], int] = now_ms) -> None:
        self._fire = fire
        self._clock = clock
        self._armed: dict[str, dict[str, Timer]] = {}
        self._heap: list[tuple[int, str, str]] = []
        self._changed = asyncio.Event()

    def arm(self, stream: str, timers: list[Timer]) -> None:
        """Make ``timers`` the stream's armed timers (the others are dropped)."""
        if not timers:
            self._armed.pop(stream, None)
            return
        previous = self._armed.get(stream, {})
        self._armed[stream] = {timer.command_id: timer for timer in timers}
        for timer in timers:
            if timer.command_id not in previous:
                heapq.heappush(self._heap, (timer.due_ms, stream, timer.command_id))
                self._changed.set()

    def poke(self) -> None:
        """Look at the deadlines again now (the clock jumped: tests)."""
        self._changed.set()

    def disarm(self, stream: str) -> None:
        self._armed.pop(stream, None)

    def armed(self, stream: str) -> list[Timer]:
        return sorted(self._armed.get(stream, {}).values())

    def __len__(self) -> int:
        return sum(len(timers) for timers in self._armed.values())

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.fire_due()
            wait_ms = self._heap[0][0] - self._clock() if self._heap else 1000
            self._changed.clear()
            changed = asyncio.ensure_future(self._changed.wait())
            stopping = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait(
                    {changed, stopping},
                    timeout=max(0.0, min(wait_ms, 1000)) / 1000,
                    return_when=asyncio.FIRST_COMPLETED,
                )
            finally:
                changed.cancel()
                stopping.cancel()

    async def fire_due(self) -> int:
        """Fire every timer due now; returns how many were sent."""
        fired = 0
        now = self._clock()
        while self._heap and self._heap[0][0] <= now:
            _, stream, command_id = heapq.heappop(self._heap)
            timer = self._armed.get(stream, {}).pop(command_id, None)
            if timer is None:
                continue  # disarmed, or replaced by a later deadline
            try:
                await self._fire(stream, timer)
                fired += 1
            except Exception:
                log.exception("timer not sent; retrying", stream=stream, command_id=command_id)
                self._armed.setdefault(stream, {})[command_id] = timer
                heapq.heappush(self._heap, (now + RETRY_MS, stream, command_id))
                break
        return fired
