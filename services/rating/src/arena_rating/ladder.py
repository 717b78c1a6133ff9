"""A ladder: one stream per game and rating rules, whose fold is every player's rating.

``decide(ladder, command)`` answers a ``RateMatch`` with ``MatchRated`` (a match the game's
``ratings`` says is rated, on an Elo ladder: every seat's rating after, by the game's Elo),
``MatchRecorded`` (a casual match, one the game says is unrated, e.g. with an AI seat, or any
match of a ladder that keeps statistics only: history only) or a :class:`Rejection`;
``apply(ladder, event)`` folds an event in. Ratings are never read from anywhere but this fold,
and every event carries each seat's rating before and after, so a projection needs nothing but
the event to show them. Nothing here knows a game: the ladder's game module
(``arena_games.registry``) says whether and how a result is rated.

Commands and events of version 1 (two seats, ``winner`` and ``loser``) are read as version 2
(every seat in ``seats``; ``arena_runtime.schemas.rating``), so an old ladder folds and decides
the same.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena_games.contract import (
    GameModule,
    MatchInfo,
    Result,
    SeasonLine,
    Seat,
    SeatKind,
    SeatResult,
    UnitStanding,
)
from arena_games.registry import STANDARD, Registry
from arena_runtime.envelope import Command, Event
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import CASUAL, LADDER_PREFIX, RANKED, as_v2
from arena_runtime.streams import Decision, Rejection
from google.protobuf.message import Message

MODES = frozenset({RANKED, CASUAL})
MAX_ID_LENGTH = 200
#: How long after the newest recorded match's end a match id is remembered: a result ending
#: longer before that is refused (``too_late``), so no id older than this is needed to refuse a
#: match twice. A week: far beyond any outage the result reader catches up from, and beyond the
#: consumer-group offsets a broker keeps (``offsets.retention.minutes``, 7 days), after which a
#: reset group would send every match of ``arena.match.events`` again.
RECORDED_WINDOW_MS = 7 * 24 * 3600 * 1000
#: Why a match of a ladder without Elo changes no rating.
STATISTICS = "statistics"

# Rejection codes.
WRONG_LADDER = "wrong_ladder"
INVALID_MATCH = "invalid_match"
INVALID_MODE = "invalid_mode"
INVALID_REASON = "invalid_reason"
INVALID_PLAYERS = "invalid_players"
SAME_PLAYER = "same_player"
ALREADY_RECORDED = "already_recorded"
TOO_LATE = "too_late"
UNKNOWN_COMMAND = "unknown_command"
NOT_PER_UNIT = "not_per_unit"
INVALID_UNIT = "invalid_unit"
INVALID_SEASON = "invalid_season"
SEASON_NOT_OVER = "season_not_over"

_KINDS = {
    match_pb2.SEAT_KIND_HUMAN: SeatKind.HUMAN,
    match_pb2.SEAT_KIND_AI: SeatKind.AI,
    match_pb2.SEAT_KIND_SCRIPTED: SeatKind.SCRIPTED,
}


@dataclass
class Ladder:
    """A ladder's state: each rated player's rating and the matches already recorded.

    ``apply`` updates it in place and returns it: a ladder holds every player and every match,
    and copying that per event would make folding a long ladder quadratic. The stream runner and
    ``fold`` apply each event exactly once, in order; ``decide`` only reads.
    """

    game: str
    ratings: dict[str, int] = field(default_factory=dict)
    #: The match ids recorded whose match ended within ``RECORDED_WINDOW_MS`` of ``newest_ms``
    #: (the newest end recorded), each with its end (Unix ms), in the order recorded.
    recorded: dict[str, int] = field(default_factory=dict)
    newest_ms: int = 0
    #: ``recorded`` in the order recorded, (end, id): the oldest ids go from the front.
    order: deque[tuple[int, str]] = field(default_factory=deque, compare=False, repr=False)
    #: The game module whose ladder this is (None: no registered game has this ladder).
    module: GameModule[Any] | None = field(default=None, compare=False, repr=False)
    #: A per-unit ladder (``ratings.units``): each player's standing, the rated units, the
    #: voided matches and the history ``take_back`` works out again (UnitRated, SeasonReset).
    standings: dict[str, UnitStanding] = field(default_factory=dict)
    units: set[tuple[str, int]] = field(default_factory=set)
    voided: set[str] = field(default_factory=set)
    history: list[Message] = field(default_factory=list, repr=False)
    #: Seasons: each player's line per season (rating, units), when the ladder first saw each
    #: player, the counted finished games per season and player, and the seasons closed.
    lines: dict[tuple[str, str], tuple[str, int, int]] = field(default_factory=dict)
    first_seen: dict[str, int] = field(default_factory=dict)
    counted: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)

    def standing(self, player_id: str) -> UnitStanding:
        return self.standings.get(player_id, UnitStanding(self.rating(player_id)))

    def rating(self, player_id: str) -> int:
        start = self.module.ratings.start if self.module is not None else 0
        return self.ratings.get(player_id, start)

    def horizon(self) -> int:
        """A match that ended before this (Unix ms) is refused: its id may be forgotten."""
        return self.newest_ms - RECORDED_WINDOW_MS

    def remember(self, match_id: str, ended_at_ms: int) -> None:
        """Note a recorded match; forget those that ended before the horizon (a match that
        ended before it is refused whether it was recorded or not, so none is rated twice)."""
        if match_id not in self.recorded:
            self.recorded[match_id] = ended_at_ms
            self.order.append((ended_at_ms, match_id))
        self.newest_ms = max(self.newest_ms, ended_at_ms)
        horizon = self.horizon()
        # From the front only (amortised O(1)): an id recorded late stays until those before it
        # go, which keeps more than needed, never less.
        while self.order and self.order[0][0] < horizon:
            ended, gone = self.order.popleft()
            if self.recorded.get(gone) == ended:
                del self.recorded[gone]


def module_of_ladder(name: str, registry: Registry = STANDARD) -> GameModule[Any] | None:
    """The game whose ``ratings.ladder`` is ``name``."""
    for module in registry:
        if module.ratings.ladder == name:
            return module
    return None


def initial(stream: str) -> Ladder:
    """The empty ladder of stream ``ladder-<name>``."""
    name = stream.removeprefix(LADDER_PREFIX)
    return Ladder(name, module=module_of_ladder(name))


def _seat_problem(module: GameModule[Any], seats: list[pb.LadderPlayer]) -> Rejection | None:
    if len(seats) != module.seats.seats or [s.seat for s in seats] != list(
        range(1, len(seats) + 1)
    ):
        return Rejection(
            INVALID_PLAYERS, f"{module.seats.seats} seats, numbered from 1, each with its rank"
        )
    for seat in seats:
        if (
            not seat.player_id
            or len(seat.player_id) > MAX_ID_LENGTH
            or seat.rank < 1
            or seat.kind not in _KINDS
        ):
            return Rejection(INVALID_PLAYERS, f"seat {seat.seat}: a player id, a kind and a rank")
    ids = [s.player_id for s in seats]
    if len(set(ids)) != len(ids):
        return Rejection(SAME_PLAYER, "a player cannot play against themselves")
    return None


def check(ladder: Ladder, request: pb.RateMatch) -> Rejection | None:
    """Why ``request`` (version 2) cannot be recorded on ``ladder``, or None."""
    module = ladder.module
    if module is None or request.game != ladder.game:
        return Rejection(WRONG_LADDER, f"{request.game!r} is not on ladder {ladder.game!r}")
    if not request.match_id or len(request.match_id) > MAX_ID_LENGTH:
        return Rejection(INVALID_MATCH, "match_id must be 1-200 characters")
    if request.mode not in MODES:
        return Rejection(INVALID_MODE, f"mode must be ranked or casual, not {request.mode!r}")
    if request.reason not in module.ratings.reasons:
        return Rejection(INVALID_REASON, f"unknown end of game {request.reason!r}")
    refused = _seat_problem(module, list(request.seats))
    if refused is not None:
        return refused
    if request.match_id in ladder.recorded:
        return Rejection(ALREADY_RECORDED, f"match {request.match_id} is already on the ladder")
    if request.ended_at_ms < ladder.horizon():
        return Rejection(
            TOO_LATE, f"match {request.match_id} ended more than a week before the newest one"
        )
    return None


def match_info(request: pb.RateMatch) -> MatchInfo:
    """The match a request records, as the game's ``ratings`` reads it."""
    return MatchInfo(
        request.match_id,
        request.game,
        tuple(
            Seat(s.seat, s.player_id, s.display_name, _KINDS[s.kind], s.policy)
            for s in request.seats
        ),
        mode=request.mode,
    )


