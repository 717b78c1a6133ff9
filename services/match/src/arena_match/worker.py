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
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from arena_games.contract import GameError, Presence, Viewer
from arena_runtime import metrics, telemetry, topics
from arena_runtime.consumer_loop import ConsumerLoop
from arena_runtime.envelope import CODEC, Command, Event, new_command
from arena_runtime.eventlog import EventLog, OutgoingRecord, Record
from arena_runtime.eventlog.reading import read_forward
from arena_runtime.host.catchup import CatchUp
from arena_runtime.host.consume import CommitWatcher
from arena_runtime.malformed import decode_or_skip
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import views_pb2 as vpb
from arena_runtime.snapshots import SnapshotStore
from arena_runtime.streams import REJECTED_TYPE, Answer, is_next

from arena_match import views
from arena_match.clock import now_ms
from arena_match.runner import MatchRunner
from arena_match.state import MatchState, apply
from arena_match.timers import Timer, TimerWheel, timers_of

log = telemetry.get_logger(__name__)

GROUP = "match"
POLL_TIMEOUT_MS = 250
#: How often finished matches are looked at for eviction.
EVICT_SWEEP_SECONDS = 5.0
#: Acks kept per match, to answer a retried command with its earlier ack without the log.
KEPT_ACKS = 32


class MatchWorker:
    name = "match:commands"

    def __init__(
        self,
        event_log: EventLog,
        runner: MatchRunner,
        evict_seconds: float,
        clock: Callable[[], int] = now_ms,
        snapshots: SnapshotStore | None = None,
        snapshot_seconds: float = 0,
        tick_seconds: float = 0,
        spectator_lease_seconds: float = 30,
    ) -> None:
        self.runner = runner
        self._clock = clock
        #: How often live matches' ``tick`` pushes (clocks) are published (0: never).
        self._tick_seconds = tick_seconds
        #: How long (ms) a match's spectators' pushes are made after a gateway says someone
        #: watches (ViewRequest): a match nobody watches as a spectator costs no spectator views
        #: (the Maze's observer view, the whole map, was a fifth of a move's CPU).
        self._lease_ms = round(spectator_lease_seconds * 1000)
        #: Stream -> until when (server ms) someone is known to watch it as a spectator, or may:
        #: every live match found when a partition is gained gets a lease, so that spectators of
        #: a match taken over keep their pushes until their gateway renews with this instance.
        self._watched: dict[str, int] = {}
        #: Stream -> the answers of its latest commands as published (a retry gets the same).
        self._acks: dict[str, OrderedDict[str, vpb.CommandAnswer]] = {}
        #: Where the partitions' snapshots are kept (None: none taken, every gain replays).
        self.snapshots = snapshots
        self._snapshot_seconds = snapshot_seconds
        #: The event position of each owned partition's newest snapshot (to skip idle ones).
        self._snapshotted: dict[int, int] = {}
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
        snapshots = asyncio.create_task(self._snapshot_every(), name="match:snapshots")
        ticks = asyncio.create_task(self._tick_every(), name="match:ticks")
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
            await asyncio.gather(timers, snapshots, ticks, return_exceptions=True)
            await self._loop.flush_at_stop()
            # A graceful stop: its partitions' next owners read only what follows this.
            await self.snapshot_owned()
            await self._consumer.stop()

    async def snapshot_owned(self) -> None:
        """Snapshot every owned partition that moved since its last snapshot."""
        if self.snapshots is None:
            return
        for partition in sorted(self._owned):
            position = self.runner.position(partition)
            if position is None or self._snapshotted.get(partition) == position:
                continue
            try:
                saved = await self.runner.save_snapshot(partition, self.snapshots)
            except Exception:
                # A snapshot only shortens a takeover: the log stays the truth.
                log.exception("snapshot not saved", partition=partition)
                continue
            if saved is not None:
                self._snapshotted[partition] = position

    async def _snapshot_every(self) -> None:
        if self.snapshots is None or self._snapshot_seconds <= 0:
            return
        while not self._stopping.is_set():
            try:
                await asyncio.wait_for(self._stopping.wait(), self._snapshot_seconds)
            except TimeoutError:
                await self.snapshot_owned()

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return self.catch_up.ready()

    # -- commands -------------------------------------------------------------------------

    async def _handle(self, batch: list[tuple[Command, Record]]) -> None:
        """One partition's commands from one poll: decided in order, their events in one append,
        then what each viewer is shown of them published (before the commands' offsets are
        committed: a crash in between redelivers them, and their repeats redraw the views)."""
        partition = batch[0][1].partition
        if partition not in self._owned:
            await self._gain(partition)
        # Asked of the views, not of the match: answered on arena.match.views, never appended.
        asked = (vpb.ViewRequest, vpb.ClientRelay)
        requests = [c for c, _ in batch if isinstance(c.payload, asked)]
        commands = [c for c, _ in batch if not isinstance(c.payload, asked)]
        for command in commands:
            view = self.runner.view(command.stream)
            module = view.state.module if view is not None else None
            if (
                view is not None
                and module is not None
                and isinstance(command.payload, module.rules.thinks)
            ):
                await self.runner.decider.think(command.stream, view.state, command)
        records: list[OutgoingRecord] = []
        if commands:

            async def views_of(
                answers: list[Answer], after: dict[str, MatchState]
            ) -> list[OutgoingRecord]:
                return await self._views(commands, answers, after)

            # The views go with the events, in the same write, when the log can take them so
            # (a turn of the log less for every move); otherwise they are made here after.
            answers, after, shown = await self.runner.handle_journaled(commands, views_of)
            if not shown:
                records += await self._views(commands, answers, after)
        for c in requests:
            answer = (
                self._requested(c) if isinstance(c.payload, vpb.ViewRequest) else self._relayed(c)
            )
            if answer is not None:
                records.append(answer)
        if records:
            await self._log.append(topics.MATCH_VIEWS, records)
        streams = self._streams[partition]
        handled: dict[str, list[str]] = {}
        for command in commands:
            handled.setdefault(command.stream, []).append(command.command_id)
        for stream, command_ids in handled.items():
            self.runner.compact(stream, command_ids)
            streams.add(stream)
            self._rearm(stream)

    # -- views ----------------------------------------------------------------------------

    async def _views(
        self, commands: list[Command], answers: list[Answer], after: dict[str, MatchState]
    ) -> list[OutgoingRecord]:
        """One ViewBatch per stream of these answered commands: each new event's pushes, made on
        the state after it, and each command's answer (its sender's ack)."""
        now = self._clock()
        by_stream: dict[str, list[tuple[Command, Answer]]] = {}
        for command, answer in zip(commands, answers, strict=True):
            by_stream.setdefault(command.stream, []).append((command, answer))
        records = []
        for stream, pairs in by_stream.items():
            view = self.runner.view(stream)
            if view is None:
                continue
            fresh = sorted(
                (e for _, a in pairs if not a.repeated for e in a.events), key=lambda e: e.sequence
            )
            spectated = self._spectated(stream, now)
            pushes: list[vpb.ViewPush] = []
            shown: dict[str, dict[Viewer, list[dict[str, Any]]]] = {}
            for event in fresh:
                state = after.get(event.event_id, view.state)
                viewers = views.viewers_of(state, spectated)
                shown[event.event_id] = made = views.event_pushes(state, event, now, viewers)
                pushes += views.grouped(state, made)
            replies = []
            redraw = False
            for command, answer in pairs:
                if answer.repeated:
                    reply, from_log = await self._repeated(command, answer, view.state)
                    redraw = redraw or from_log
                else:
                    last = after.get(answer.events[-1].event_id) if answer.events else None
                    state = last or view.state
                    seat = views.sender_seat(state, command.payload)
                    pushed = [
                        message
                        for event in answer.events
                        for message in shown.get(event.event_id, {}).get(Viewer(seat), [])
                    ]
                    reply = views.answer_of(answer, state, pushed, seat)
                    self._keep_ack(stream, reply)
                replies.append(reply)
            state = view.state
            if fresh:
                first, last_sequence = fresh[0].sequence - 1, fresh[-1].sequence
            else:
                first = last_sequence = view.sequence
            message = views.batch(
                state, vpb.VIEW_KIND_EVENTS, first, last_sequence, now, pushes, replies
            )
            traced = pairs[0][0]
            records.append(views.record(stream, message, traced.traceparent, traced.tracestate))
            if redraw and state.created:
                # A retry answered from the log: this instance did not publish its views (a
                # crash or a takeover in between, perhaps): everyone's snapshot, which a gateway
                # relays only if it is behind.
                records.append(self._snapshot_record(stream, state, view.sequence, now))
        return records

    def _keep_ack(self, stream: str, reply: vpb.CommandAnswer) -> None:
        kept = self._acks.setdefault(stream, OrderedDict())
        kept[reply.command_id] = reply
        while len(kept) > KEPT_ACKS:
            kept.popitem(last=False)

    async def _repeated(
        self, command: Command, answer: Answer, state: MatchState
    ) -> tuple[vpb.CommandAnswer, bool]:
        """The answer of a command answered before: as published then, or made again from the
        log (the runner keeps only the ids of what it answered); True: from the log."""
        if answer.rejection is not None:
            return views.answer_of(answer, state, [], 0), False
        acks = self._acks.get(command.stream)
        kept = acks.get(command.command_id) if acks is not None else None
        if kept is not None:
            reply = vpb.CommandAnswer()
            reply.CopyFrom(kept)
            reply.repeated = True
            return reply, False
        return await self._ack_from_log(command), True

    async def _ack_from_log(self, command: Command) -> vpb.CommandAnswer:
        """Fold the stream from the log up to the command's events and make its sender's ack
        on them again (a rare path: a retry after a restart or a takeover)."""
        now = self._clock()
        state, sequence, batch_id = MatchState(), 0, ""
        caused: list[Event] = []
        pushed: list[dict[str, Any]] = []
        seat, last = 0, state
        for event in await self._stream_events(command.stream):
            if not is_next(event, sequence, batch_id):
                continue
            sequence, batch_id = event.sequence, event.batch_id
            if event.type != REJECTED_TYPE:
                state = apply(state, event)
            if event.causation_id != command.command_id:
                continue
            seat = views.sender_seat(state, command.payload)
            caused.append(event)
            if seat:
                made = views.event_pushes(state, event, now, [Viewer(seat)])
                pushed += made.get(Viewer(seat), [])
            last = state
        answer = Answer(command.command_id, command.stream, tuple(caused), repeated=True)
        return views.answer_of(answer, last, pushed, seat)

    async def _stream_events(self, stream: str) -> list[Event]:
        partition = await self.runner.partition_of(stream)
        end = await self._log.end_offset(topics.MATCH_EVENTS, partition)
        key = stream.encode()
        found = []
        async for records in read_forward(self._log, topics.MATCH_EVENTS, partition, 0, end):
            for record in records:
                if record.key == key:
                    event = decode_or_skip(CODEC.decode_event, record, GROUP)
                    if event is not None:
                        found.append(event)
        return found

    def _snapshot_record(
        self,
        stream: str,
        state: MatchState,
        sequence: int,
        now: int,
        viewers: list[Viewer] | None = None,
        request_id: str = "",
        resumed: bool = False,
    ) -> OutgoingRecord:
        shown = views.snapshots(state, sequence, now, viewers or views.viewers_of(state))
        message = views.batch(
            state, vpb.VIEW_KIND_SNAPSHOT, sequence, sequence, now, shown, request_id=request_id
        )
        message.resumed = resumed
        return views.record(stream, message)

    def _requested(self, command: Command) -> OutgoingRecord | None:
        """A ViewRequest's snapshots; a viewer naming a player who holds a seat sees that seat's
        view, anyone else the spectators' (the gateway names the socket's own player). A
        renewal of the spectators' lease is answered only if it had lapsed."""
        request = command.payload
        view = self.runner.view(command.stream)
        now = self._clock()
        if request.renew:
            if view is None or not view.state.created:
                return None
            return self._renewed(command.stream, view.state, view.sequence, now)
        if view is None or not view.state.created or view.state.module is None:
            message = vpb.ViewBatch(
                match_id=request.match_id,
                kind=vpb.VIEW_KIND_SNAPSHOT,
                request_id=request.request_id,
                over=view is not None and view.state.over,
                sequence=view.sequence if view is not None else 0,
                time_ms=now,
            )
            return views.record(command.stream, message)
        state = view.state
        wanted = []
        for asked in request.viewers:
            seat = state.seat_of(asked.player_id) if asked.player_id else None
            if seat is not None and state.seat(seat).human:
                wanted.append(Viewer(seat))
            else:
                wanted.append(views.SPECTATOR)
        chosen = list(dict.fromkeys(wanted)) or views.viewers_of(state)
        if views.SPECTATOR in chosen:
            self._watch(command.stream, now)
        return self._snapshot_record(
            command.stream, state, view.sequence, now, chosen, request.request_id
        )

    def _spectated(self, stream: str, now: int) -> bool:
        """Whether someone is known to watch ``stream`` as a spectator (or may: a match taken
        over, for a lease after its partition was gained)."""
        return now < self._watched.get(stream, 0)

    def _watch(self, stream: str, now: int) -> None:
        self._watched[stream] = now + self._lease_ms

    def _renewed(
        self, stream: str, state: MatchState, sequence: int, now: int
    ) -> OutgoingRecord | None:
        """A gateway's spectators still watch: the lease goes on; if it had lapsed (their pushes
        stopped), the spectators' snapshot, marked ``resumed``, redraws them."""
        lapsed = not self._spectated(stream, now)
        self._watch(stream, now)
        if not lapsed or state.over:
            return None
        return self._snapshot_record(stream, state, sequence, now, [views.SPECTATOR], resumed=True)

    def _relayed(self, command: Command) -> OutgoingRecord:
        """A ClientRelay: the game's ``views.relay`` of a seat's message (shown to the others,
        acked to the sender), or its refusal; nothing is appended."""
        relay = command.payload
        view = self.runner.view(command.stream)
        now = self._clock()
        state = view.state if view is not None else MatchState()
        sequence = view.sequence if view is not None else 0
        seat = state.seat_of(relay.player_id) if state.created else None
        module = state.module
        pushes: list[vpb.ViewPush] = []
        try:
            if module is None or state.game is None:
                raise GameError("unknown_match", "no such match")
            if seat is None or not state.seat(seat).human:
                raise GameError("not_in_match", "you are not playing this match")
            message = views.relayed_message(module, relay.message)
            shown, ack = module.views.relay(
                state.table(sequence), state.game, Viewer(seat), message, now
            )
            pushes = views.grouped(state, shown)
            answer = vpb.CommandAnswer(command_id=command.command_id, ack=views.compact(ack))
        except GameError as exc:
            answer = vpb.CommandAnswer(
                command_id=command.command_id, code=exc.code, message=exc.message
            )
        message_batch = views.batch(
            state, vpb.VIEW_KIND_EVENTS, sequence, sequence, now, pushes, [answer]
        )
        message_batch.match_id = message_batch.match_id or relay.match_id
        return views.record(command.stream, message_batch, command.traceparent, command.tracestate)

    async def _tick_every(self) -> None:
        if self._tick_seconds <= 0:
            return
        while not self._stopping.is_set():
            try:
                await asyncio.wait_for(self._stopping.wait(), self._tick_seconds)
            except TimeoutError:
                try:
                    await self.tick()
                except Exception:
                    log.exception("ticks not published")

    async def tick(self) -> None:
        """Publish the periodic pushes (clocks) of every live match this instance owns."""
        now = self._clock()
        records = []
        for partition in sorted(self._owned):
            for stream in sorted(self._streams.get(partition, ())):
                view = self.runner.view(stream)
                if view is None or not view.state.created or view.state.over:
                    continue
                pushes = views.ticks(view.state, view.sequence, now, self._spectated(stream, now))
                if pushes:
                    message = views.batch(
                        view.state, vpb.VIEW_KIND_TICK, view.sequence, view.sequence, now, pushes
                    )
                    records.append(views.record(stream, message))
        if records:
            await self._log.append(topics.MATCH_VIEWS, records)

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
        views, resumed = await self.runner.gain_partition(partition, self.snapshots)
        self._owned.add(partition)
        self._streams[partition] = {view.stream for view in views}
        now = self._clock()
        for view in views:
            self.runner.compact(view.stream)
            self._rearm(view.stream)
            if not view.state.over:
                # Its spectators may be watching through gateways that renew their lease with
                # the instance before: theirs until they renew with this one. A match opened
                # from now on has had no other owner to renew with.
                self._watch(view.stream, now)
        recovered = [
            absent_command(view.stream, view.sequence, seat, player_id)
            for view in views
            for seat, player_id in present_seats(view.state)
        ]
        if recovered:
            # Nobody is known to be connected to a match this instance just took over (after a
            # restart, nobody is): each present human seat is recorded as gone, its reconnect
            # window starting now, so the documented forfeit holds. A player still connected
            # through a gateway is recorded back at once (arena_gateway.hub: present players).
            records = [CODEC.command_record(command) for command in recovered]
            await self._log.append(topics.MATCH_COMMANDS, records)
        log.info(
            "partition gained",
            partition=partition,
            matches=len(views),
            absent=len(recovered),
            from_snapshot=resumed,
        )

    def _lose(self, partition: int) -> None:
        self._owned.discard(partition)
        self.runner.forget_end(partition)
        self._snapshotted.pop(partition, None)
        metrics.forget_snapshot_age(topics.MATCH_EVENTS, partition)
        for stream in self._streams.pop(partition, set()):
            self.timers.disarm(stream)
            self._acks.pop(stream, None)
            self._watched.pop(stream, None)
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
                self._acks.pop(stream, None)
                self._watched.pop(stream, None)


def present_seats(state: MatchState) -> list[tuple[int, str]]:
    """The human seats of a live match that are recorded as connected: (seat, player id). None
    for a game that keeps no presence (nobody is ever away from it)."""
    if not state.created or state.over or state.presence is Presence.NONE:
        return []
    return [
        (seat.number, seat.player_id)
        for seat in state.seats
        if seat.human and state.away_until(seat.number) is None
    ]


def absent_command(stream: str, sequence: int, seat: int, player_id: str) -> Command:
    """PlayerDisconnected for a seat found present at recovery. Its id names the stream's
    sequence, so recovering the same state twice sends the same command (answered once)."""
    payload = match_pb2.PlayerDisconnected(player_id=player_id)
    return new_command(stream, payload, command_id=f"recovered:{sequence}:{seat}")
