"""The match aggregate, whatever the game: its MatchOpened, presence, and the game's own state.

``apply`` folds one logged event of a ``match-<id>`` stream into a :class:`MatchState`; it never
decides anything (that is :mod:`arena_match.decide`), so the state after any prefix of the log
is the same in every process that reads it. The game is the one MatchOpened names, found in the
registry (:mod:`arena_games.registry`); its events, the presence events and the final event
inside MatchEnded are folded by its ``rules.apply``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from arena_games.contract import (
    CASUAL,
    GameModule,
    MatchInfo,
    Presence,
    Seat,
    ServiceSettings,
    Table,
    match_id_of,
    match_stream,
    unpack,
)
from arena_games.registry import STANDARD, Registry
from arena_runtime.envelope import Event
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.schemas import match as match_schemas
from google.protobuf.message import Message

from arena_match.clock import ms_of

STREAM_PREFIX = "match-"
#: Every mode a game may name (arena_runtime.schemas.match): Digits has seven.
MODE_NAMES = match_schemas.MODE_NAMES
MODES = match_schemas.MODES

stream_of = match_stream

__all__ = ["EVICTED", "MatchState", "apply", "initial", "match_id_of", "stream_of"]


@dataclass(frozen=True, slots=True)
class MatchState:
    """One match as folded from its stream. ``created`` is False before MatchOpened."""

    created: bool = False
    info: MatchInfo | None = None
    #: The game's module (by the name MatchOpened records) and its own state.
    module: GameModule[Any] | None = None
    game: Any = None
    service: ServiceSettings = field(default_factory=ServiceSettings)
    #: (seat, reconnect deadline ms) of each seat whose player is away, by seat.
    away: tuple[tuple[int, int], ...] = ()
    #: True once MatchEnded is folded.
    ended: bool = False
    #: A finished match whose history the service dropped from memory (see MatchRunner.evict).
    evicted: bool = False

    @property
    def over(self) -> bool:
        return self.evicted or self.ended

    @property
    def seats(self) -> tuple[Seat, ...]:
        return self.info.seats if self.info is not None else ()

    def seat_of(self, player_id: str) -> int | None:
        """The seat of a player, or None if they do not play in this match."""
        return self.info.seat_of(player_id) if self.info is not None else None

    def seat(self, number: int) -> Seat:
        return self.seats[number - 1]

    def away_until(self, seat: int) -> int | None:
        for number, deadline in self.away:
            if number == seat:
                return deadline
        return None

    @property
    def presence(self) -> Presence:
        return self.module.rules.reconnect.presence if self.module is not None else Presence.NONE

    @property
    def reconnect_ms(self) -> int:
        """The reconnect window of this match: the game's own, else the service's."""
        window = self.module.rules.reconnect.window_ms if self.module is not None else None
        return self.service.reconnect_ms if window is None else window

    def table(self, sequence: int = 0) -> Table:
        """The match as the game's views see it."""
        assert self.info is not None
        return Table(
            self.info.match_id,
            self.info.game,
            self.info.seats,
            self.info.mode,
            self.info.room_code,
            dict(self.away),
            sequence,
        )


#: The state of a finished match after eviction: enough to refuse every later command.
EVICTED = MatchState(created=True, ended=True, evicted=True)


def initial(stream: str) -> MatchState:
    return MatchState()


def info_of(opened: match_pb2.MatchOpened | match_pb2.StartMatch) -> MatchInfo:
    """The match a MatchOpened (or a StartMatch) describes; a bad seat raises ValueError."""
    return MatchInfo(
        opened.match_id,
        opened.game,
        tuple(Seat.from_proto(n, seat) for n, seat in enumerate(opened.seats, start=1)),
        MODE_NAMES.get(opened.mode, CASUAL),
        opened.room_code,
    )


def opened_state(opened: match_pb2.MatchOpened, registry: Registry = STANDARD) -> MatchState:
    """The state of a match just opened, before the game's opening events."""
    module = registry.find(opened.game)
    info = info_of(opened)
    settings = unpack(opened.settings, module.wire.settings)
    service = ServiceSettings(opened.service.reconnect_ms, opened.service.ai_think_ms)
    game = module.rules.initial(info, settings, service)
    return MatchState(created=True, info=info, module=module, game=game, service=service)


def final_of(state: MatchState, ended: match_pb2.MatchEnded) -> Message:
    """The game's own final event inside a MatchEnded."""
    assert state.module is not None
    return unpack(ended.detail, state.module.wire.final)


def fold(
    state: MatchState, payload: Message, time_ms: int, registry: Registry = STANDARD
) -> MatchState:
    """The state after one event's payload, written at ``time_ms``."""
    if isinstance(payload, match_pb2.MatchOpened):
        return opened_state(payload, registry)
    module = state.module
    if module is None:
        return state  # an evicted match, or an event before its opening: nothing to fold
    if isinstance(payload, match_pb2.MatchEnded):
        game = module.rules.apply(state.game, final_of(state, payload), time_ms)
        return replace(state, game=game, ended=True, away=())
    if isinstance(payload, match_pb2.PlayerDisconnected):
        others = tuple(a for a in state.away if a[0] != payload.seat)
        away = tuple(sorted((*others, (payload.seat, payload.reconnect_deadline_ms))))
        state = replace(state, away=away)
    elif isinstance(payload, match_pb2.PlayerReconnected):
        state = replace(state, away=tuple(a for a in state.away if a[0] != payload.seat))
    return replace(state, game=module.rules.apply(state.game, payload, time_ms))


def apply(state: MatchState, event: Event) -> MatchState:
    return fold(state, event.payload, ms_of(event.time))
