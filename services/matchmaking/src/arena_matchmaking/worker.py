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

from arena_runtime import telemetry, topics
from arena_runtime.envelope import CODEC, Command
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.host.consume import ConsumeWorker

from arena_matchmaking.matchmaking import Matchmaking

log = telemetry.get_logger(__name__)


class CommandWorker(ConsumeWorker[Command]):
    def __init__(self, event_log: EventLog, group: str, matchmaking: Matchmaking) -> None:
        self.matchmaking = matchmaking
        self._owned: set[int] = set()
        super().__init__(
            event_log,
            group,
            [topics.MATCHMAKING_COMMANDS],
            CODEC.decode_command,
            name=f"{group}:commands",
            batch_handler=self._handle,
            # A partition waiting for the directory lock must not hold up the next poll of the
            # others: each partition's commands go through a lane of their own.
            pipelined=True,
        )

    def after_poll(self) -> None:
        self._follow_assignment()

    async def _handle(self, batch: list[tuple[Command, Record]]) -> None:
        """One partition's commands of a poll (see Matchmaking.handle_batch)."""
        partition = batch[0][1].partition
        if partition not in self._owned:
            self._gain(partition)
        await self.matchmaking.handle_batch([command for command, _ in batch])

    def _follow_assignment(self) -> None:
        assigned = self.assigned(topics.MATCHMAKING_COMMANDS)
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
