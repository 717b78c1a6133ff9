"""Disposable folds of the match streams the gateway's clients watch.

The match service is the authority; the gateway only folds what it reads from the log with the
same engine, to answer a snapshot (dice, who is on move, clocks, seats, presence) without asking
anyone. A fold can be thrown away and rebuilt from the log at any time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena_engine import maths_warriors as mw
from arena_runtime.envelope import Event
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_runtime.schemas import maths_warriors as mws
from arena_runtime.streams import REJECTED_TYPE, is_next

MATCH_PREFIX = "match-"
type_name = mws.type_name

MATCH_CREATED = type_name(pb.MatchCreated)
GAME_STARTED = type_name(pb.GameStarted)
STRENGTH_ATTACKED = type_name(pb.StrengthAttacked)
MIND_ATTACKED = type_name(pb.MindAttacked)
TURN_SKIPPED = type_name(pb.TurnSkipped)
GAME_ENDED = type_name(pb.GameEnded)
PLAYER_DISCONNECTED = type_name(pb.PlayerDisconnected)
PLAYER_RECONNECTED = type_name(pb.PlayerReconnected)
ENGINE_EVENTS = frozenset(
    {GAME_STARTED, STRENGTH_ATTACKED, MIND_ATTACKED, TURN_SKIPPED, GAME_ENDED}
)


@dataclass(frozen=True, slots=True)
class Seat:
    player_id: str
    name: str
    kind: str  # "human" or "ai"
    level: str = ""


@dataclass
class MatchView:
    """One match as folded so far."""

    match_id: str
    seats: tuple[Seat, ...] = ()
    preview: bool = False
    room_code: str = ""
    mode: str = "casual"
    game: mw.GameState = field(default_factory=mw.GameState)
    #: Seat -> reconnect deadline (ms) while that seat's player is disconnected.
    away: dict[int, int] = field(default_factory=dict)
    sequence: int = 0
    batch_id: str = ""
    #: Command id -> the events it caused (or its rejection), for answering repeated messages.
    answers: dict[str, list[Event]] = field(default_factory=dict)

    @property
    def stream(self) -> str:
        return MATCH_PREFIX + self.match_id

    def seat_of(self, player_id: str) -> int | None:
        for number, seat in enumerate(self.seats, start=1):
            if seat.player_id == player_id:
                return number
        return None

    def observe(self, event: Event) -> bool:
        """Fold one event by the reading rule; False if it is not the stream's next one."""
        if not is_next(event, self.sequence, self.batch_id):
            return False
        self.sequence, self.batch_id = event.sequence, event.batch_id
        if event.causation_id:
            self.answers.setdefault(event.causation_id, []).append(event)
        if event.type != REJECTED_TYPE:
            self._apply(event.type, event.payload)
        return True

    def _apply(self, type_: str, payload: Any) -> None:
        if type_ == MATCH_CREATED:
            self.seats = tuple(_seat(s) for s in payload.seats)
            self.preview = payload.preview
            self.room_code = payload.room_code
            self.mode = "ranked" if payload.mode == pb.MATCH_MODE_RANKED else "casual"
        elif type_ == PLAYER_DISCONNECTED:
            self.away[payload.seat] = payload.reconnect_deadline_ms
        elif type_ == PLAYER_RECONNECTED:
            self.away.pop(payload.seat, None)
        else:
            engine_event = to_engine_event(type_, payload)
            if engine_event is not None:
                self.game = mw.apply(self.game, engine_event)
                if isinstance(engine_event, mw.GameEnded):
                    self.away.clear()

    def snapshot(self, now_ms: int) -> dict[str, Any]:
        """The full state a client needs to draw the game."""
        game = self.game
        return {
            "match_id": self.match_id,
            "room_code": self.room_code,
            "mode": self.mode,
            "preview": self.preview,
            "sequence": self.sequence,
            "status": game.status.value,
            "seats": [
                {
                    "seat": number,
                    "player_id": seat.player_id,
                    "name": seat.name,
                    "kind": seat.kind,
                    "connected": number not in self.away,
                    "reconnect_deadline_ms": self.away.get(number),
                }
                for number, seat in enumerate(self.seats, start=1)
            ],
            "dice": {"1": dice_dict(game.dice1), "2": dice_dict(game.dice2)},
            "first": game.first,
            "to_move": game.to_move,
            "move_count": game.move_count,
            "winner": game.winner,
            "win_reason": _protocol_reason(game.win_reason),
            "rules": game.ruleset.to_dict(),
            "clocks": self.clocks(now_ms),
        }

    def clocks(self, now_ms: int) -> dict[str, Any]:
        game = self.game
        playing = game.status is mw.Status.PLAYING
        return {
            "server_time_ms": now_ms,
            "game_seconds": game.clocks.game_seconds,
            "move_seconds": game.clocks.move_seconds,
            "game_remaining_ms": _remaining(game.game_deadline_ms, now_ms) if playing else None,
            "move_remaining_ms": _remaining(game.move_deadline_ms, now_ms) if playing else None,
            "game_deadline_ms": game.game_deadline_ms,
            "move_deadline_ms": game.move_deadline_ms,
        }


def _remaining(deadline: int | None, now_ms: int) -> int | None:
    return None if deadline is None else max(0, deadline - now_ms)


def _protocol_reason(reason: mw.WinReason | None) -> str | None:
    if reason is None:
        return None
    return "timeout" if reason is mw.WinReason.GAME_CLOCK else reason.value


def dice_dict(dice: tuple[int | None, ...]) -> dict[str, int | None]:
    return {die.value: value for die, value in zip(mw.DICE, dice, strict=False)}


def _seat(seat: Any) -> Seat:
    kind = "ai" if seat.kind == pb.SEAT_KIND_AI else "human"
    return Seat(seat.player_id, seat.display_name, kind, mws.AI_LEVELS.get(seat.ai_level, ""))


def to_engine_event(type_: str, payload: Any) -> mw.Event | None:
    """The engine's event for a match event's payload; None for the match's own events."""
    if type_ in ENGINE_EVENTS:
        return mws.event_from_proto(payload)
    return None