def result_of(request: pb.RateMatch) -> Result:
    return Result(request.reason, tuple(SeatResult(s.seat, s.rank, s.score) for s in request.seats))


def record(ladder: Ladder, request: pb.RateMatch) -> pb.MatchRated | pb.MatchRecorded | Rejection:
    """The event recording ``request``: rated when the game's Elo ladder says it is."""
    request = as_v2(request)  # type: ignore[assignment]
    refused = check(ladder, request)
    if refused is not None:
        return refused
    assert ladder.module is not None
    ratings = ladder.module.ratings
    unrated = CASUAL if request.mode == CASUAL else ratings.unrated(match_info(request))
    if not unrated and not ratings.elo:
        unrated = STATISTICS
    if not unrated:
        before = [ladder.rating(s.player_id) for s in request.seats]
        after = ratings.rate(before, result_of(request))
        return pb.MatchRated(
            match_id=request.match_id,
            game=request.game,
            reason=request.reason,
            ended_at_ms=request.ended_at_ms,
            seats=[
                pb.SeatRating(player=seat, before=b, after=a)
                for seat, b, a in zip(request.seats, before, after, strict=True)
            ],
        )
    return pb.MatchRecorded(
        match_id=request.match_id,
        game=request.game,
        mode=request.mode,
        reason=request.reason,
        ended_at_ms=request.ended_at_ms,
        unrated_reason=unrated,
        seats=request.seats,
        statistics=request.statistics,
    )


