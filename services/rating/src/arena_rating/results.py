"""From finished matches to ``RateMatch`` commands on the ladder of their game.

The rating service reads ``arena.match.events`` through the seam (``arena_games.registry.
READING``): a match's ``MatchOpened`` names its game, seats and mode; its ``MatchEnded`` each
seat's rank and score and how it ended, whatever the game (a log written before the seam says
``MatchCreated`` and ``GameEnded``, which read as those). For each finished match of a game
with a ladder (its module's ``ratings.ladder``) the reader sends ``RateMatch`` to that ladder
with the command id ``rate:<match_id>``: a redelivered or repeated ``MatchEnded`` sends the same
command again, which the ladder answers once.

Events are taken by the reading rule (architecture rule 2): only a match's next sequence number
counts, so a zombie writer's events are never rated. The reader follows each match from its
``MatchOpened``; a match whose start it did not see (it started before a restart or a
rebalance, or events are missing in between) is folded from the log instead, with every other
match of its partition in the same read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from arena_games.contract import GameError, MatchInfo, Seat, UnitRatings, unpack
from arena_games.registry import READING, STANDARD, UnknownGameError
from arena_runtime import telemetry, topics
from arena_runtime.envelope import (
    Codec,
    EnvelopeError,
    Event,
    TypeFilter,
    new_command,
    now,
    place_of,
)
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import (
    CASUAL,
    RANKED,
    ladder_stream,
    rate_command_id,
    rate_unit_command_id,
    void_command_id,
)
from arena_runtime.streams import is_next, is_next_place
from google.protobuf.message import Message

log = telemetry.get_logger(__name__)

MATCH_PREFIX = "match-"
MODES = {match_pb2.MATCH_MODE_RANKED: RANKED, match_pb2.MATCH_MODE_CASUAL: CASUAL}
READ_BATCH = 1000


@dataclass(slots=True)
class MatchSoFar:
    """What the reader knows of one match: its place in the stream, its seats and mode."""

    sequence: int = 0
    batch_id: str = ""
    opened: match_pb2.MatchOpened | None = None
    ended: Event | None = None
    #: Where in its partition the admitted MatchEnded is.
    ended_offset: int = -1
    #: A game with a per-unit ladder (``ratings.units``): the events it follows, with their
    #: times, how many of its units were sent, and whether its void was.
    units: UnitRatings | None = None
    followed: list[tuple[Message, int]] = field(default_factory=list)
    units_sent: int = 0
    void: tuple[str, str] | None = None
    void_sent: bool = False
    end_sent: bool = False

    def admit(self, event: Event, offset: int = -1) -> bool:
        if not is_next(event, self.sequence, self.batch_id):
            return False
        self.sequence, self.batch_id = event.sequence, event.batch_id
        if self.units is not None and isinstance(event.payload, self.units.follows):
            self.followed.append((event.payload, int(event.time.timestamp() * 1000)))
            self.void = self.void or self.units.voided(event.payload)
        if isinstance(event.payload, match_pb2.MatchOpened):
            self.opened = event.payload
            self.units = units_of(event.payload.game)
        elif isinstance(event.payload, match_pb2.MatchEnded) and self.ended is None:
            self.ended, self.ended_offset = event, offset
        return True


def units_of(game: str) -> UnitRatings | None:
    """The per-unit ladder hooks of a game (None: its matches are rated as a whole)."""
    try:
        return STANDARD.find(game).ratings.units
    except UnknownGameError:
        return None


def rate_match(opened: match_pb2.MatchOpened, ended: Event) -> pb.RateMatch | None:
    """The command recording a finished match on its game's ladder, or None if the match
    cannot be rated at all (no such game, a game without a ladder, a result that does not name
    each seat once)."""
    result: match_pb2.MatchEnded = ended.payload
    try:
        module = STANDARD.find(opened.game)
    except UnknownGameError:
        return None
    ladder = module.ratings.ladder
    ranks = {s.seat: s for s in result.seats}
    if ladder is None or sorted(ranks) != list(range(1, len(opened.seats) + 1)):
        return None
    info = match_info(opened)
    if info is None:
        return None
    try:
        final = unpack(result.detail, module.wire.final) if result.HasField("detail") else None
    except GameError:
        return None  # a final event of another game: not this match's
    statistics = [] if final is None else module.ratings.statistics(info, final)
    return pb.RateMatch(
        match_id=opened.match_id,
        game=ladder,
        mode=MODES.get(opened.mode, CASUAL),
        reason=result.reason,
        ended_at_ms=int(ended.time.timestamp() * 1000),
        seats=[
            pb.LadderPlayer(
                player_id=seat.player_id,
                display_name=seat.display_name,
                seat=number,
                ai=seat.kind == match_pb2.SEAT_KIND_AI,
                kind=seat.kind,
                policy=seat.policy,
                rank=ranks[number].rank,
                score=ranks[number].score,
            )
            for number, seat in enumerate(opened.seats, start=1)
        ],
        statistics=[
            pb.StatisticsRow(
                board=row.board,
                kind=row.kind,
                key=row.key,
                name=row.name,
                episodes=row.episodes,
                wins=row.wins,
                score=row.score,
                counts=dict(row.counts),
            )
            for row in statistics
        ],
    )


def match_info(opened: match_pb2.MatchOpened) -> MatchInfo | None:
    """The match as its game's ``ratings`` reads it; None for a seat of no known kind."""
    try:
        seats = tuple(Seat.from_proto(n, s) for n, s in enumerate(opened.seats, start=1))
    except ValueError:
        return None
    mode = MODES.get(opened.mode, CASUAL)
    return MatchInfo(opened.match_id, opened.game, seats, mode, opened.room_code)


