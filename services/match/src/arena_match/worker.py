"""The match service's worker: its member of the "match" consumer group, and its timers.

Each instance owns the partitions of ``arena.commands.match`` the group assigns it, and with
them the same partitions of ``arena.match.events`` (a stream's commands and events share a
partition number). When it gains a partition it folds that partition's events and arms the
timers of every match in it; when it loses one it disarms them. Offsets are committed after the
commands are answered, so a crash redelivers what was not answered, and the stream's idempotent
command ids make that harmless.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from arena_runtime import telemetry, topics
from arena_runtime.consumer_loop import ConsumerLoop
from arena_runtime.envelope import CODEC, Command, new_command
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.host.catchup import CatchUp
from arena_runtime.host.consume import CommitWatcher
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as pb

from arena_match.clock import now_ms
from arena_match.runner import MatchRunner
from arena_match.timers import Timer, TimerWheel, timers_of

log = telemetry.get_logger(__name__)

GROUP = "match"
POLL_TIMEOUT_MS = 250
#: How often finished matches are looked at for eviction.
EVICT_SWEEP_SECONDS = 5.0


class MatchWorker:
    name = "match:commands"

    def __init__(
        self,
        event_log: EventLog,
        runner: MatchRunner,
        evict_seconds: float,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.runner = runner
        self.catch_up = CatchUp()
        self.timers = TimerWheel(self._send_timer, clock)
        self._log = event_log
        self._consumer = CommitWatcher(
            event_log.consumer(GROUP, [topics.MATCH_COMMANDS]), self.catch_up
        )
        self._loop = ConsumerLoop(
            self._consumer,
            group=GROUP,
            decode=CODEC.decode_command,
            batch_handler=self._handle,
            poll_timeout_ms=POLL_TIMEOUT_MS,
            # A match's commands share its partition; nothing here reads across partitions.
            concurrent_partitions=True,
            commit_behind=True,
        )
        self._owned: set[int] = set()
        #: The streams of each owned partition, to disarm when the partition goes.
        self._streams: dict[int, set[str]] = {}
        self._evict_seconds = evict_seconds
        self._finished: dict[str, float] = {}
        self._last_sweep = time.monotonic()
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        await self.catch_up.snapshot(self._log, [topics.MATCH_COMMANDS])
        await self._consumer.start()

    async def run(self) -> None:
        timers = asyncio.create_task(self.timers.run(self._stopping), name="match:timers")
        try:
            while not self._stopping.is_set():
                await self._loop.run_once()
                await self.catch_up.observe_assignment(self._consumer)
                await self._follow_assignment()
                self._sweep()
                if timers.done():
                    timers.result()  # the wheel died: fail the service
        finally:
            self._stopping.set()
            await asyncio.gather(timers, return_exceptions=True)
            await self._loop.flush()
            await self._consumer.stop()

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return self.catch_up.ready()

    # -- commands -------------------------------------------------------------------------

    async def _handle(self, batch: list[tuple[Command, Record]]) -> None:
        """One partition's commands from one poll: decided in order, their events in one append."""
        partition = batch[0][1].partition
        if partition not in self._owned:
            await self._gain(partition)
        for command, _ in batch:
            if isinstance(command.payload, pb.AiMove):
                view = self.runner.view(command.stream)
                if view is not None:
                    await self.runner.decider.choose_ai_move(
                        command.stream, view.state, command.payload.move_number
                    )
        await self.runner.handle_batch([command for command, _ in batch])
        streams = self._streams[partition]
        handled: dict[str, list[str]] = {}
        for command, _ in batch:
            handled.setdefault(command.stream, []).append(command.command_id)
        for stream, command_ids in handled.items():
            self.runner.compact(stream, command_ids)
            streams.add(stream)
            self._rearm(stream)

    def _rearm(self, stream: str) -> None:
        view = self.runner.view(stream)
        if view is None:
            return
        self.timers.arm(stream, timers_of(view.state))
        if view.state.over and not view.state.evicted and stream not in self._finished:
            self._finished[stream] = time.monotonic()

    async def _send_timer(self, stream: str, timer: Timer) -> None:
        command = new_command(stream, timer.payload, command_id=timer.command_id)
        await self._log.append(topics.MATCH_COMMANDS, [CODEC.command_record(command)])

    # -- ownership ------------------------------------------------------------------------

    async def _follow_assignment(self) -> None:
        assigned = {
            tp.partition for tp in self._consumer.assignment() if tp.topic == topics.MATCH_COMMANDS
        }
        for partition in sorted(self._owned - assigned):
            self._lose(partition)
        for partition in sorted(assigned - self._owned):
            await self._gain(partition)

    async def _gain(self, partition: int) -> None:
        views = await self.runner.catch_up_partition(partition)
        self._owned.add(partition)
        self._streams[partition] = {view.stream for view in views}
        for view in views:
            self.runner.compact(view.stream)
            self._rearm(view.stream)
        log.info("partition gained", partition=partition, matches=len(views))

    def _lose(self, partition: int) -> None:
        self._owned.discard(partition)
        self.runner.forget_end(partition)
        for stream in self._streams.pop(partition, set()):
            self.timers.disarm(stream)
        log.info("partition lost", partition=partition)

    # -- memory ---------------------------------------------------------------------------

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < EVICT_SWEEP_SECONDS and self._evict_seconds > 0:
            return
        self._last_sweep = now
        for stream, finished in list(self._finished.items()):
            if now - finished >= self._evict_seconds and self.runner.evict(stream):
                del self._finished[stream]