def rate_unit(ladder: Ladder, request: pb.RateUnit) -> list[Message] | Rejection:
    """One unit of a per-unit ladder rated: a season's reset first if due; nothing for a unit
    of a voided match."""
    units = ladder.module.ratings.units if ladder.module is not None else None
    if units is None or request.game != ladder.game:
        return Rejection(NOT_PER_UNIT, f"ladder {ladder.game!r} does not rate units")
    if not request.match_id or len(request.match_id) > MAX_ID_LENGTH:
        return Rejection(INVALID_MATCH, "match_id must be 1-200 characters")
    player = request.player.player_id
    if not player or len(player) > MAX_ID_LENGTH or request.unit < 1:
        return Rejection(INVALID_UNIT, "a player id and a unit number from 1")
    if request.result not in ("win", "draw", "loss"):
        return Rejection(INVALID_UNIT, f"unknown result {request.result!r}")
    if request.match_id in ladder.voided:
        return []
    if (request.match_id, request.unit) in ladder.units:
        return Rejection(ALREADY_RECORDED, f"unit {request.unit} of {request.match_id} is rated")
    standing = ladder.standing(player)
    if standing.season and units.season_of(request.time_ms) < standing.season:
        return Rejection(INVALID_UNIT, "a unit of a season gone by")
    return units.rate(standing, request)


def void_match(ladder: Ladder, request: pb.VoidMatch) -> list[Message] | Rejection:
    """A voided match: ``MatchVoided``, then every standing it changed taken back."""
    units = ladder.module.ratings.units if ladder.module is not None else None
    if units is None or request.game != ladder.game:
        return Rejection(NOT_PER_UNIT, f"ladder {ladder.game!r} does not rate units")
    if not request.match_id or len(request.match_id) > MAX_ID_LENGTH:
        return Rejection(INVALID_MATCH, "match_id must be 1-200 characters")
    if request.match_id in ladder.voided:
        return []
    voided = frozenset(ladder.voided | {request.match_id})
    return [
        pb.MatchVoided(
            match_id=request.match_id, game=request.game, by=request.by, why=request.why
        ),
        *units.take_back(ladder.game, ladder.history, voided),
    ]


