"""Match streams for the rating tests, written to the log as the match service writes them.

A game is played with the engine (seeded, so every run is the same): ``MatchCreated`` then the
engine's events, each in its own batch with the next sequence number. Nothing here imports the
match service: the tests drive ``arena.match.events`` directly, as the contract allows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from arena_engine.maths_warriors import (
    DICE,
    Context,
    Forfeit,
    GameClockExpiry,
    GameState,
    Rejection,
    Skip,
    Start,
    Strength,
    apply,
    decide,
)
from arena_engine.maths_warriors import Event as EngineEvent
from arena_games.maths_warriors import wire as mw_schema
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime import topics
from arena_runtime.envelope import Codec, Event, Schemas, new_id
from arena_runtime.eventlog import EventLog
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas import match as match_schemas

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)


def seat(player_id: str, *, ai: bool = False) -> match_pb2.MatchSeat:
    return match_pb2.MatchSeat(
        player_id=player_id,
        display_name=player_id.upper(),
        kind=match_pb2.SEAT_KIND_AI if ai else match_pb2.SEAT_KIND_HUMAN,
    )


def play(rng: random.Random, *, max_moves: int = 12) -> list[EngineEvent]:
    """A seeded game: random legal Strength attacks or skips, ended by capture, clock or
    forfeit."""
    state = GameState()
    events: list[EngineEvent] = []
    now = 0

    def do(command: object) -> None:
        nonlocal state, now
        now += 1000
        decided = decide(state, command, Context(now_ms=now, seed=rng.getrandbits(32)))
        assert not isinstance(decided, Rejection), decided
        for event in decided:
            state = apply(state, event)
            events.append(event)

    do(Start())
    for _ in range(max_moves):
        if state.over:
            return events
        mover = state.to_move
        legal = []
        for attacker in DICE:
            for target in DICE:
                move = Strength(mover, (attacker.value,), target.value)
                if not isinstance(decide(state, move, Context(now_ms=now)), Rejection):
                    legal.append(move)
        do(rng.choice(legal) if legal and rng.random() < 0.8 else Skip(mover))
    if not state.over:
        assert state.game_deadline_ms is not None
        end = rng.choice(["forfeit", "clock"])
        if end == "forfeit":
            do(Forfeit(rng.choice((1, 2))))
        else:
            now = state.game_deadline_ms
            do(GameClockExpiry(state.game_deadline_ms))
    return events


def legacy_codec() -> Codec:
    """A codec that writes Maths Warriors' match records as they were written before the game
    seam (``MatchCreated`` and ``GameEnded`` types of their own), which the services read
    through the seam as ``MatchOpened`` and ``MatchEnded``: these tests rate a log of that era."""
    schemas = Schemas()
    match_schemas.register(schemas)
    schemas.add_messages((mw.MatchCreated, *mw_schema.EVENTS))
    return Codec(schemas)


LEGACY = legacy_codec()


def match_events(
    match_id: str,
    seats: tuple[match_pb2.MatchSeat, match_pb2.MatchSeat],
    mode: int,
    game: list[EngineEvent],
    start: datetime = T0,
) -> list[Event]:
    """The envelopes of one match stream: MatchCreated, then each engine event."""
    stream = f"match-{match_id}"
    created = mw.MatchCreated(match_id=match_id, seats=seats, mode=mode, game_seconds=720)
    payloads: list[object] = [created]
    for event in game:
        winner_id = ""
        if isinstance(event, mw_schema.GameEnded):
            winner_id = seats[event.winner - 1].player_id
        payloads.append(mw_schema.event_to_proto(event, winner_player_id=winner_id))
    return [
        Event(
            event_id=new_id(),
            stream=stream,
            sequence=number,
            type=LEGACY.schemas.type_of(payload),
            payload=payload,
            time=start + timedelta(seconds=number),
            causation_id=f"cmd-{match_id}-{number}",
            batch_id=new_id(),
        )
        for number, payload in enumerate(payloads, start=1)
    ]


async def append(log: EventLog, events: list[Event]) -> None:
    await log.append(topics.MATCH_EVENTS, [LEGACY.event_record(e) for e in events])


@dataclass(frozen=True)
class Sides:
    """A two-seat result (version 2 of the rating payloads) read as winner and loser."""

    winner: pb.LadderPlayer
    loser: pb.LadderPlayer
    winner_before: int = 0
    winner_after: int = 0
    loser_before: int = 0
    loser_after: int = 0

    @property
    def delta(self) -> int:
        return self.winner_after - self.winner_before


def sides(payload: pb.RateMatch | pb.MatchRated | pb.MatchRecorded) -> Sides:
    """The winner (ranked 1) and the loser of a two-seat result, with their ratings if rated."""
    if isinstance(payload, pb.MatchRated):
        rated = sorted(payload.seats, key=lambda s: s.player.rank)
        assert [s.player.rank for s in rated] == [1, 2]
        won, lost = rated
        return Sides(won.player, lost.player, won.before, won.after, lost.before, lost.after)
    seats = sorted(payload.seats, key=lambda s: s.rank)
    assert [s.rank for s in seats] == [1, 2]
    return Sides(seats[0], seats[1])
