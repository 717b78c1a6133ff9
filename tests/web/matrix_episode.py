"""A finished Matrix Games match in a running server's log, for the browser tests.

`python -m tests.web.matrix_episode` with the server's ARENA_* environment: the embedded log is
shared by processes (its docs), so this is `arena events simulate` on the server's own log: a
``StartMatch`` with the settings below, eight seats played by the game's bot through its client
and views, while the server's match service decides every command and its read models index
the match. Prints the match id. The settings are short and unpaced (4 beats of 30 ticks, no
minimum beat time) so the episode takes seconds; a fixed seed and variant (stag-hunt) give
scores that are not all zero.
"""

from __future__ import annotations

import asyncio
import sys

from arena_cli.analytics.simulate import Simulation
from arena_cli.games import install
from arena_games.contract import Seat
from arena_games.matrix_games import MODULE
from arena_runtime.config import load_settings
from arena_runtime.eventlog.factory import open_event_log
from google.protobuf.message import Message

#: ``arena events simulate --setting`` choices, one value each.
SETTINGS: tuple[tuple[str, tuple[object, ...]], ...] = (
    ("variant", ("stag-hunt",)),
    ("seed", (7,)),
    ("beats", (4,)),
    ("ticks_per_beat", (30,)),
    ("min_beat_seconds", (0,)),
    ("player_connect_timeout_seconds", (60,)),
)


class OneEpisode(Simulation):
    """The simulation, keeping the id of the match it starts."""

    match_ids: list[str]

    def _opening(
        self, match_id: str, seats: tuple[Seat, ...], mode: str, settings: Message
    ) -> Message:
        self.match_ids.append(match_id)
        return super()._opening(match_id, seats, mode, settings)


async def main() -> str:
    install()  # the games' payloads, as every `arena` process registers them
    settings = load_settings()
    log = open_event_log(settings)
    await log.start()
    try:
        simulation = OneEpisode(
            log,
            MODULE,
            seed=3,
            partitions=settings.partitions,
            mode="casual",
            people=MODULE.seats.seats,
            settings=SETTINGS,
        )
        simulation.match_ids = []
        await simulation.run(1, MODULE.seats.seats, 1)
        (match_id,) = simulation.match_ids
        return str(match_id)
    finally:
        await log.close()


if __name__ == "__main__":
    sys.stdout.write(asyncio.run(main()) + "\n")