def close_season(ladder: Ladder, request: pb.CloseSeason) -> list[Message] | Rejection:
    """A season over (by the clock reading the command carries): its places and prizes, once;
    nothing for a season without a counted game."""
    units = ladder.module.ratings.units if ladder.module is not None else None
    if units is None or request.game != ladder.game:
        return Rejection(NOT_PER_UNIT, f"ladder {ladder.game!r} has no seasons")
    try:
        end = units.season_end_ms(request.season)
    except ValueError:
        return Rejection(INVALID_SEASON, f"not a season: {request.season!r}")
    if request.now_ms < end:
        return Rejection(SEASON_NOT_OVER, f"season {request.season} ends at {end}")
    if request.season in ladder.closed:
        return []
    games = ladder.counted.get(request.season, {})
    if not any(games.values()):
        return []  # nobody finished a counted game: nothing to close, no prize
    entries = []
    for player, matches in sorted(games.items()):
        if not matches:
            continue
        name, rating, combats = ladder.lines.get(
            (request.season, player),
            ("", units.rating_in_season(ladder.standing(player), request.season), 0),
        )
        since = ladder.first_seen.get(player, 0)
        entries.append(SeasonLine(player, name, rating, combats, len(matches), since))
    return [
        pb.SeasonClosed(
            game=request.game,
            season=request.season,
            closed_at_ms=request.now_ms,
            places=[
                pb.SeasonPlace(
                    place=place,
                    player_id=line.player_id,
                    display_name=line.display_name,
                    rating=line.rating,
                    ranked_combats=line.units,
                    ranked_games=line.games,
                    prize=prize,
                )
                for place, line, prize in units.places(entries)
            ],
        )
    ]


def decide(ladder: Ladder, command: Command) -> Decision:
    payload = command.payload
    decided: Message | list[Message] | Rejection
    if isinstance(payload, pb.CloseSeason):
        decided = close_season(ladder, payload)
    elif isinstance(payload, pb.RateUnit):
        decided = rate_unit(ladder, payload)
    elif isinstance(payload, pb.VoidMatch):
        decided = void_match(ladder, payload)
    elif isinstance(payload, pb.RateMatch):
        decided = record(ladder, payload)
    else:
        return Rejection(UNKNOWN_COMMAND, f"a ladder does not take {command.type}")
    if isinstance(decided, Rejection):
        return decided
    return decided if isinstance(decided, list) else [decided]


def apply(ladder: Ladder, event: Event) -> Ladder:
    payload = event.payload
    if isinstance(payload, pb.MatchRated):
        rated: pb.MatchRated = as_v2(payload)  # type: ignore[assignment]
        for seat in rated.seats:
            ladder.ratings[seat.player.player_id] = seat.after
        ladder.remember(payload.match_id, payload.ended_at_ms)
    elif isinstance(payload, pb.MatchRecorded):
        ladder.remember(payload.match_id, payload.ended_at_ms)
        _count_finished(ladder, as_v2(payload))  # type: ignore[arg-type]
    elif isinstance(payload, pb.MatchVoided):
        ladder.voided.add(payload.match_id)
        for players in ladder.counted.values():
            for matches in players.values():
                matches.discard(payload.match_id)
    elif isinstance(payload, pb.SeasonClosed):
        ladder.closed.add(payload.season)
    elif isinstance(payload, (pb.UnitRated, pb.SeasonReset, pb.RatingTakenBack)):
        units = ladder.module.ratings.units if ladder.module is not None else None
        if units is None:
            return ladder
        if isinstance(payload, pb.UnitRated):
            player = payload.player.player_id
            ladder.units.add((payload.match_id, payload.unit))
            ladder.first_seen.setdefault(player, payload.time_ms)
        else:
            player = payload.player_id
        if not isinstance(payload, pb.RatingTakenBack):
            ladder.history.append(payload)
        standing = units.apply(ladder.standing(player), payload)
        ladder.standings[player] = standing
        ladder.ratings[player] = standing.rating
        if isinstance(payload, pb.UnitRated):
            name = payload.player.display_name
            ladder.lines[(payload.season, player)] = (name, payload.after, payload.season_units)
        elif isinstance(payload, pb.RatingTakenBack) and payload.season_after:
            name = ladder.lines.get((payload.season_after, player), ("", 0, 0))[0]
            ladder.lines[(payload.season_after, player)] = (
                name,
                payload.after,
                payload.season_units_after,
            )
    return ladder