@dataclass
class ResultReader:
    """The handler of the rating service's member of the match-event group."""

    log: EventLog
    codec: Codec = READING
    clock: Callable[[], datetime] = now
    matches: dict[str, MatchSoFar] = field(default_factory=dict)
    #: Matches already sent to the ladder (their later events are of no interest).
    done: set[str] = field(default_factory=set)
    #: Per partition, the offset the last scan of it stopped at (see ``_scan``).
    scanned: dict[int, int] = field(default_factory=dict)
    sent: int = 0

    def __post_init__(self) -> None:
        self._unwanted = TypeFilter.for_payloads(
            self.codec.schemas, (match_pb2.MatchOpened, match_pb2.MatchEnded)
        )

    def skip(self, record: Record) -> bool:
        """Whether the consume loop may leave ``record`` unread (see ConsumerLoop's ``skip``):
        an event of a type read as neither MatchOpened nor MatchEnded (a move's), of a match
        followed as a whole, that is its next by the reading rule, told from its headers. It
        is admitted here, as :meth:`handle` would admit it, and does nothing else there.

        Anything else is decoded and handled: a record without the headers (written before
        them), a match not followed yet or followed per unit, an event out of turn (a gap to
        fold from the log, a duplicate, a zombie's)."""
        if not self._unwanted(record):
            return False
        match = self.matches.get(record.key.decode(errors="replace") if record.key else "")
        if match is None or match.units is not None or match.ended is not None:
            return False
        place = place_of(record)
        if place is None or not is_next_place(place, match.sequence, match.batch_id):
            return False
        match.sequence, match.batch_id = place[0], place[2]
        return True

    async def handle(self, event: Event, record: Record) -> None:
        if not event.stream.startswith(MATCH_PREFIX) or event.stream in self.done:
            return
        match = self.matches.get(event.stream)
        if match is None and event.sequence == 1:
            match = self.matches[event.stream] = MatchSoFar()
            match.admit(event, record.offset)
        elif match is None or event.sequence > match.sequence + 1:
            # Its start was before our time, or we missed some of its events (a rebalance).
            await self._scan(record)
            match = self.matches.get(event.stream)
        else:
            match.admit(event, record.offset)
        if match is not None and match.units is not None:
            await self._send_units(event, match)
        elif match is not None and match.ended is not None:
            await self._send(event.stream, match)

    async def _send_units(self, cause: Event, match: MatchSoFar) -> None:
        """A per-unit match: every unit not sent yet, its void once, its end once (the match
        stays followed after its end, since a void may come days later)."""
        assert match.units is not None
        opened = match.opened
        if opened is None:
            return
        info = match_info(opened)
        ladder = STANDARD.find(opened.game).ratings.ladder
        if info is None or ladder is None:
            return
        commands: list[tuple[str, Message]] = []
        rated = match.units.rated(info, match.followed)
        for unit in rated[match.units_sent :]:
            seat = opened.seats[unit.seat - 1]
            request = pb.RateUnit(
                match_id=opened.match_id,
                game=ladder,
                player=pb.LadderPlayer(
                    player_id=seat.player_id,
                    display_name=seat.display_name,
                    seat=unit.seat,
                    kind=seat.kind,
                ),
                unit=unit.unit,
                result=unit.result,
                time_ms=unit.time_ms,
            )
            if unit.opponent_rating is not None:
                request.opponent_rating = unit.opponent_rating
            commands.append((rate_unit_command_id(opened.match_id, unit.unit), request))
        match.units_sent = len(rated)
        if match.void is not None and not match.void_sent:
            match.void_sent = True
            by, why = match.void
            void = pb.VoidMatch(match_id=opened.match_id, game=ladder, by=by, why=why)
            commands.append((void_command_id(opened.match_id), void))
        for command_id, payload in commands:
            command = new_command(
                ladder_stream(ladder),
                payload,
                command_id=command_id,
                causation_id=cause.event_id,
                correlation_id=cause.correlation_id,
                clock=self.clock,
            )
            await self.log.append(topics.RATING_COMMANDS, [self.codec.command_record(command)])
            self.sent += 1
        if match.ended is not None and not match.end_sent:
            match.end_sent = True
            match.followed.clear()  # every unit is sent; only a void may follow
            await self._send_end(cause.stream, opened, match.ended)

    async def _send_end(self, stream: str, opened: match_pb2.MatchOpened, ended: Event) -> None:
        request = rate_match(opened, ended)
        if request is None:
            log.info("finished match of no ladder (or unknown seats): not rated", stream=stream)
            return
        command = new_command(
            ladder_stream(request.game),
            request,
            command_id=rate_command_id(request.match_id),
            causation_id=ended.event_id,
            correlation_id=ended.correlation_id,
            clock=self.clock,
        )
        await self.log.append(topics.RATING_COMMANDS, [self.codec.command_record(command)])
        self.sent += 1

    async def _send(self, stream: str, match: MatchSoFar) -> None:
        self.matches.pop(stream, None)
        self.done.add(stream)
        assert match.ended is not None
        if match.opened is None:
            log.warning("finished match without MatchOpened: not rated", stream=stream)
            return
        await self._send_end(stream, match.opened, match.ended)

    async def _scan(self, upto: Record) -> None:
        """Fold every match of ``upto``'s partition from where the last scan of it stopped
        through ``upto`` itself: one read of the partition however many matches a restart left
        half seen.

        Each record before ``upto`` has been handled already, by this reader or, before a restart
        or a rebalance, by the member whose commits it resumed from; so a match that ended before
        ``upto`` was sent then and is only remembered as done, and what is kept is the matches
        still running (``upto``'s own included).
        """
        partition = upto.partition
        offset = self.scanned.get(partition, 0)
        seen: set[str] = set()
        while offset <= upto.offset:
            records = await self.log.read(upto.topic, partition, offset, READ_BATCH)
            if not records:
                break
            for record in records:
                if record.offset > upto.offset:
                    break
                stream = record.key.decode(errors="replace") if record.key else ""
                if not stream.startswith(MATCH_PREFIX) or stream in self.done:
                    continue
                try:
                    event = self.codec.decode_event(record.value)
                except EnvelopeError:
                    continue  # the consume loop counts and logs malformed records
                self.matches.setdefault(stream, MatchSoFar()).admit(event, record.offset)
                seen.add(stream)
            offset = records[-1].offset + 1
        self.scanned[partition] = upto.offset + 1
        for stream in seen:
            match = self.matches[stream]
            if match.sequence == 0:
                del self.matches[stream]  # only events after its end, or a zombie's
            elif match.units is not None:
                # Followed still (a void may come); what it sent before is sent again, and the
                # ladder answers each command id once.
                continue
            elif match.ended is not None and match.ended_offset < upto.offset:
                del self.matches[stream]
                self.done.add(stream)
