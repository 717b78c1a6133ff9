"""The season clock: the only place the rating service reads the time for a decision's sake.

Every ``tick`` it reads the clock once and, for each ladder with seasons (a module with
``ratings.units``), sends ``CloseSeason`` for the season before the current one, carrying that
reading (``now_ms``), with the id ``close-season:<game>:<season>``. The ladder decides from the
command alone (refused before the season's end, once per season: ``SeasonClosed`` records the
reading), so a replay decides the same whatever the clock says then. A process sends each season's
command once; after a restart it sends it once more, which the ladder answers with nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from arena_games.registry import STANDARD
from arena_runtime import topics
from arena_runtime.envelope import CODEC, new_command, now
from arena_runtime.eventlog import EventLog
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import close_season_command_id, ladder_stream

#: How often the clock looks (a season ends at most this late after its last instant).
TICK_SECONDS = 60.0


@dataclass
class SeasonClock:
    log: EventLog
    clock: Callable[[], datetime] = now
    tick_seconds: float = TICK_SECONDS
    name: str = "rating.seasons"
    sent: set[str] = field(default_factory=set)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def tick(self) -> list[str]:
        """Send what the clock makes due now; the command ids sent."""
        now_ms = int(self.clock().timestamp() * 1000)
        out = []
        for module in STANDARD:
            units, ladder = module.ratings.units, module.ratings.ladder
            if units is None or ladder is None:
                continue
            season = units.previous_season(now_ms)
            command_id = close_season_command_id(ladder, season)
            if command_id in self.sent:
                continue
            command = new_command(
                ladder_stream(ladder),
                pb.CloseSeason(game=ladder, season=season, now_ms=now_ms),
                command_id=command_id,
                clock=self.clock,
            )
            await self.log.append(topics.RATING_COMMANDS, [CODEC.command_record(command)])
            self.sent.add(command_id)
            out.append(command_id)
        return out

    async def start(self) -> None:
        self._stop.clear()

    async def run(self) -> None:
        while not self._stop.is_set():
            await self.tick()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.tick_seconds)

    def request_stop(self) -> None:
        self._stop.set()

    def ready(self) -> bool:
        return True