def _count_finished(ladder: Ladder, recorded: pb.MatchRecorded) -> None:
    """A finished ranked match of a per-unit ladder that counts towards its season's minimum
    (unless voided)."""
    units = ladder.module.ratings.units if ladder.module is not None else None
    if units is None or recorded.mode != RANKED or recorded.match_id in ladder.voided:
        return
    if not units.counts(recorded.reason):
        return
    season = units.season_of(recorded.ended_at_ms)
    for seat in recorded.seats:
        if seat.kind == match_pb2.SEAT_KIND_HUMAN:
            players = ladder.counted.setdefault(season, {})
            players.setdefault(seat.player_id, set()).add(recorded.match_id)


# -- snapshots (arena_runtime.snapshots): a ladder kept as its state, not its history ---------

#: The meaning of an encoded ladder: change it when ``apply`` or ``encode`` changes meaning (a
#: snapshot of another version is ignored and the ladder replayed from the log).
SNAPSHOT_VERSION = "ladder-1"
_HISTORY: dict[str, type[Message]] = {"UnitRated": pb.UnitRated, "SeasonReset": pb.SeasonReset}
#: Lengths of the four parts after the magic: the JSON rest, then ratings' and recorded ids'
#: columns (each: count, lengths, UTF-8 ids, int64 values; little-endian).
_PARTS = struct.Struct("<4sQ")
_MAGIC = b"LDR1"


def capture(ladder: Ladder) -> Callable[[], bytes]:
    """What ``encode`` needs of the ladder as it is now, copied (``apply`` changes the ladder in
    place): a few shallow copies under the runner's lock; the encoding runs later, off the loop.
    """
    copy = Ladder(
        ladder.game,
        ratings=dict(ladder.ratings),
        newest_ms=ladder.newest_ms,
        order=deque(ladder.order),
        standings=dict(ladder.standings),
        units=set(ladder.units),
        voided=set(ladder.voided),
        history=list(ladder.history),
        lines=dict(ladder.lines),
        first_seen=dict(ladder.first_seen),
        counted={s: {p: set(m) for p, m in ps.items()} for s, ps in ladder.counted.items()},
        closed=set(ladder.closed),
    )
    return lambda: encode(copy)


def encode(ladder: Ladder) -> bytes:
    """The ladder in bytes: its two big maps (every player's rating, every remembered match id
    with its end) as columns, the rest (small, or per-combat ladders' history) as JSON. Columns,
    because the encoding runs on the service's loop: a JSON list of 200,000 ids took ~0.9 s on a
    loaded box, the columns a few tens of ms."""
    history = []
    for message in ladder.history:
        name = type(message).__name__
        if name not in _HISTORY:
            raise TypeError(f"a ladder's history holds no {name}")
        history.append([name, base64.b64encode(message.SerializeToString()).decode()])
    rest = {
        "game": ladder.game,
        "newest_ms": ladder.newest_ms,
        "standings": {p: [s.rating, s.season, s.season_units] for p, s in ladder.standings.items()},
        "units": sorted(ladder.units),
        "voided": sorted(ladder.voided),
        "history": history,
        "lines": [[s, p, *line] for (s, p), line in ladder.lines.items()],
        "first_seen": ladder.first_seen,
        "counted": {s: {p: sorted(m) for p, m in ps.items()} for s, ps in ladder.counted.items()},
        "closed": sorted(ladder.closed),
    }
    head = json.dumps(rest, separators=(",", ":")).encode()
    recorded = [match_id for _, match_id in ladder.order]
    return b"".join(
        [
            _PARTS.pack(_MAGIC, len(head)),
            head,
            _column(list(ladder.ratings), list(ladder.ratings.values())),
            _column(recorded, [ended for ended, _ in ladder.order]),
        ]
    )


