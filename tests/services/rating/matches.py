"""Match streams for the rating tests, written to the log as the match service writes them.

A game is played with the engine (seeded, so every run is the same): ``MatchCreated`` then the
engine's events, each in its own batch with the next sequence number. Nothing here imports the
match service: the tests drive ``arena.match.events`` directly, as the contract allows.
"""

from __future__ import annotations

import random
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
from arena_runtime import topics
from arena_runtime.envelope import CODEC, Event, new_id
from arena_runtime.eventlog import EventLog
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime.schemas import maths_warriors as mw_schema

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)


def seat(player_id: str, *, ai: bool = False) -> mw.MatchSeat:
    return mw.MatchSeat(
        player_id=player_id,
        display_name=player_id.upper(),
        kind=mw.SEAT_KIND_AI if ai else mw.SEAT_KIND_HUMAN,
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


def match_events(
    match_id: str,
    seats: tuple[mw.MatchSeat, mw.MatchSeat],
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
            type=CODEC.schemas.type_of(payload),
            payload=payload,
            time=start + timedelta(seconds=number),
            causation_id=f"cmd-{match_id}-{number}",
            batch_id=new_id(),
        )
        for number, payload in enumerate(payloads, start=1)
    ]


async def append(log: EventLog, events: list[Event]) -> None:
    await log.append(topics.MATCH_EVENTS, [CODEC.event_record(e) for e in events])
