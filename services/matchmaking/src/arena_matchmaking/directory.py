"""The lobby directory: every room of every partition, kept in memory from the event log.

A room stream answers for its own code only, but some decisions look wider: the room cap counts
the open rooms of every partition, a player already seated in another room may not join or
queue, a finished match must find its room, and the room timers must be armed after a restart.
Every matchmaking instance therefore reads all partitions of ``arena.matchmaking.events`` from
the start and folds the room streams with the rooms' own ``apply`` (and notes who waits in a
queue). It lags the log by at most a
poll; the service reads it up to the end before a decision that depends on it. CreateRoom
requests this instance accepted that are still looking for a code count toward the cap too, so
a burst of CreateRoom cannot overshoot it within one instance; concurrent instances can
overshoot it by their requests in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from arena_runtime import telemetry, topics
from arena_runtime.envelope import CODEC, Codec
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.eventlog.reading import read_forward
from arena_runtime.malformed import decode_or_skip
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.streams import REJECTED_TYPE, SequenceGate

from arena_matchmaking.lobby import PLAYER_PREFIX, QUEUE_PREFIX, ROOM_PREFIX
from arena_matchmaking.rooms import Room, RoomStatus, apply_room, initial_room

log = telemetry.get_logger(__name__)

#: Statuses in which a room holds its players (they may not join or queue elsewhere).
_SEATED = (RoomStatus.WAITING, RoomStatus.PLAYING)
#: The ``group`` label of the malformed records the directory skips (it reads without a group).
DIRECTORY_GROUP = "matchmaking:directory"


class LobbyDirectory:
    def __init__(
        self,
        log: EventLog,
        *,
        topic: str = topics.MATCHMAKING_EVENTS,
        codec: Codec = CODEC,
        on_room: Callable[[Room], None] | None = None,
        read_batch: int = 1000,
    ) -> None:
        self.log = log
        self.topic = topic
        self.codec = codec
        self.on_room = on_room
        self.read_batch = read_batch
        #: Open rooms by code.
        self.rooms: dict[str, Room] = {}
        #: Player id -> code of the waiting or playing room they sit in.
        self.player_rooms: dict[str, str] = {}
        #: Player id -> the queue stream they wait in.
        self.player_queues: dict[str, str] = {}
        #: Match id -> code of the room that plays it.
        self.match_rooms: dict[str, str] = {}
        #: CreateRoom command ids this instance accepted whose room is not open yet.
        self.pending: set[str] = set()
        self.offsets: dict[int, int] = {}
        self._gate = SequenceGate()
        self._lock = asyncio.Lock()

    @property
    def open_rooms(self) -> int:
        """What the room cap counts: open rooms and requests still looking for a code."""
        return len(self.rooms) + len(self.pending)

    async def catch_up(self) -> int:
        """Read every partition to its current end; returns how many records were read."""
        async with self._lock:
            read = 0
            for partition, end in sorted((await self.log.end_offsets(self.topic)).items()):
                start = self.offsets.get(partition, 0)
                async for records in read_forward(
                    self.log, self.topic, partition, start, end, self.read_batch
                ):
                    for record in records:
                        self._observe(record)
                    read += len(records)
                    self.offsets[partition] = records[-1].offset + 1
            return read

    def _observe(self, record: Record) -> None:
        event = decode_or_skip(self.codec.decode_event, record, DIRECTORY_GROUP)
        if event is None:
            return
        if not self._gate.admit(event) or event.type == REJECTED_TYPE:
            return
        if event.stream.startswith(ROOM_PREFIX):
            code = event.stream.removeprefix(ROOM_PREFIX)
            self._room_changed(self.rooms.get(code) or initial_room(code), event.payload)
        elif event.stream.startswith(QUEUE_PREFIX):
            self._queue_changed(event.stream, event.payload)
        elif event.stream.startswith(PLAYER_PREFIX) and isinstance(
            event.payload, pb.RoomRequestFailed
        ):
            self.pending.discard(event.payload.create_command_id)

    def _queue_changed(self, stream: str, event: object) -> None:
        match event:
            case pb.PlayerQueued():
                self.player_queues[event.player.player_id] = stream
            case pb.PlayerDequeued():
                self.player_queues.pop(event.player_id, None)
            case pb.PlayersPaired():
                for player in event.players:
                    self.player_queues.pop(player.player_id, None)

    def note_request(self, create_command_id: str) -> None:
        """A CreateRoom was accepted here just now: count it until its room opens."""
        self.pending.add(create_command_id)

    def _room_changed(self, before: Room, event: object) -> None:
        after = apply_room(before, event)  # type: ignore[arg-type]
        if isinstance(event, pb.RoomOpened):
            self.pending.discard(event.create_command_id)
        if before.status in _SEATED:
            for player in before.players:
                if self.player_rooms.get(player.player_id) == before.code:
                    del self.player_rooms[player.player_id]
        if after.status in _SEATED:
            for player in after.players:
                self.player_rooms[player.player_id] = after.code
        if before.match_id and before.match_id != after.match_id:
            self.match_rooms.pop(before.match_id, None)
        if after.match_id:
            self.match_rooms[after.match_id] = after.code
        if after.is_open:
            self.rooms[after.code] = after
        else:
            self.rooms.pop(after.code, None)
        if self.on_room is not None:
            self.on_room(after)


class DirectoryWorker:
    """Keeps a directory current; ready once it has read the log as it stood at start."""

    def __init__(self, directory: LobbyDirectory, poll_seconds: float = 0.05) -> None:
        self.name = "matchmaking:directory"
        self.directory = directory
        self.poll_seconds = poll_seconds
        self._targets: dict[int, int] = {}
        self._caught_up = False
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        self._targets = await self.directory.log.end_offsets(self.directory.topic)

    async def run(self) -> None:
        while not self._stopping.is_set():
            read = await self.directory.catch_up()
            if not self._caught_up:
                offsets = self.directory.offsets
                self._caught_up = all(offsets.get(p, 0) >= end for p, end in self._targets.items())
            if not read:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), self.poll_seconds)

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return self._caught_up
