"""Driving the match service at the command level, as the gateway and matchmaking do.

A :class:`MatchClient` appends commands to ``arena.commands.match`` and waits for their answers in
``arena.match.events`` (read back from the log, never from the service's memory); a
:class:`ServiceUnderTest` runs one match worker in this process over an embedded log, with a
clock the test can move forward.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_engine.maths_warriors import GameState
from arena_engine.maths_warriors.ai import choose_move
from arena_games.contract import pack, unpack
from arena_games.maths_warriors import wire as schema
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_match.clock import now_ms
from arena_match.service import build_worker
from arena_match.state import MatchState, apply, stream_of
from arena_match.worker import MatchWorker
from arena_runtime import topics
from arena_runtime.config import Settings, load_settings
from arena_runtime.envelope import CODEC, Event, new_command
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import REJECTED_TYPE, is_next

ALICE, BOB = "p_alice", "p_bob"
PARTITIONS = 4


def human(player_id: str) -> match_pb2.MatchSeat:
    return match_pb2.MatchSeat(
        player_id=player_id, display_name=player_id, kind=match_pb2.SEAT_KIND_HUMAN
    )


def ai(level: int = match_pb2.AI_LEVEL_EASY) -> match_pb2.MatchSeat:
    return match_pb2.MatchSeat(
        player_id="ai",
        display_name="AI",
        kind=match_pb2.SEAT_KIND_AI,
        policy=schema.AI_LEVELS[level],  # type: ignore[index]
    )


def create(
    match_id: str,
    seats: tuple[match_pb2.MatchSeat, match_pb2.MatchSeat] | None = None,
    *,
    game_seconds: int = 720,
    move_seconds: int = 0,
) -> match_pb2.StartMatch:
    return match_pb2.StartMatch(
        match_id=match_id,
        game=schema.GAME,
        seats=seats or (human(ALICE), human(BOB)),
        mode=match_pb2.MATCH_MODE_CASUAL,
        settings=pack(
            pb.MathsWarriorsSettings(game_seconds=game_seconds, move_seconds=move_seconds)
        ),
    )


@dataclass(frozen=True)
class MwSeat:
    player_id: str
    is_ai: bool


@dataclass(frozen=True)
class MwMatch:
    """A Maths Warriors match as the tests look at it: the engine's game, seats, presence."""

    match: MatchState

    @property
    def game(self) -> GameState:
        return self.match.game.game if self.match.game is not None else GameState()

    @property
    def over(self) -> bool:
        return self.match.over

    def seat(self, number: int) -> MwSeat:
        seat = self.match.seat(number)
        return MwSeat(seat.player_id, not seat.human)

    @property
    def reconnect_deadlines(self) -> tuple[int | None, int | None]:
        return (self.match.away_until(1), self.match.away_until(2))


def final(event: Event) -> pb.GameEnded:
    """The game's GameEnded inside a MatchEnded."""
    return unpack(event.payload.detail, pb.GameEnded)


@dataclass(frozen=True)
class Reply:
    """A command's answer as found in the log: its events, or its rejection code."""

    events: tuple[Event, ...]

    @property
    def code(self) -> str | None:
        first = self.events[0]
        return first.payload.code if first.type == REJECTED_TYPE else None

    @property
    def payloads(self) -> list[Any]:
        return [event.payload for event in self.events]


