"""Digits rounds through the services: 200 scripted players at once, each a game of its own.

In one process over the embedded log, the match service (one worker) and matchmaking (its
ghost store) run as they do in ``arena serve``; the players send commands at the command level
(the WebSocket relay is not written yet) and read their game's events from the log through one
shared tail. Each player starts a casual game with ``PlaySolo``, then plays rounds: "Start the
Focus", six answers (wrong ones: a right answer faster than 300 ms would void the game, and the
scripted players do not wait), a buy, the end of the shop (the slate filed in the ghost store,
which draws the army and sends ``DrawArmy``), then the Face-off's "Fight". A round is counted
when its ``CombatFought`` is read.

Figure: rounds per second over the whole run (all players, the first ``StartFocus`` to the last
combat), and each round's time (p50, p99) as its player saw it. Baseline, same run: one player
alone playing the same rounds (the service idle otherwise), so the ratio shows what 200 at once
cost each round. The issue sets no number: no verdict is judged.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg  # noqa: E402
from arena_runtime import topics  # noqa: E402
from arena_runtime.envelope import CODEC, new_command  # noqa: E402
from arena_runtime.eventlog import EventLog  # noqa: E402
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb  # noqa: E402
from arena_runtime.proto_gen.arena.v1 import match_pb2  # noqa: E402

PLAYERS = 200
ROUNDS = 3


class Tail:
    """Reads arena.match.events and the matchmaking events as they come, into a queue per
    stream."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.queues: dict[str, asyncio.Queue[Any]] = defaultdict(asyncio.Queue)
        self.offsets: dict[tuple[str, int], int] = {}
        self.stopped = False

    async def run(self) -> None:
        topics_read = (topics.MATCH_EVENTS, topics.MATCHMAKING_EVENTS)
        while not self.stopped:
            read = 0
            for topic in topics_read:
                ends = await self.log.end_offsets(topic)
                for partition, end in ends.items():
                    offset = self.offsets.get((topic, partition), 0)
                    while offset < end:
                        records = await self.log.read(topic, partition, offset, 1000)
                        if not records:
                            break
                        for record in records:
                            event = CODEC.decode_event(record.value)
                            self.queues[event.stream].put_nowait(event.payload)
                        offset = records[-1].offset + 1
                        read += len(records)
                    self.offsets[(topic, partition)] = offset
            if not read:
                await asyncio.sleep(0.002)

    async def until(self, stream: str, kind: type, within: float = 60.0) -> Any:
        queue = self.queues[stream]
        deadline = time.monotonic() + within
        while True:
            payload = await asyncio.wait_for(queue.get(), max(0.01, deadline - time.monotonic()))
            if isinstance(payload, kind):
                return payload


async def send(log: EventLog, topic: str, stream: str, payload: Any) -> None:
    await log.append(topic, [CODEC.command_record(new_command(stream, payload))])


async def player(log: EventLog, tail: Tail, name: str, rounds: int) -> list[float]:
    """One scripted player: a casual game, ``rounds`` rounds; each round's seconds."""
    who = pb.LobbyPlayer(player_id=name, display_name=name.upper(), kind=pb.PLAYER_KIND_ACCOUNT)
    solo = pb.PlaySolo(
        request_id="r",
        player=who,
        settings=pb.RoomSettings(game="digits", mode=match_pb2.MATCH_MODE_CASUAL),
    )
    await send(log, topics.MATCHMAKING_COMMANDS, f"player-{name}", solo)
    requested = await tail.until(f"player-{name}", pb.SoloMatchRequested)
    stream = f"match-{requested.match_id}"
    await tail.until(stream, dg.DigitsStarted)
    times: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        await send(log, topics.MATCH_COMMANDS, stream, dg.StartFocus(player_id=name))
        shown = await tail.until(stream, dg.QuestionShown)
        while True:
            wrong = shown.question.answer % 16 + 1
            answer = dg.AnswerFocus(player_id=name, answer=wrong)
            await send(log, topics.MATCH_COMMANDS, stream, answer)
            got = await tail.until(stream, (dg.QuestionShown, dg.ShopOpened))  # type: ignore[arg-type]
            if isinstance(got, dg.ShopOpened):
                break
            shown = got
        await send(log, topics.MATCH_COMMANDS, stream, dg.Buy(player_id=name, offer=0))
        await send(log, topics.MATCH_COMMANDS, stream, dg.EndShop(player_id=name))
        await tail.until(stream, dg.ShopEnded)
        await send(log, topics.MATCH_COMMANDS, stream, dg.Fight(player_id=name))
        await tail.until(stream, dg.CombatFought)
        times.append(time.perf_counter() - started)
    return times


async def measure(data: Path, players: int, rounds: int) -> tuple[float, list[float], int]:
    from tests.services.match.harness import ServiceUnderTest as MatchService
    from tests.services.matchmaking.harness import ServiceUnderTest as Matchmaking

    async with MatchService(data) as match, Matchmaking(match.log, match.settings):
        tail = Tail(match.log)
        reader = asyncio.create_task(tail.run())
        try:
            started = time.perf_counter()
            played = await asyncio.gather(
                *(player(match.log, tail, f"p_{n:04d}", rounds) for n in range(players))
            )
            wall = time.perf_counter() - started
        finally:
            tail.stopped = True
            await reader
        filed = tail.queues["ghosts-digits"].qsize()
    return wall, [t for times in played for t in times], filed


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(quick: bool = False) -> None:
    players = 20 if quick else PLAYERS
    rounds = 2 if quick else ROUNDS
    with tempfile.TemporaryDirectory(prefix="arena-bench-digits-") as workdir:
        alone_wall, alone, _ = asyncio.run(measure(Path(workdir) / "alone", 1, rounds))
        wall, times, store_events = asyncio.run(measure(Path(workdir) / "many", players, rounds))
    total = len(times)
    base = statistics.median(alone)
    print(
        f"digits rounds through the match service and matchmaking: {players} players x "
        f"{rounds} rounds = {total} rounds in {wall:.1f} s: {total / wall:.1f} rounds/s "
        f"(the game's start included; {store_events} ghost store events)"
    )
    print(
        f"  a round as its player saw it: p50 {1000 * statistics.median(times):.0f} ms, "
        f"p99 {1000 * pct(times, 0.99):.0f} ms; one player alone (baseline, same run): "
        f"p50 {1000 * base:.0f} ms ({1 / base:.1f} rounds/s), so {players} at once cost each "
        f"round {statistics.median(times) / base:.1f}x (no target: the issue sets none)"
    )
    del alone_wall


if __name__ == "__main__":
    run("--quick" in sys.argv)
