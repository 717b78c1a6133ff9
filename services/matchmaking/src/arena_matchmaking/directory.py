"""The lobby directory: every room of every partition, kept in memory from the event log.

A room stream answers for its own code only, but some decisions look wider: the room cap counts
the open rooms of every partition, a player already seated in another room may not join or
queue, a finished match must find its room, and the room timers must be armed after a restart.
Every matchmaking instance therefore reads all partitions of ``arena.matchmaking.events`` from
the start and folds the room streams with the rooms' own ``apply`` (and notes who waits in a
queue). It lags the log by at most a poll; the service reads it up to the end before a decision
that depends on it. CreateRoom requests this instance accepted that are still looking for a code
count toward the cap too, so a burst of CreateRoom cannot overshoot it within one instance;
concurrent instances can overshoot it by their requests in flight.

Reading up to the end costs at most one call for the ends of the partitions, plus reads of what
other writers appended. The instance's own appends are handed to the directory as they are
acknowledged (the stream runner's ``on_written``), so it folds those events as written, without
reading or decoding them back. A partition whose commands this instance owns
(:meth:`LobbyDirectory.own`) is written only by this instance, so once it has been read to its
end the directory stops asking for that end: with every partition owned (one instance), reading
up to the end costs no call at all. If somebody else wrote there
after all (a rebalance not noticed yet), the directory lags by those records until the owner
notices and calls :meth:`LobbyDirectory.disown`: the same imprecision as two instances deciding
at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

from arena_runtime import telemetry, topics
from arena_runtime.envelope import CODEC, Codec, Event
from arena_runtime.eventlog import EventLog, Position, Record
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.malformed import decode_or_skip
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.streams import REJECTED_TYPE, SequenceGate

from arena_matchmaking.duels import DUEL_PREFIX
from arena_matchmaking.ids import room_stream
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
        #: Player id -> their live match no room plays (AI game, quick match), and its players.
        self.player_matches: dict[str, tuple[str, int]] = {}
        self.match_players: dict[str, set[str]] = {}
        #: Match id -> the duel it is a game of, until the duel is settled.
        self.match_duels: dict[str, str] = {}
        self._duel_players: dict[str, str] = {}
        #: (player, match) whose PlayerMatchEnded was read before the match's start (another
        #: partition, read later): the start is then not counted.
        self._ended_early: set[tuple[str, str]] = set()
        #: CreateRoom command ids this instance accepted whose room is not open yet.
        self.pending: set[str] = set()
        self.offsets: dict[int, int] = {}
        #: Partitions whose commands this instance owns: nobody else appends their events.
        self.owned: set[int] = set()
        #: Owned partitions read to their end since they were owned: their end is not asked for.
        self._trusted: set[int] = set()
        #: This instance's appends not folded yet, by partition and offset (none: no entry).
        self._written: dict[int, dict[int, Event]] = {}
        self._partitions: int | None = None
        self._gate = SequenceGate()
        self._lock = asyncio.Lock()

    @property
    def open_rooms(self) -> int:
        """What the room cap counts: open rooms and requests still looking for a code."""
        return len(self.rooms) + len(self.pending)

    def own(self, partition: int) -> None:
        """This instance now owns ``partition``: after one read to its end, stop asking."""
        self.owned.add(partition)

    def owns_room(self, code: str) -> bool:
        """Whether this instance owns the partition of room ``code`` (True while the partition
        count is unknown: a second firing is harmless, a missing one is not)."""
        if self._partitions is None:
            return True
        return partition_for(room_stream(code).encode(), self._partitions) in self.owned

    def disown(self, partition: int) -> None:
        """Somebody else may write ``partition`` from now on: ask for its end again."""
        self.owned.discard(partition)
        self._trusted.discard(partition)

    def appended(self, events: Sequence[Event], positions: Sequence[Position]) -> None:
        """This instance appended ``events`` to the directory's topic, where ``positions`` say
        (the stream runner's ``on_written``).

        They are folded at the next catch-up, in offset order with whatever others wrote.
        """
        for event, (topic, partition, offset) in zip(events, positions, strict=True):
            if topic == self.topic:
                self._written.setdefault(partition, {})[offset] = event

    async def catch_up(self) -> int:
        """Read every partition to its current end; returns how many records were read."""
        async with self._lock:
            ends: dict[int, int] = {}
            if self._partitions is None or len(self._trusted) < self._partitions:
                ends = await self.log.end_offsets(self.topic)
                self._partitions = len(ends)
            read = 0
            # A trusted partition's end is where this instance's last append landed: one it
            # has not appended to since the last catch-up has nothing to read (and this runs
            # before every directory decision and at every poll, over every partition).
            appended = self._trusted & self._written.keys()
            for partition in sorted(ends.keys() | appended):
                written = self._written.get(partition, {})
                until = ends.get(partition, max(written, default=-1) + 1)
                read += await self._read_to(partition, until)
                if partition in self.owned:
                    self._trusted.add(partition)
            return read

    async def _read_to(self, partition: int, until: int) -> int:
        """Fold ``partition`` up to ``until``: from this instance's appends, else from the log."""
        written = self._written.get(partition, {})
        read = 0
        while (offset := self.offsets.get(partition, 0)) < until:
            event = written.pop(offset, None)
            if event is not None:
                self._observe_event(event)  # as written: no need to decode it back
                read += 1
                self.offsets[partition] = offset + 1
                continue
            records = await self.log.read(self.topic, partition, offset, self.read_batch)
            if not records:
                break
            for record in records:
                self._observe(record)
            read += len(records)
            self.offsets[partition] = records[-1].offset + 1
        for offset in [offset for offset in written if offset < self.offsets.get(partition, 0)]:
            del written[offset]
        # A partition has an entry only while it has appends to fold (catch_up looks there).
        if partition in self._written and not self._written[partition]:
            del self._written[partition]
        return read

    def _observe(self, record: Record) -> None:
        event = decode_or_skip(self.codec.decode_event, record, DIRECTORY_GROUP)
        if event is not None:
            self._observe_event(event)

    def _observe_event(self, event: Event) -> None:
        if not self._gate.admit(event) or event.type == REJECTED_TYPE:
            return
        if event.stream.startswith(ROOM_PREFIX):
            code = event.stream.removeprefix(ROOM_PREFIX)
            self._room_changed(self.rooms.get(code) or initial_room(code), event.payload)
        elif event.stream.startswith(QUEUE_PREFIX):
            self._queue_changed(event.stream, event.payload, event)
        elif event.stream.startswith(DUEL_PREFIX):
            duel, payload = event.stream.removeprefix(DUEL_PREFIX), event.payload
            if isinstance(payload, pb.DuelStarted):
                self.match_duels.update(dict.fromkeys(payload.match_ids, duel))
                for match, player in zip(payload.match_ids, payload.players, strict=True):
                    self._duel_players[match] = player.player_id
            elif isinstance(payload, pb.DuelSettled):
                for match in [m for m, d in self.match_duels.items() if d == duel]:
                    del self.match_duels[match]
                    self._duel_players.pop(match, None)
        elif event.stream.startswith(PLAYER_PREFIX):
            payload = event.payload
            if isinstance(payload, pb.RoomRequestFailed):
                self.pending.discard(payload.create_command_id)
            elif isinstance(payload, pb.AiMatchRequested):
                self._match_started(payload.match_id, [payload.player.player_id], event)
            elif isinstance(payload, pb.PlayerMatchEnded):
                self._match_ended(payload.player_id, payload.match_id)

    def _match_started(self, match: str, players: list[str], event: Event) -> None:
        started = int(event.time.timestamp() * 1000)
        for player in players:
            if (player, match) in self._ended_early:
                self._ended_early.discard((player, match))
                continue
            self.player_matches[player] = (match, started)
            self.match_players.setdefault(match, set()).add(player)

    def _match_ended(self, player: str, match: str) -> None:
        players = self.match_players.get(match)
        if players is None or player not in players:
            self._ended_early.add((player, match))
            return
        players.discard(player)
        if not players:
            del self.match_players[match]
        if self.player_matches.get(player, ("", 0))[0] == match:
            del self.player_matches[player]

    def _queue_changed(self, stream: str, event: object, envelope: Event) -> None:
        match event:
            case pb.PlayerQueued():
                self.player_queues[event.player.player_id] = stream
            case pb.PlayerDequeued():
                self.player_queues.pop(event.player_id, None)
            case pb.PlayersPaired():
                for player in event.players:
                    self.player_queues.pop(player.player_id, None)
                self._match_started(event.match_id, [p.player_id for p in event.players], envelope)

    def duel_player(self, match: str) -> str:
        """The player of a duel's game ("" if unknown)."""
        return self._duel_players.get(match, "")

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
        if after.status in _SEATED and after.exclusive:  # a non-exclusive game blocks nothing
            for player in after.players:
                self.player_rooms[player.player_id] = after.code
        if before.match_id and before.match_id != after.match_id:
            self.match_rooms.pop(before.match_id, None)
            for game in before.games() if before.side_by_side else ():
                self.match_rooms.pop(game, None)
        if after.match_id:
            self.match_rooms[after.match_id] = after.code
            # A side-by-side room: each player's game ends into the room too.
            for game in after.games() if after.side_by_side else ():
                self.match_rooms[game] = after.code
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
