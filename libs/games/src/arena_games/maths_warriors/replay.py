"""A Maths Warriors match's replay for the read API: the game after each of its events.

``GET /v1/matches/{id}/replay`` answers with it (the module's ``replay``), folded with the rules
from the events the ``match_index`` projection stored
(:func:`arena_runtime.readmodels.queries.match_record`).
"""

from __future__ import annotations

from collections.abc import Sequence

from arena_engine.maths_warriors import DICE, GameState
from arena_runtime.envelope import CODEC, Codec
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.readmodels.queries import MatchRecord, MatchSeat, match_record
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from arena_games.contract import unpack
from arena_games.maths_warriors import wire
from arena_games.maths_warriors.rules import fold
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb


class DieView(BaseModel):
    die: str = Field(examples=["D12"])
    value: int | None = Field(description="null once captured")


class ReplayState(BaseModel):
    """The game after one event (the engine's fold)."""

    sequence: int
    type: str
    status: str
    to_move: int
    move_count: int
    dice1: list[DieView]
    dice2: list[DieView]
    winner: int | None
    win_reason: str | None = Field(description="all_captured, timeout or forfeit once over")


class Replay(BaseModel):
    match_id: str
    seats: list[MatchSeat]
    states: list[ReplayState]


def _dice(values: Sequence[int | None]) -> list[DieView]:
    return [DieView(die=die.value, value=value) for die, value in zip(DICE, values, strict=False)]


def replay(record: MatchRecord) -> Replay:
    """The game's state after each of its game events (legacy ``GameEnded`` or the
    ``MatchEnded`` carrying it, whichever the codec read)."""
    state = GameState()
    states: list[ReplayState] = []
    for event in record.events:
        payload = event.payload
        if isinstance(payload, match_pb2.MatchEnded):
            payload = unpack(payload.detail, pb.GameEnded)
        if not isinstance(payload, wire.GAME_EVENTS):
            continue
        state = fold(state, payload)
        states.append(
            ReplayState(
                sequence=event.sequence,
                # The game's own event, as the client draws it: the end is its GameEnded,
                # whether the log wrote it alone (before the seam) or inside MatchEnded.
                type=wire.type_name(type(payload)),
                status=state.status.value,
                to_move=state.to_move,
                move_count=state.move_count,
                dice1=_dice(state.dice1),
                dice2=_dice(state.dice2),
                winner=state.winner,
                win_reason=(
                    wire.PROTOCOL_REASON[state.win_reason.value] if state.win_reason else None
                ),
            )
        )
    return Replay(match_id=record.match_id, seats=record.seats, states=states)


async def match_replay(session: AsyncSession, match_id: str, codec: Codec = CODEC) -> Replay | None:
    """The replay of a match; None for an unknown match."""
    record = await match_record(session, match_id, codec)
    return None if record is None else replay(record)
