"""Driving the matchmaking service at the command level, as the gateway does.

A :class:`LobbyClient` appends commands to ``arena.commands.matchmaking`` and reads the answers
back from the log (never from the service's memory), and reads the StartMatch commands the
service sent to ``arena.commands.match``. A :class:`ServiceUnderTest` runs the whole service (its
consumer groups, directory and timers) in this process over an event log.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from arena_games.contract import Result, SeatResult, unpack
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_matchmaking.service import NAME, build_workers
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Command, Event, new_command
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.host import Service
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import REJECTED_TYPE, is_next

WITHIN = 20.0


def player(player_id: str) -> pb.LobbyPlayer:
    return pb.LobbyPlayer(player_id=player_id, display_name=player_id.upper())


async def eventually(probe: Callable[[], Any], what: str, within: float = WITHIN) -> Any:
    """Poll an async probe until it returns something truthy."""
    deadline = time.monotonic() + within
    while True:
        found = await probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.02)


class LobbyClient:
    def __init__(self, event_log: EventLog) -> None:
        self.log = event_log
        self._counter = 0

    async def send(self, stream: str, payload: Any, command_id: str | None = None) -> str:
        self._counter += 1
        command_id = command_id or f"test:{stream}:{self._counter}:{time.monotonic_ns()}"
        command = new_command(stream, payload, command_id=command_id)
        await self.log.append(topics.MATCHMAKING_COMMANDS, [CODEC.command_record(command)])
        return command_id

    async def _records(self, topic: str, stream: str) -> list[bytes]:
        ends = await self.log.end_offsets(topic)
        partition = partition_for(stream.encode(), len(ends))
        values, offset = [], 0
        while offset < ends[partition]:
            records = await self.log.read(topic, partition, offset, 1000)
            if not records:
                break
            for record in records:
                offset = record.offset + 1
                if record.key == stream.encode():
                    values.append(record.value)
        return values

    async def events(self, stream: str) -> list[Event]:
        """The stream's events that the reading rule accepts, in order."""
        accepted: list[Event] = []
        sequence, batch_id = 0, ""
        for value in await self._records(topics.MATCHMAKING_EVENTS, stream):
            event = CODEC.decode_event(value)
            if is_next(event, sequence, batch_id):
                sequence, batch_id = event.sequence, event.batch_id
                accepted.append(event)
        return accepted

    async def answer(self, stream: str, command_id: str) -> list[Event]:
        async def probe() -> list[Event]:
            return [
                event
                for event in await self.events(stream)
                if event.causation_id == command_id
                or (event.type == REJECTED_TYPE and event.payload.command_id == command_id)
            ]

        return list(await eventually(probe, f"no answer to {command_id} on {stream}"))

    async def command(self, stream: str, payload: Any, command_id: str | None = None) -> list[Any]:
        """Send, wait for the answer: its events' payloads (a CommandRejected if refused)."""
        events = await self.answer(stream, await self.send(stream, payload, command_id))
        return [event.payload for event in events]

    async def wait_event(self, stream: str, kind: type, within: float = WITHIN) -> Any:
        async def probe() -> Any:
            found = [e.payload for e in await self.events(stream) if isinstance(e.payload, kind)]
            return found[-1] if found else None

        return await eventually(probe, f"no {kind.__name__} on {stream}", within)

    async def match_commands(self, match_id: str) -> list[Command]:
        stream = f"match-{match_id}"
        return [CODEC.decode_command(v) for v in await self._records(topics.MATCH_COMMANDS, stream)]

    async def create_match(self, match_id: str) -> match_pb2.StartMatch:
        async def probe() -> list[Command]:
            return await self.match_commands(match_id)

        commands = await eventually(probe, f"no StartMatch for {match_id}")
        return commands[0].payload

    async def end_match(self, match_id: str, winner: int = 1) -> None:
        """Append the match's MatchEnded, as the match service would."""
        result = Result(
            "all_captured", tuple(SeatResult(s, 1 if s == winner else 2, 0) for s in (1, 2))
        )
        ended = result.to_proto(match_id, "maths-warriors", mw.GameEnded(winner=winner))
        event = Event(
            event_id=f"ended-{match_id}",
            stream=f"match-{match_id}",
            sequence=2,
            type=match_pb2.MatchEnded.DESCRIPTOR.full_name,
            payload=ended,
            time=new_command("x", pb.Dequeue()).time,
        )
        await self.log.append(topics.MATCH_EVENTS, [CODEC.event_record(event)])

    async def match_ended(self, match_id: str, ranks: dict[int, int], reason: str) -> None:
        """Append the match's MatchEnded as the match service writes it since the game seam
        (every seat's rank; no player ids: the room knows its seats)."""
        ended = match_pb2.MatchEnded(
            match_id=match_id,
            game="maths-warriors",
            reason=reason,
            seats=[match_pb2.SeatResult(seat=s, rank=r, score=s) for s, r in ranks.items()],
        )
        event = Event(
            event_id=f"ended-{match_id}",
            stream=f"match-{match_id}",
            sequence=2,
            type=ended.DESCRIPTOR.full_name,
            payload=ended,
            time=new_command("x", pb.Dequeue()).time,
        )
        await self.log.append(topics.MATCH_EVENTS, [CODEC.event_record(event)])


def game_settings(start: match_pb2.StartMatch) -> mw.MathsWarriorsSettings:
    """The Maths Warriors settings a StartMatch carries."""
    return unpack(start.settings, mw.MathsWarriorsSettings)


class ServiceUnderTest:
    """The whole matchmaking service in this process; start and stop it as often as needed."""

    def __init__(
        self,
        event_log: EventLog,
        settings: Settings,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.log = event_log
        self.settings = settings
        #: The service's clock (build_workers' own parameter); None: the real one.
        self.clock = clock
        self.service: Service | None = None

    async def start(self) -> Service:
        await topics.ensure_topics(self.log, self.settings.partitions)
        if self.clock is None:
            self.matchmaking, workers = build_workers(self.log, self.settings)
        else:
            self.matchmaking, workers = build_workers(self.log, self.settings, self.clock)
        self.service = Service(NAME, workers)
        await self.service.start()

        async def ready() -> bool:
            return self.service is not None and self.service.ready()

        try:
            await eventually(ready, "the service never became ready")
        except TimeoutError:  # say which worker, for the next time this happens
            waiting = [w.name for w in self.service.workers if not w.ready()]
            raise TimeoutError(f"the service never became ready; not ready: {waiting}") from None
        return self.service

    async def stop(self) -> None:
        if self.service is not None:
            await self.service.stop()
            self.service = None

    async def __aenter__(self) -> ServiceUnderTest:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
