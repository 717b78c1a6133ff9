"""The match aggregate: the engine's game state plus seats, presence and the match's deadlines.

``apply`` folds one logged event of a ``match-<id>`` stream into a :class:`MatchState`; it never
decides anything (that is :mod:`arena_match.decide`), so the state after any prefix of the log
is the same in every process that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from arena_engine.maths_warriors import GameState
from arena_engine.maths_warriors import apply as engine_apply
from arena_runtime.envelope import Event
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_runtime.schemas import maths_warriors as schema

from arena_match.clock import ms_of

STREAM_PREFIX = "match-"

#: The state of a game before GameStarted (frozen, so one value serves every match).
NEW_GAME = GameState()

_ENGINE_EVENTS = (
    pb.GameStarted,
    pb.StrengthAttacked,
    pb.MindAttacked,
    pb.TurnSkipped,
    pb.GameEnded,
)


def stream_of(match_id: str) -> str:
    return f"{STREAM_PREFIX}{match_id}"


def match_id_of(stream: str) -> str | None:
    return stream[len(STREAM_PREFIX) :] if stream.startswith(STREAM_PREFIX) else None


@dataclass(frozen=True, slots=True)
class Seat:
    player_id: str
    display_name: str
    ai_level: str | None = None  # None: a human seat

    @property
    def is_ai(self) -> bool:
        return self.ai_level is not None


@dataclass(frozen=True, slots=True)
class MatchState:
    """One match as folded from its stream. ``created`` is False before MatchCreated."""

    created: bool = False
    seats: tuple[Seat, ...] = ()
    game: GameState = NEW_GAME
    #: Reconnect deadline (ms) of each seat, None while connected.
    reconnect_deadlines: tuple[int | None, int | None] = (None, None)
    #: Server time (ms) of the last game event: the AI's think time counts from it.
    turn_started_ms: int = 0
    reconnect_ms: int = 30_000
    ai_think_ms: int = 700
    #: A finished match whose history the service dropped from memory (see MatchRunner.evict).
    evicted: bool = False

    @property
    def over(self) -> bool:
        return self.evicted or self.game.over

    def seat_of(self, player_id: str) -> int | None:
        """The seat (1 or 2) of a player, or None if they do not play in this match."""
        for number, seat in enumerate(self.seats, start=1):
            if seat.player_id == player_id and player_id:
                return number
        return None

    def seat(self, number: int) -> Seat:
        return self.seats[number - 1]


#: The state of a finished match after eviction: enough to refuse every later command.
EVICTED = MatchState(created=True, evicted=True)


def initial(stream: str) -> MatchState:
    return MatchState()


def _seat(message: pb.MatchSeat) -> Seat:
    level = schema.AI_LEVELS.get(message.ai_level) if message.kind == pb.SEAT_KIND_AI else None
    return Seat(message.player_id, message.display_name, level)


def _with_deadline(state: MatchState, seat: int, deadline: int | None) -> MatchState:
    deadlines = list(state.reconnect_deadlines)
    deadlines[seat - 1] = deadline
    return replace(state, reconnect_deadlines=(deadlines[0], deadlines[1]))


def apply(state: MatchState, event: Event) -> MatchState:
    payload = event.payload
    if isinstance(payload, pb.MatchCreated):
        return MatchState(
            created=True,
            seats=tuple(_seat(s) for s in payload.seats),
            reconnect_ms=payload.reconnect_ms,
            ai_think_ms=payload.ai_think_ms,
        )
    if isinstance(payload, _ENGINE_EVENTS):
        game = engine_apply(state.game, schema.event_from_proto(payload))
        state = replace(state, game=game, turn_started_ms=ms_of(event.time))
        if game.over:
            state = replace(state, reconnect_deadlines=(None, None))
        return state
    if isinstance(payload, pb.PlayerDisconnected):
        return _with_deadline(state, payload.seat, payload.reconnect_deadline_ms)
    if isinstance(payload, pb.PlayerReconnected):
        return _with_deadline(state, payload.seat, None)
    return state  # a later schema's event this version does not know: nothing to fold
