"""The matchmaking service's member of its command group, following which partitions it owns.

A lobby stream's commands and events share a partition number, and the group gives each
partition's commands to one member, so the member that owns a partition is the only one that
appends its events. The instance is told when it gains a partition (its directory may then stop
asking for that partition's end once it has read it) and when it loses one (its stream runner
and directory must read what the new owner writes before trusting their view again).

Each partition's commands go through a lane of their own (the consumer loop, pipelined); see
:mod:`arena_matchmaking.matchmaking` for what keeps the decisions that span partitions in order.
"""

from __future__ import annotations

import asyncio

from arena_runtime import telemetry, topics
from arena_runtime.consumer_loop import ConsumerLoop
from arena_runtime.envelope import CODEC, Command
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.host.catchup import CatchUp
from arena_runtime.host.consume import POLL_TIMEOUT_MS, CommitWatcher

from arena_matchmaking.matchmaking import Matchmaking

log = telemetry.get_logger(__name__)


class CommandWorker:
    def __init__(self, event_log: EventLog, group: str, matchmaking: Matchmaking) -> None:
        self.name = f"{group}:commands"
        self.matchmaking = matchmaking
        self.catch_up = CatchUp()
        self._log = event_log
        self._consumer = CommitWatcher(
            event_log.consumer(group, [topics.MATCHMAKING_COMMANDS]), self.catch_up
        )
        self._loop = ConsumerLoop(
            self._consumer,
            group=group,
            decode=CODEC.decode_command,
            batch_handler=self._handle,
            poll_timeout_ms=POLL_TIMEOUT_MS,
            # A partition waiting for the directory lock must not hold up the next poll of the
            # others: each partition's commands go through a lane of their own.
            pipelined=True,
        )
        self._owned: set[int] = set()
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        await self.catch_up.snapshot(self._log, [topics.MATCHMAKING_COMMANDS])
        await self._consumer.start()

    async def run(self) -> None:
        try:
            while not self._stopping.is_set():
                await self._loop.run_once()
                await self.catch_up.observe_assignment(self._consumer)
                self._follow_assignment()
        finally:
            await self._loop.flush()
            await self._consumer.stop()

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return self.catch_up.ready()

    async def _handle(self, batch: list[tuple[Command, Record]]) -> None:
        """One partition's commands of a poll (see Matchmaking.handle_batch)."""
        partition = batch[0][1].partition
        if partition not in self._owned:
            self._gain(partition)
        await self.matchmaking.handle_batch([command for command, _ in batch])

    def _follow_assignment(self) -> None:
        assigned = {
            tp.partition
            for tp in self._consumer.assignment()
            if tp.topic == topics.MATCHMAKING_COMMANDS
        }
        for partition in sorted(self._owned - assigned):
            self._owned.discard(partition)
            self.matchmaking.lose(partition)
            log.info("partition lost", worker=self.name, partition=partition)
        for partition in sorted(assigned - self._owned):
            self._gain(partition)

    def _gain(self, partition: int) -> None:
        self._owned.add(partition)
        self.matchmaking.gain(partition)
        log.info("partition gained", worker=self.name, partition=partition)
