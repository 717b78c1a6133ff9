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
from dataclasses import dataclass, field

from arena_engine.maths_warriors import Status
from arena_runtime import telemetry
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from google.protobuf.message import Message

from arena_match.clock import now_ms
from arena_match.state import MatchState

log = telemetry.get_logger(__name__)

#: How long to wait before sending a timer command again after the log refused it.
RETRY_MS = 1000


@dataclass(frozen=True, slots=True, order=True)
class Timer:
    due_ms: int
    command_id: str
    payload: Message = field(compare=False)


def timers_of(state: MatchState) -> list[Timer]:
    """Every deadline the match is waiting for now."""
    game = state.game
    if not state.created or state.over or game.status is not Status.PLAYING:
        return []
    timers = []
    game_end, move_end = game.game_deadline_ms, game.move_deadline_ms
    if game_end is not None:
        timers.append(
            Timer(game_end, f"timer:game:{game_end}", pb.GameClockExpiry(deadline_ms=game_end))
        )
    if move_end is not None:
        timers.append(
            Timer(move_end, f"timer:move:{move_end}", pb.MoveClockTimeout(deadline_ms=move_end))
        )
    for seat, deadline in enumerate(state.reconnect_deadlines, start=1):
        if deadline is not None:
            timers.append(
                Timer(
                    deadline,
                    f"timer:reconnect-{seat}:{deadline}",
                    pb.ReconnectExpired(seat=seat, deadline_ms=deadline),
                )
            )
    if state.seat(game.to_move).is_ai:
        # The move number is in the kind: two AI turns may fall due in the same millisecond.
        due = state.turn_started_ms + state.ai_think_ms
        timers.append(
            Timer(
                due,
                f"timer:ai-{game.move_count}:{due}",
                pb.AiMove(seat=game.to_move, move_number=game.move_count, due_ms=due),
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
