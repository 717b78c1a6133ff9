"""From finished matches to ``RateMatch`` commands on the ladder of their game.

The rating service reads ``arena.match.events``. A match's ``MatchCreated`` names its seats and
mode; its ``GameEnded`` the winning seat and how. For each finished match the reader sends
``RateMatch`` to the ladder with the command id ``rate:<match_id>``: a redelivered or repeated
``GameEnded`` sends the same command again, which the ladder answers once.

Events are taken by the reading rule (DESIGN.md rule 2): only a match's next sequence number
counts, so a zombie writer's events are never rated. The reader follows each match from its
``MatchCreated``; a match whose start it did not see (it started before a restart or a
rebalance, or events are missing in between) is folded from the log instead, with every other
match of its partition in the same read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from arena_runtime import telemetry, topics
from arena_runtime.envelope import CODEC, Codec, EnvelopeError, Event, new_command, now
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import (
    CASUAL,
    MATHS_WARRIORS,
    RANKED,
    ladder_stream,
    rate_command_id,
)
from arena_runtime.streams import is_next

log = telemetry.get_logger(__name__)

MATCH_PREFIX = "match-"
MODES = {mw.MATCH_MODE_RANKED: RANKED, mw.MATCH_MODE_CASUAL: CASUAL}
READ_BATCH = 1000


@dataclass(slots=True)
class MatchSoFar:
    """What the reader knows of one match: its place in the stream, its seats and mode."""

    sequence: int = 0
    batch_id: str = ""
    created: mw.MatchCreated | None = None
    ended: Event | None = None
    #: Where in its partition the admitted GameEnded is.
    ended_offset: int = -1

    def admit(self, event: Event, offset: int = -1) -> bool:
        if not is_next(event, self.sequence, self.batch_id):
            return False
        self.sequence, self.batch_id = event.sequence, event.batch_id
        if isinstance(event.payload, mw.MatchCreated):
            self.created = event.payload
        elif isinstance(event.payload, mw.GameEnded) and self.ended is None:
            self.ended, self.ended_offset = event, offset
        return True


def rate_match(created: mw.MatchCreated, ended: Event) -> pb.RateMatch | None:
    """The command recording a finished match, or None if the match cannot be rated at all."""
    game_ended: mw.GameEnded = ended.payload
    seats = {seat_number: seat for seat_number, seat in enumerate(created.seats, start=1)}
    if len(seats) != 2 or game_ended.winner not in seats:
        return None
    loser_seat = 2 if game_ended.winner == 1 else 1

    def player(number: int) -> pb.LadderPlayer:
        seat = seats[number]
        return pb.LadderPlayer(
            player_id=seat.player_id,
            display_name=seat.display_name,
            seat=number,
            ai=seat.kind == mw.SEAT_KIND_AI,
        )

    return pb.RateMatch(
        match_id=created.match_id,
        game=MATHS_WARRIORS,
        mode=MODES.get(created.mode, CASUAL),
        winner=player(game_ended.winner),
        loser=player(loser_seat),
        reason=game_ended.reason,
        ended_at_ms=int(ended.time.timestamp() * 1000),
    )


@dataclass
class ResultReader:
    """The handler of the rating service's member of the match-event group."""

    log: EventLog
    codec: Codec = CODEC
    clock: Callable[[], datetime] = now
    matches: dict[str, MatchSoFar] = field(default_factory=dict)
    #: Matches already sent to the ladder (their later events are of no interest).
    done: set[str] = field(default_factory=set)
    #: Per partition, the offset the last scan of it stopped at (see ``_scan``).
    scanned: dict[int, int] = field(default_factory=dict)
    sent: int = 0

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
        if match is not None and match.ended is not None:
            await self._send(event.stream, match)

    async def _send(self, stream: str, match: MatchSoFar) -> None:
        self.matches.pop(stream, None)
        self.done.add(stream)
        assert match.ended is not None
        if match.created is None:
            log.warning("finished match without MatchCreated: not rated", stream=stream)
            return
        request = rate_match(match.created, match.ended)
        if request is None:
            log.warning("finished match with unknown seats: not rated", stream=stream)
            return
        command = new_command(
            ladder_stream(request.game),
            request,
            command_id=rate_command_id(request.match_id),
            causation_id=match.ended.event_id,
            correlation_id=match.ended.correlation_id,
            clock=self.clock,
        )
        await self.log.append(topics.RATING_COMMANDS, [self.codec.command_record(command)])
        self.sent += 1

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
            elif match.ended is not None and match.ended_offset < upto.offset:
                del self.matches[stream]
                self.done.add(stream)