def decode(stream: str, blob: bytes) -> Ladder:
    """The ladder ``encode`` wrote for ``stream``; ValueError (or KeyError, TypeError) if not."""
    magic, size = _PARTS.unpack_from(blob, 0)
    if magic != _MAGIC:
        raise ValueError("not an encoded ladder")
    at = _PARTS.size
    data = json.loads(blob[at : at + size])
    ladder = initial(stream)
    if data["game"] != ladder.game:
        raise ValueError(f"a snapshot of ladder {data['game']!r}, not {ladder.game!r}")
    players, ratings, at = _read_column(blob, at + size)
    ids, ends, at = _read_column(blob, at)
    if at != len(blob):
        raise ValueError("trailing bytes after the ladder")
    ladder.ratings = dict(zip(players, ratings, strict=True))
    ladder.order = deque(zip(ends, ids, strict=True))
    ladder.recorded = dict(zip(ids, ends, strict=True))
    if len(ladder.recorded) != len(ladder.order):
        raise ValueError("a match id twice in the ladder")
    ladder.newest_ms = int(data["newest_ms"])
    ladder.standings = {
        str(p): UnitStanding(int(r), str(s), int(u)) for p, (r, s, u) in data["standings"].items()
    }
    ladder.units = {(str(m), int(u)) for m, u in data["units"]}
    ladder.voided = {str(m) for m in data["voided"]}
    ladder.history = []
    for name, value in data["history"]:
        message = _HISTORY[name]()
        message.ParseFromString(base64.b64decode(value))
        ladder.history.append(message)
    ladder.lines = {(str(s), str(p)): (str(n), int(r), int(u)) for s, p, n, r, u in data["lines"]}
    ladder.first_seen = {str(p): int(t) for p, t in data["first_seen"].items()}
    ladder.counted = {
        str(s): {str(p): {str(m) for m in ms} for p, ms in ps.items()}
        for s, ps in data["counted"].items()
    }
    ladder.closed = {str(s) for s in data["closed"]}
    return ladder


def _little(values: array[int]) -> array[int]:
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _column(keys: list[str], values: list[int]) -> bytes:
    """count, each key's UTF-8 length, the keys, the values (int64)."""
    encoded = [key.encode() for key in keys]
    lengths = _little(array("I", map(len, encoded)))
    return b"".join(
        [
            struct.pack("<Q", len(keys)),
            lengths.tobytes(),
            b"".join(encoded),
            _little(array("q", values)).tobytes(),
        ]
    )


def _read_column(blob: bytes, at: int) -> tuple[list[str], list[int], int]:
    (count,) = struct.unpack_from("<Q", blob, at)
    at += 8
    lengths = array("I")
    lengths.frombytes(blob[at : at + 4 * count])
    _little(lengths)
    at += 4 * count
    text = blob[at : at + sum(lengths)].decode()  # UTF-8 as a whole, then cut
    if len(text.encode()) != sum(lengths):
        raise ValueError("a column runs past the ladder's end")
    at += sum(lengths)
    keys = []
    start = 0
    raw = text.encode()
    if raw.isascii():  # the usual case: byte lengths are character lengths
        for length in lengths:
            keys.append(text[start : start + length])
            start += length
    else:
        for length in lengths:
            keys.append(raw[start : start + length].decode())
            start += length
    values = array("q")
    values.frombytes(blob[at : at + 8 * count])
    if len(values) != count or len(lengths) != count:
        raise ValueError("a column runs past the ladder's end")
    at += 8 * count
    return keys, list(_little(values)), at
