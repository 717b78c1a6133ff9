"""The rating service: the single writer of every rating (docs/services.md, "Rating service").

Two consumers in one service. The match-event member (group ``rating.events``) turns each
finished match into a ``RateMatch`` command on the ladder of its game (``arena_rating.results``).
The command member (group ``rating``) answers those commands through a stream runner on
``arena.rating.events``: each ladder is one stream, so one partition and one writer, and every
rating is the fold of that stream (``arena_rating.ladder``). A third worker, the season clock
(``arena_rating.seasons``), sends ``CloseSeason`` when a season of a per-combat ladder is over;
a fourth, the prize payer (``arena_rating.credits``), credits each prize of a closed season to its
player's credits ledger, a stream of its own decided by the same runner.

The command member loads each partition it is given before it counts as ready, from the
partition's newest snapshot on ``arena.rating.snapshots`` (each ladder kept as its encoded state,
``ladder.encode``; a credits ledger, short, as its records) plus the log's tail, and snapshots
the partitions it owns every ``ARENA_RATING_SNAPSHOT_SECONDS``, at a graceful stop and right
after a partition had to be replayed (no valid snapshot: missing, stale version, corrupt).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from arena_games.registry import READING, STANDARD
from arena_runtime import telemetry, topics
from arena_runtime.envelope import CODEC, SCHEMAS, Command, Event
from arena_runtime.eventlog import EventLog
from arena_runtime.host import Runtime, Service, Worker, event_worker
from arena_runtime.host.consume import ConsumeWorker
from arena_runtime.schemas import rating as _rating  # noqa: F401  (registers the payloads)
from arena_runtime.schemas.rating import CREDITS_PREFIX
from arena_runtime.snapshots import SnapshotPolicy, SnapshotStore
from arena_runtime.streams import Decision, StreamRunner

from arena_rating import credits, ladder
from arena_rating.results import ResultReader
from arena_rating.seasons import SeasonClock

NAME = "rating"
log = telemetry.get_logger(__name__)
COMMANDS = (topics.RATING_COMMANDS,)
EVENTS = (topics.MATCH_EVENTS,)


State = ladder.Ladder | credits.Account


def initial(stream: str) -> State:
    if stream.startswith(CREDITS_PREFIX):
        return credits.initial(stream)
    return ladder.initial(stream)


def decide(state: State, command: Command) -> Decision:
    if isinstance(state, credits.Account):
        return credits.decide(state, command)
    return ladder.decide(state, command)


def apply(state: State, event: Event) -> State:
    if isinstance(state, credits.Account):
        return credits.apply(state, event)
    return ladder.apply(state, event)


def capture(state: State) -> Callable[[], bytes] | None:
    """A ladder as its state; a credits ledger (a player's few prizes) as its records."""
    return ladder.capture(state) if isinstance(state, ladder.Ladder) else None


def decode(stream: str, data: bytes) -> State:
    if stream.startswith(CREDITS_PREFIX):
        raise ValueError("a credits ledger is kept as its records")
    return ladder.decode(stream, data)


#: Snapshots of ``arena.rating.events`` (``arena_runtime.snapshots``).
SNAPSHOTS: SnapshotPolicy[State] = SnapshotPolicy(
    ladder.SNAPSHOT_VERSION, capture=capture, decode=decode
)


def ladder_runner(log: EventLog) -> StreamRunner[State]:
    """The stream runner of the ladders and the credits ledgers (the only writer of
    ``arena.rating.events``)."""
    return StreamRunner(
        log,
        topics.RATING_EVENTS,
        initial=initial,
        apply=apply,
        decide=decide,
        snapshots=SNAPSHOTS,
    )


class LadderCommands(ConsumeWorker[Command]):
    """The command member (group ``rating``): each partition it gains is loaded from its newest
    valid snapshot plus the tail before the member counts as ready; the partitions it holds are
    snapshotted every ``seconds`` if they moved, at a graceful stop, and at once after a replay
    (so that the next owner, or this one after a restart, need not replay again)."""

    def __init__(
        self, log: EventLog, runner: StreamRunner[State], store: SnapshotStore, seconds: float
    ) -> None:
        super().__init__(
            log,
            NAME,
            COMMANDS,
            CODEC.decode_command,
            runner.handle_record,
            name=f"{NAME}:commands",
            on_gain=self._gain,
        )
        self.runner = runner
        self.store = store
        self._seconds = seconds
        #: The event position of each partition's newest snapshot this member saved.
        self._snapshotted: dict[int, int] = {}

    async def _gain(self, partition: int) -> None:
        _, resumed = await self.runner.gain_partition(partition, self.store)
        if not resumed:
            await self.snapshot(partition)

    async def snapshot(self, partition: int) -> None:
        """Snapshot ``partition`` if it moved since this member's last snapshot of it."""
        position = self.runner.position(partition)
        if position is None or self._snapshotted.get(partition) == position:
            return
        try:
            saved = await self.runner.save_snapshot(partition, self.store)
        except Exception:
            # A snapshot only shortens a load: the log stays the truth.
            log.exception("snapshot not saved", partition=partition)
            return
        if saved is not None:
            self._snapshotted[partition] = position

    async def snapshot_owned(self) -> None:
        for partition in sorted(self._gained):
            await self.snapshot(partition)

    async def run(self) -> None:
        every = asyncio.create_task(self._snapshot_every(), name="rating:snapshots")
        try:
            await super().run()
        finally:
            self._stopping.set()
            await asyncio.gather(every, return_exceptions=True)
            await self.snapshot_owned()  # a graceful stop: the next owner reads only the tail

    async def _snapshot_every(self) -> None:
        if self._seconds <= 0:
            return
        while not self._stopping.is_set():
            try:
                await asyncio.wait_for(self._stopping.wait(), self._seconds)
            except TimeoutError:
                await self.snapshot_owned()


async def build_service(runtime: Runtime) -> Service:
    STANDARD.register_schemas(SCHEMAS)
    await topics.ensure_topics(runtime.log, runtime.settings.partitions)
    runner = ladder_runner(runtime.log)
    reader = ResultReader(runtime.log)
    store = SnapshotStore(runtime.log, topics.RATING_EVENTS)
    seconds = runtime.settings.rating_snapshot_seconds
    workers: list[Worker] = [
        LadderCommands(runtime.log, runner, store, seconds),
        event_worker(
            runtime.log,
            NAME,
            EVENTS,
            reader.handle,
            codec=READING,
            skip=reader.skip,
            linger=runtime.settings.event_consumer_linger_ms / 1000,
        ),
        SeasonClock(runtime.log),
        credits.prize_worker(runtime.log, NAME),
    ]
    return Service(NAME, workers)
