"""One matchmaking instance: answers lobby commands, reacts to finished matches, fires timers.

Commands of ``arena.commands.matchmaking`` are decided by one StreamRunner over
``arena.matchmaking.events`` (rooms, players and queues are its streams); the answer's
follow-ups (OpenRoom, RetryRoomCode, CreateMatch) are sent after it is in the log. GameEnded on
``arena.match.events`` becomes RoomMatchEnded on the room that played the match.

Commands are handled partition by partition side by side, so a decision that reads the lobby
directory (which spans every partition) takes one lock from reading the directory up to the end
until its events are appended: the next such decision then sees them, wherever its stream is,
and a burst of them gets the answers it would get one at a time. The other commands look at
their own stream only and do not wait for that lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Command, Event, new_command, now
from arena_runtime.eventlog import EventLog, OutgoingRecord, Record
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime.schemas import lobby as _lobby_schemas  # noqa: F401  (registers the payloads)
from arena_runtime.streams import Answer, Decision, StreamRunner

from arena_matchmaking import lobby
from arena_matchmaking.context import LobbyContext
from arena_matchmaking.directory import LobbyDirectory
from arena_matchmaking.ids import room_stream
from arena_matchmaking.metrics import ROOMS_OPEN
from arena_matchmaking.reactions import FollowUp, follow_ups
from arena_matchmaking.rooms import Room
from arena_matchmaking.timers import RoomTimers

GAME_ENDED = mw.GameEnded.DESCRIPTOR.full_name
#: How often closed rooms are looked at for answers to forget: at most this often (or as often
#: as the forget time, if shorter), after a batch of commands.
FORGET_SWEEP_MS = 5_000
#: Commands whose decision reads the directory: it is read up to the end of the log first.
_NEEDS_DIRECTORY = (pb.CreateRoom, pb.JoinRoom, pb.Enqueue)


class Matchmaking:
    def __init__(
        self, log: EventLog, settings: Settings, clock: Callable[[], datetime] = now
    ) -> None:
        self.log = log
        self.settings = settings
        self.clock = clock
        self.timers = RoomTimers(self._fire_timer, self.now_ms)
        self.directory = LobbyDirectory(log, on_room=self._room_changed)
        #: Code -> when its room was seen closed (ms), until its answers are forgotten; in the
        #: order they were seen, which is the order of those times.
        self._closed_at: dict[str, int] = {}
        self._last_forget_ms = 0
        self.timers.owns = self.directory.owns_room
        # In one process the newest instance reports (tests build several; a process runs one).
        ROOMS_OPEN.set_function(lambda: len(self.directory.rooms))
        #: Held from reading the directory to the end of a decision that used it.
        self._directory_decisions = asyncio.Lock()
        self.runner: StreamRunner[lobby.LobbyState] = StreamRunner(
            log,
            topics.MATCHMAKING_EVENTS,
            initial=lobby.initial,
            apply=lobby.apply,
            decide=self._decide,
            clock=clock,
            # The directory learns of what this instance decides as soon as it is written.
            on_written=self.directory.appended,
        )

    def now_ms(self) -> int:
        return int(self.clock().timestamp() * 1000)

    def context(self) -> LobbyContext:
        return LobbyContext(
            now_ms=self.now_ms(),
            room_cap=self.settings.room_cap,
            waiting_ms=round(self.settings.room_waiting_seconds * 1000),
            idle_ms=round(self.settings.room_idle_seconds * 1000),
            open_rooms=self.directory.open_rooms,
            player_rooms=self.directory.player_rooms,
            player_queues=self.directory.player_queues,
        )

    def _room_changed(self, room: Room) -> None:
        self.timers.track(room)
        if room.is_open:
            self._closed_at.pop(room.code, None)
        else:
            self._closed_at.setdefault(room.code, self.now_ms())

    def forget_closed_rooms(self) -> None:
        """Drop the answers of rooms closed for ``room_forget_seconds``: a closed room keeps its
        state (and sequence), but its answers were most of what it held, for good."""
        now = self.now_ms()
        keep = self.settings.room_forget_seconds * 1000
        if now - self._last_forget_ms < min(FORGET_SWEEP_MS, keep):
            return
        self._last_forget_ms = now
        # In the order the rooms were seen closed: the first one not due ends the look, so a
        # sweep walks only what is due (at start-up the directory reports every room ever closed).
        for code, closed in list(self._closed_at.items()):
            if now - closed < keep:
                break
            if self.runner.forget_answers(room_stream(code), _closed):
                del self._closed_at[code]

    def _decide(self, state: lobby.LobbyState, command: Command) -> Decision:
        return lobby.decide(state, command, self.context())

    def gain(self, partition: int) -> None:
        """This instance now answers the commands of ``partition``."""
        self.directory.own(partition)

    def lose(self, partition: int) -> None:
        """Another instance answers the commands of ``partition`` now: it may write there."""
        self.runner.forget_end(partition)
        self.directory.disown(partition)

    async def handle_command(self, command: Command, record: Record | None = None) -> Answer:
        return (await self.handle_batch([command]))[0]

    async def handle_batch(self, commands: Sequence[Command]) -> list[Answer]:
        """One partition's commands of a poll, answered in order as one by one, in as few
        appends as the directory allows.

        A command that reads the directory must see what every command before it did, and the
        directory learns a decision only once it is written: so the batch is cut before each
        such command, and each cut is read, decided and written (one append) under the
        directory lock. The follow-ups of the whole batch go out together once it is answered.
        """
        answers: list[Answer] = []
        for segment in _segments(commands):
            if isinstance(segment[0].payload, _NEEDS_DIRECTORY):
                async with self._directory_decisions:
                    await self.directory.catch_up()
                    answered = await self.runner.handle_batch(segment)
                    for command, answer in zip(segment, answered, strict=True):
                        if (
                            isinstance(command.payload, pb.CreateRoom)
                            and answer.accepted
                            and not answer.repeated
                        ):
                            self.directory.note_request(command.command_id)
            else:
                answered = await self.runner.handle_batch(segment)
            answers.extend(answered)
        await self.send_all(
            (follow_up, command.command_id, command.correlation_id)
            for command, answer in zip(commands, answers, strict=True)
            for follow_up in follow_ups(command, answer)
        )
        self.forget_closed_rooms()
        return answers

    async def handle_match_event(self, event: Event, record: Record | None = None) -> None:
        if event.type != GAME_ENDED:
            return
        match = event.stream.removeprefix("match-")
        code = self.directory.match_rooms.get(match)
        if code is None:
            await self.directory.catch_up()
            code = self.directory.match_rooms.get(match)
        if code is None:
            return  # a quick match or an AI game: no room to tell
        ended = event.payload
        payload = pb.RoomMatchEnded(
            match_id=match,
            winner=ended.winner,
            reason=ended.reason,
            winner_player_id=ended.winner_player_id,
        )
        follow_up = FollowUp(
            topics.MATCHMAKING_COMMANDS, room_stream(code), f"ended:{match}", payload
        )
        await self.send(follow_up, event.event_id, event.correlation_id)

    async def _fire_timer(self, code: str, command_id: str, timer: pb.RoomTimer) -> None:
        follow_up = FollowUp(topics.MATCHMAKING_COMMANDS, room_stream(code), command_id, timer)
        await self.send(follow_up, command_id, "")

    async def send_all(self, sends: Iterable[tuple[FollowUp, str, str]]) -> None:
        """Send follow-ups (with their causation and correlation ids), one append per topic."""
        by_topic: dict[str, list[OutgoingRecord]] = {}
        for follow_up, causation_id, correlation_id in sends:
            command = new_command(
                follow_up.stream,
                follow_up.payload,
                command_id=follow_up.command_id,
                causation_id=causation_id,
                correlation_id=correlation_id,
                clock=self.clock,
            )
            by_topic.setdefault(follow_up.topic, []).append(CODEC.command_record(command))
        await asyncio.gather(*(self.log.append(t, records) for t, records in by_topic.items()))

    async def send(self, follow_up: FollowUp, causation_id: str, correlation_id: str) -> None:
        await self.send_all([(follow_up, causation_id, correlation_id)])


def _closed(state: lobby.LobbyState) -> bool:
    return isinstance(state, Room) and not state.is_open


def _segments(commands: Sequence[Command]) -> list[list[Command]]:
    """The batch cut before every command that reads the directory."""
    segments: list[list[Command]] = []
    for command in commands:
        if not segments or isinstance(command.payload, _NEEDS_DIRECTORY):
            segments.append([command])
        else:
            segments[-1].append(command)
    return segments