class MatchClient:
    """Sends commands and reads answers and states back from the log."""

    def __init__(self, event_log: EventLog) -> None:
        self.log = event_log
        self._counter = 0
        # What has been read of the events topic: the next offset per partition, and the
        # records of each stream so far (records are only ever appended).
        self._read_to: dict[int, int] = {}
        self._seen: dict[str, list[bytes]] = {}

    async def send(
        self,
        match_id: str,
        payload: Any,
        command_id: str | None = None,
        correlation_id: str = "",
    ) -> str:
        """Append a command; its events carry ``correlation_id`` (by default its own id), which
        tells which of two sends of one command id was the one decided."""
        self._counter += 1
        command_id = command_id or f"test:{match_id}:{self._counter}:{time.monotonic_ns()}"
        command = new_command(
            stream_of(match_id), payload, command_id=command_id, correlation_id=correlation_id
        )
        await self.log.append(topics.MATCH_COMMANDS, [CODEC.command_record(command)])
        return command_id

    async def events(self, match_id: str) -> list[Event]:
        """The stream's events that the reading rule accepts, in order."""
        stream = stream_of(match_id)
        ends = await self.log.end_offsets(topics.MATCH_EVENTS)
        partition = partition_for(stream.encode(), len(ends))
        offset = self._read_to.get(partition, 0)
        while offset < ends[partition]:
            records = await self.log.read(topics.MATCH_EVENTS, partition, offset, 1000)
            if not records:
                break
            for record in records:
                offset = record.offset + 1
                if record.key is not None:
                    self._seen.setdefault(record.key.decode(), []).append(record.value)
            self._read_to[partition] = offset
        accepted: list[Event] = []
        sequence, batch_id = 0, ""
        for value in self._seen.get(stream, []):
            event = CODEC.decode_event(value)
            if is_next(event, sequence, batch_id):
                sequence, batch_id = event.sequence, event.batch_id
                accepted.append(event)
        return accepted

    async def state(self, match_id: str) -> MwMatch:
        state = MatchState()
        for event in await self.events(match_id):
            if event.type != REJECTED_TYPE:
                state = apply(state, event)
        return MwMatch(state)

    async def answer(self, match_id: str, command_id: str, within: float = 20.0) -> Reply:
        deadline = time.monotonic() + within
        while True:
            answer = tuple(
                event
                for event in await self.events(match_id)
                if event.causation_id == command_id
                or (event.type == REJECTED_TYPE and event.payload.command_id == command_id)
            )
            if answer:
                return Reply(answer)
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer to {command_id} in {match_id}")
            await asyncio.sleep(0.02)

    async def command(self, match_id: str, payload: Any, command_id: str | None = None) -> Reply:
        return await self.answer(match_id, await self.send(match_id, payload, command_id))

    async def wait_for(
        self,
        match_id: str,
        predicate: Callable[[Event], bool],
        within: float = 20.0,
    ) -> Event:
        deadline = time.monotonic() + within
        while True:
            for event in await self.events(match_id):
                if predicate(event):
                    return event
            if time.monotonic() > deadline:
                raise TimeoutError(f"{match_id}: the awaited event never came")
            await asyncio.sleep(0.02)


def scripted_move(state: MwMatch, seed: int) -> Any:
    """The move of the player on move, chosen by the engine's easy AI (a scripted client)."""
    seat = state.game.to_move
    move = choose_move(state.game, "easy", seed)
    return schema.move_to_proto(move, state.seat(seat).player_id)


def ended(event: Event) -> bool:
    return isinstance(event.payload, match_pb2.MatchEnded)


class MovableClock:
    """Server time that tests move forward (deadlines of 60 s pass in a moment)."""

    def __init__(self) -> None:
        self.offset_ms = 0

    def __call__(self) -> int:
        return now_ms() + self.offset_ms


class ServiceUnderTest:
    """One match worker in this process over the embedded log in ``data_dir``."""

    def __init__(self, data_dir: Path, **env: str) -> None:
        self.settings: Settings = load_settings(
            {"ARENA_DATA_DIR": str(data_dir), "ARENA_PARTITIONS": str(PARTITIONS), **env}
        )
        self.clock = MovableClock()
        self.log = open_event_log(self.settings)
        self.worker: MatchWorker | None = None
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> ServiceUnderTest:
        await self.log.start()
        await topics.ensure_topics(self.log, PARTITIONS)
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
        await self.log.close()

    async def start(self) -> None:
        self.worker = build_worker(self.log, self.settings, self.clock)
        await self.worker.start()
        self._task = asyncio.create_task(self.worker.run())

    async def stop(self) -> None:
        if self.worker is not None and self._task is not None:
            self.worker.request_stop()
            await asyncio.wait_for(self._task, 10)
            self.worker = self._task = None

    def advance(self, seconds: float) -> None:
        self.clock.offset_ms += round(seconds * 1000)
        if self.worker is not None:
            self.worker.timers.poke()
