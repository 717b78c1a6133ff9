"""One matchmaking instance: answers lobby commands, reacts to finished matches, fires timers.

Commands of ``arena.commands.matchmaking`` are decided by one StreamRunner over
``arena.matchmaking.events`` (rooms, players and queues are its streams); the answer's
follow-ups (OpenRoom, RetryRoomCode, StartMatch) are written in the same write as its events, or,
if that write lost a race or wrote nothing (a repeat), sent after it is in the log. MatchEnded on
``arena.match.events`` (read through the seam: a legacy GameEnded reads as one) becomes
RoomMatchEnded on the room that played the match, with every seat's rank and score. The events
a game with a ghost store files there (its ``ghosts.files``) become its ``ghosts.file`` commands.

Commands are handled partition by partition side by side, so a decision that reads the lobby
directory (which spans every partition) takes one lock from reading the directory up to the end
until its events are appended: the next such decision then sees them, wherever its stream is,
and a burst of them gets the answers it would get one at a time. The other commands look at
their own stream only and do not wait for that lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime

from arena_games.registry import STANDARD, UnknownGameError
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Command, EnvelopeError, Event, new_command, now
from arena_runtime.eventlog import EventLog, OutgoingRecord, Record
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2, rating_pb2
from arena_runtime.proto_gen.arena.v1.envelope_pb2 import CommandRejected
from arena_runtime.schemas.rating import CREDITS_PREFIX, ladder_stream
from arena_runtime.streams import Answer, Companions, Decision, StreamRunner
from google.protobuf.message import Message

from arena_matchmaking import lobby
from arena_matchmaking.context import LobbyContext
from arena_matchmaking.directory import LobbyDirectory
from arena_matchmaking.duels import Duel
from arena_matchmaking.ids import player_stream, room_stream
from arena_matchmaking.metrics import ROOMS_OPEN
from arena_matchmaking.reactions import FollowUp, follow_ups
from arena_matchmaking.room_settings import game_of
from arena_matchmaking.rooms import Room
from arena_matchmaking.timers import RoomTimers

#: How often closed rooms are looked at for answers to forget: at most this often (or as often
#: as the forget time, if shorter), after a batch of commands.
FORGET_SWEEP_MS = 5_000
#: The ladder events a ghost's frozen rating is read from (of each game with a ghost store).
_RATINGS = (rating_pb2.UnitRated, rating_pb2.SeasonReset, rating_pb2.RatingTakenBack)


def match_event_payloads() -> tuple[type[Message], ...]:
    """Every payload :meth:`Matchmaking.handle_match_event` acts on: the match-event member
    leaves the other records of its topics unread (a move's events, most of them)."""
    ghost_files = tuple(c for m in STANDARD if m.ghosts is not None for c in m.ghosts.files)
    return (
        *ghost_files,
        *_RATINGS,
        rating_pb2.CreditsHeld,
        CommandRejected,
        match_pb2.MatchEnded,
    )


#: Commands whose decision reads the directory: it is read up to the end of the log first.
_NEEDS_DIRECTORY = (
    pb.CreateRoom,
    pb.JoinRoom,
    pb.Enqueue,
    pb.PlayAi,
    pb.PlaySolo,
    pb.RematchRequest,
    pb.RematchAccept,
)


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
        #: Game with a ghost store -> player -> their rating as last read on
        #: arena.rating.events (what a ghost saved now is frozen with). Rebuilt from the games'
        #: ladder streams before the first event is handled (the events group resumes past what
        #: it read before a restart).
        self.ghost_ratings: dict[str, dict[str, int]] = {g: {} for g in STANDARD.ghost_games()}
        #: Rating partition -> the offset after the last rating event applied: a record is
        #: applied once, in offset order, whether read at the start or delivered after.
        self._ratings_read: dict[int, int] = {}
        self._ratings_loaded = False
        self._ratings_lock = asyncio.Lock()
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
            player_matches=self.directory.player_matches,
            live_match_ms=round(self.settings.live_match_seconds * 1000),
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
        such command, and each cut is read, decided and written (one append, its follow-ups
        with it) under the directory lock. Follow-ups that could not go with their events go out
        together once the batch is answered.
        """
        answers: list[Answer] = []
        #: Answered commands whose follow-ups did not go with their events: sent at the end.
        unsent: list[tuple[Command, Answer]] = []
        for segment in _segments(commands):
            #: The CreateRoom ids the segment's companions counted as pending (see _companions).
            noted: set[str] = set()
            companions = self._companions(segment, noted)
            if isinstance(segment[0].payload, _NEEDS_DIRECTORY):
                async with self._directory_decisions:
                    await self.directory.catch_up()
                    try:
                        answered, sent = await self.runner.handle_batch_with(segment, companions)
                    except BaseException:
                        self.directory.pending -= noted
                        raise
                    if not sent:  # not written as folded: the answers given count instead
                        self.directory.pending -= noted
                        for command, answer in zip(segment, answered, strict=True):
                            if _requests_room(command, answer):
                                self.directory.note_request(command.command_id)
            else:
                answered, sent = await self.runner.handle_batch_with(segment, companions)
            answers.extend(answered)
            if not sent:
                unsent.extend(zip(segment, answered, strict=True))
        if unsent:
            await self.send_all(self._follow_ups(unsent))
        self.forget_closed_rooms()
        return answers

    def _follow_ups(
        self, answered: Iterable[tuple[Command, Answer]]
    ) -> Iterator[tuple[FollowUp, str, str]]:
        """The follow-ups of answered commands, with their causation and correlation ids."""
        for command, answer in answered:
            for follow_up in follow_ups(command, answer, self._stream_game(command.stream)):
                yield follow_up, command.command_id, command.correlation_id

    def _companions(self, segment: list[Command], noted: set[str]) -> Companions:
        """The follow-ups of a segment's answers, made on the fold and appended in the same
        write as its events (``StreamRunner.handle_batch_with``): one write a command, not one
        for its events and another for what they imply. A write that lost a race, or wrote
        nothing, leaves them to :meth:`handle_batch`, which sends them after.

        A CreateRoom accepted is counted in the directory's pending requests here, before the
        write that carries its OpenRoom: counted after, its room could be opened and folded
        before that write's acknowledgement is handled (by another instance, or by another lane
        of this one), and the request would then stay pending for good. Its ids go to
        ``noted``, for :meth:`handle_batch` to take back if the write does not go as folded."""

        async def companions(answers: list[Answer]) -> list[tuple[str, list[OutgoingRecord]]]:
            for command, answer in zip(segment, answers, strict=True):
                if _requests_room(command, answer):
                    self.directory.note_request(command.command_id)
                    noted.add(command.command_id)
            by_topic = self._records(self._follow_ups(zip(segment, answers, strict=True)))
            return list(by_topic.items())

        return companions

    def _records(
        self, sends: Iterable[tuple[FollowUp, str, str]]
    ) -> dict[str, list[OutgoingRecord]]:
        """Follow-ups (with their causation and correlation ids) as records, by topic."""
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
        return by_topic

    def _stream_game(self, stream: str) -> str:
        """The game of a room's or a duel's stream as folded now ("" if none)."""
        view = self.runner.view(stream)
        state = view.state if view is not None else None
        if isinstance(state, Room):
            settings = state.settings
        elif isinstance(state, Duel) and state.offered is not None:
            settings = state.offered.settings
        else:
            return ""
        if settings is None:
            return ""
        try:
            return game_of(settings).name
        except UnknownGameError:
            return ""

    async def handle_match_event(self, event: Event, record: Record | None = None) -> None:
        """A match's end (decoded through the seam: MatchEnded), told to its room, or to its
        players' streams when it had none; an event a game files in its ghost store (its
        ``ghosts.files``), filed there; a rating the ghost store freezes ghosts with. Nothing
        else: :func:`match_event_payloads` names what it acts on (the rest is not read)."""
        payload = event.payload
        if any(isinstance(payload, m.ghosts.files) for m in STANDARD if m.ghosts is not None):
            await self.load_ratings()
            await self.send_all(
                (follow_up, event.event_id, event.correlation_id)
                for follow_up in ghost_filings(event, self.ghost_ratings)
            )
            return
        if isinstance(payload, _RATINGS):
            await self.load_ratings()
            if record is not None:
                self._rating_read(payload, record.partition, record.offset)
            else:
                self._rating(payload)
            return
        if isinstance(payload, (rating_pb2.CreditsHeld, CommandRejected)):
            await self._stake_answered(event)
            return
        if not isinstance(payload, match_pb2.MatchEnded):
            return
        match = event.stream.removeprefix("match-")
        code = self.directory.match_rooms.get(match)
        if code is None and match not in self.directory.match_duels:
            await self.directory.catch_up()
            code = self.directory.match_rooms.get(match)
        duel = self.directory.match_duels.get(match)
        if duel is not None:
            await self._to_duel(event, match, duel)
            return
        if code is None:
            # A quick match or an AI game: its players are free to play another.
            players = sorted(self.directory.match_players.get(match, ()))
            await self.send_all(
                (
                    FollowUp(
                        topics.MATCHMAKING_COMMANDS,
                        player_stream(player),
                        f"ended:{match}:{player}",
                        pb.EndPlayerMatch(player_id=player, match_id=match),
                    ),
                    event.event_id,
                    event.correlation_id,
                )
                for player in players
            )
            return
        ended: match_pb2.MatchEnded = event.payload
        payload = pb.RoomMatchEnded(
            match_id=match, winner=winner_of(ended), reason=ended.reason, seats=ended.seats
        )
        follow_up = FollowUp(
            topics.MATCHMAKING_COMMANDS, room_stream(code), f"ended:{match}", payload
        )
        await self.send(follow_up, event.event_id, event.correlation_id)

    async def load_ratings(self) -> None:
        """The ratings of the games with a ghost store, read from their ladders' streams up to
        their end now, once per instance: a player rated before a restart keeps that rating
        here, as without it."""
        if self._ratings_loaded:
            return
        async with self._ratings_lock:
            if self._ratings_loaded:
                return
            ends = await self.log.end_offsets(topics.RATING_EVENTS)
            keys: dict[int, set[bytes]] = {}
            for game in self.ghost_ratings:
                key = ladder_stream(game).encode()
                keys.setdefault(partition_for(key, len(ends)), set()).add(key)
            for partition, wanted in sorted(keys.items()):
                await self._read_ratings(partition, wanted, ends.get(partition, 0))
            self._ratings_loaded = True

    async def _read_ratings(self, partition: int, keys: set[bytes], end: int) -> None:
        offset = 0
        while offset < end:
            batch = await self.log.read(topics.RATING_EVENTS, partition, offset, 1000)
            if not batch:
                break
            for record in batch:
                if record.offset >= end or record.key not in keys:
                    continue
                try:
                    payload = CODEC.decode_event(record.value).payload
                except EnvelopeError:
                    continue
                if isinstance(payload, _RATINGS):
                    self._rating_read(payload, partition, record.offset)
            offset = batch[-1].offset + 1

    def _rating_read(self, payload: Message, partition: int, offset: int) -> None:
        if offset < self._ratings_read.get(partition, 0):
            return  # applied already (read at the start, delivered again after)
        self._ratings_read[partition] = offset + 1
        self._rating(payload)

    def _rating(self, payload: Message) -> None:
        if not isinstance(payload, _RATINGS) or payload.game not in self.ghost_ratings:
            return
        ratings = self.ghost_ratings[payload.game]
        if isinstance(payload, rating_pb2.UnitRated):
            ratings[payload.player.player_id] = payload.after
        else:
            ratings[payload.player_id] = payload.after

    async def _stake_answered(self, event: Event) -> None:
        """A duel stake's hold held, or refused (its command's rejection on the ledger)."""
        payload = event.payload
        if not event.stream.startswith(CREDITS_PREFIX):
            return
        player = event.stream.removeprefix(CREDITS_PREFIX)
        if isinstance(payload, rating_pb2.CreditsHeld):
            prefix, held = "duel-stake:", True
            key = payload.hold_id
        else:
            prefix, held = "hold:", False
            key = payload.command_id
        if not key.startswith(prefix) or not key.endswith(f":{player}"):
            return
        duel = key.removeprefix(prefix).removesuffix(f":{player}")
        answer = pb.DuelStakeAnswer(player_id=player, held=held)
        follow_up = FollowUp(
            topics.MATCHMAKING_COMMANDS, f"duel-{duel}", f"stake:{duel}:{player}", answer
        )
        await self.send(follow_up, event.event_id, event.correlation_id)

    async def _to_duel(self, event: Event, match: str, duel: str) -> None:
        """A duel game's end, as its game's ``duels.side`` records it."""
        ended: match_pb2.MatchEnded = event.payload
        side = duel_side(ended)
        side.player_id = self.directory.duel_player(match)
        command = pb.DuelGameEnded(match_id=match, side=side)
        follow_up = FollowUp(topics.MATCHMAKING_COMMANDS, f"duel-{duel}", f"ended:{match}", command)
        await self.send(follow_up, event.event_id, event.correlation_id)

    async def _fire_timer(self, code: str, command_id: str, timer: pb.RoomTimer) -> None:
        follow_up = FollowUp(topics.MATCHMAKING_COMMANDS, room_stream(code), command_id, timer)
        await self.send(follow_up, command_id, "")

    async def send_all(self, sends: Iterable[tuple[FollowUp, str, str]]) -> None:
        """Send follow-ups (with their causation and correlation ids), one append per topic."""
        by_topic = self._records(sends)
        await asyncio.gather(*(self.log.append(t, records) for t, records in by_topic.items()))

    async def send(self, follow_up: FollowUp, causation_id: str, correlation_id: str) -> None:
        await self.send_all([(follow_up, causation_id, correlation_id)])


def _requests_room(command: Command, answer: Answer) -> bool:
    """A CreateRoom accepted now (not answered before): its room counts toward the cap until
    it opens."""
    return isinstance(command.payload, pb.CreateRoom) and answer.accepted and not answer.repeated


def _closed(state: lobby.LobbyState) -> bool:
    return isinstance(state, Room) and not state.is_open


def duel_side(ended: match_pb2.MatchEnded) -> pb.DuelSide:
    """A duel game's end as its game's ``duels.side`` reads it (only ``over`` for a game with no
    duel rule, or none known)."""
    try:
        duels = STANDARD.find(ended.game).duels
    except UnknownGameError:
        duels = None
    return duels.side(ended) if duels is not None else pb.DuelSide(over=True)


def ghost_filings(event: Event, ratings: Mapping[str, Mapping[str, int]]) -> list[FollowUp]:
    """What the games with a ghost store file there of one event (``ghosts.files``, each made by
    its ``ghosts.file``): the event's match, its time and the ratings it may freeze given."""
    match = event.stream.removeprefix("match-")
    time_ms = int(event.time.timestamp() * 1000)
    sent: list[FollowUp] = []
    for module in STANDARD:
        ghosts = module.ghosts
        if ghosts is None or not isinstance(event.payload, ghosts.files):
            continue
        rated = ratings.get(module.name, {})
        filing = ghosts.file(event.payload, match, time_ms, rated.get)
        if filing is not None:
            sent.append(
                FollowUp(
                    topics.MATCHMAKING_COMMANDS, ghosts.stream, filing.command_id, filing.command
                )
            )
    return sent


def winner_of(ended: match_pb2.MatchEnded) -> int:
    """The seat ranked first alone; 0 for a tie."""
    if not ended.seats:
        return 0
    best = min(s.rank for s in ended.seats)
    first = [s.seat for s in ended.seats if s.rank == best]
    return first[0] if len(first) == 1 else 0


def _segments(commands: Sequence[Command]) -> list[list[Command]]:
    """The batch cut before every command that reads the directory."""
    segments: list[list[Command]] = []
    for command in commands:
        if not segments or isinstance(command.payload, _NEEDS_DIRECTORY):
            segments.append([command])
        else:
            segments[-1].append(command)
    return segments
