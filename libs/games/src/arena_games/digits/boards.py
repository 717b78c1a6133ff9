"""Digits' boards on the read side, made at query time from what the read models hold of each
game (its index row, seat and events read through the seam): the daily leaderboard with its
podium (``leaderboards.daily_leaderboard``: wins, fewer losses, margin, the earliest finish) and
a room's standings (``leaderboards.room_standings``: wins, fewer losses (missed rounds
included), margin). A voided game is left out of both.

A game's line is folded from its events: ``RoundsMissed`` (losses), each ``CombatFought`` (a win,
a loss or a draw, and its margin), ``GameVoided``, and the final ``DigitsEnded`` (the record, the
status and, by its time, the finish).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from arena_engine.digits import paris
from arena_engine.digits.combat import LOSS, WIN
from arena_engine.digits.leaderboards import (
    DAILY_PODIUM,
    DailyEntry,
    RoomEntry,
    daily_game_counts,
    daily_leaderboard,
    room_standings,
)
from arena_runtime.readmodels.queries import MatchRecord
from pydantic import BaseModel, Field

from arena_games.digits import wire
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

DAY_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"


@dataclass(frozen=True, slots=True)
class Line:
    """One game as a board reads it."""

    match_id: str
    player_id: str
    display_name: str
    wins: int = 0
    losses: int = 0
    margin: int = 0
    combats: int = 0
    status: str = "playing"
    finished_ms: int | None = None
    voided: bool = False


def line_of(record: MatchRecord) -> Line:
    seat = record.seats[0] if record.seats else None
    wins = losses = margin = combats = 0
    status, finished, voided = "playing", None, False
    for event in record.events:
        payload = wire.unwrapped(event.payload)
        if isinstance(payload, pb.RoundsMissed):
            losses += payload.count
        elif isinstance(payload, pb.CombatFought):
            combats += 1
            wins += payload.result == WIN
            losses += payload.result == LOSS
            margin += payload.margin
        elif isinstance(payload, pb.GameVoided):
            voided = True
        elif isinstance(payload, pb.DigitsEnded):
            wins, losses, margin = payload.wins, payload.losses, payload.margin
            status, voided = payload.status, voided or payload.voided
            finished = int(event.time.timestamp() * 1000)
    return Line(
        record.match_id,
        seat.player_id if seat else "",
        seat.display_name if seat else "",
        wins,
        losses,
        margin,
        combats,
        status,
        finished,
        voided,
    )


class DailyPlace(BaseModel):
    place: int = Field(description="1 for the best; the very same line shares a place")
    player_id: str
    display_name: str
    match_id: str
    wins: int
    losses: int
    margin: int = Field(description="HP left minus the opponent's, summed over the combats")
    finished: datetime | None = Field(description="When the game ended; null: still playing")


class DailyBoard(BaseModel):
    game: str
    day: str = Field(description="The Paris day, YYYY-MM-DD")
    places: list[DailyPlace]
    podium: list[DailyPlace] = Field(description="Places 1 to 3 (ties share them; no credits)")


class RoomPlace(BaseModel):
    place: int = Field(description="1 for the best; the same line shares a place")
    player_id: str
    display_name: str
    match_id: str
    wins: int
    losses: int = Field(description="Missed rounds included")
    margin: int
    over: bool = Field(description="Whether the player's game has ended")


class RoomStandings(BaseModel):
    game: str
    code: str
    places: list[RoomPlace]


def _time(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def _listed(line: Line) -> bool:
    """A counted daily game stays listed unless voided, forfeited, or stopped (or still
    playing) before its first combat."""
    if line.voided:
        return False
    return daily_game_counts(line.status, line.combats)


class DigitsBoards:
    daily_model = DailyBoard
    room_model = RoomStandings

    def day_bounds(self, day: str) -> tuple[int, int]:
        year, month, date = (int(part) for part in day.split("-"))
        start = paris.midnight_ms(year, month, date)
        if paris.day_key(start) != day:  # 2026-02-30
            raise ValueError(f"no day {day}")
        return start, paris.next_midnight_ms(start)

    def daily(self, day: str, records: Sequence[MatchRecord]) -> DailyBoard:
        # One counted game a player a day; were there two, the first started is the one.
        latest_first = sorted(
            records, key=lambda r: (r.row["created_at_ms"], r.match_id), reverse=True
        )
        lines = {line.player_id: line for line in map(line_of, latest_first)}
        lines = {player: line for player, line in lines.items() if _listed(line)}
        placed = daily_leaderboard(
            DailyEntry(p, line.wins, line.losses, line.margin, line.finished_ms)
            for p, line in lines.items()
        )
        places = [
            DailyPlace(
                place=row.place,
                player_id=row.entry.player,
                display_name=lines[row.entry.player].display_name,
                match_id=lines[row.entry.player].match_id,
                wins=row.entry.wins,
                losses=row.entry.losses,
                margin=row.entry.margin,
                finished=_time(row.entry.finished_ms),
            )
            for row in placed
        ]
        podium = [p for p in places if p.place <= DAILY_PODIUM]
        return DailyBoard(game=wire.GAME, day=day, places=places, podium=podium)

    def room(self, code: str, records: Sequence[MatchRecord]) -> RoomStandings:
        lines = {line.player_id: line for line in map(line_of, records) if not line.voided}
        placed = room_standings(
            RoomEntry(p, line.wins, line.losses, line.margin) for p, line in lines.items()
        )
        return RoomStandings(
            game=wire.GAME,
            code=code,
            places=[
                RoomPlace(
                    place=row.place,
                    player_id=row.entry.player,
                    display_name=lines[row.entry.player].display_name,
                    match_id=lines[row.entry.player].match_id,
                    wins=row.entry.wins,
                    losses=row.entry.losses,
                    margin=row.entry.margin,
                    over=lines[row.entry.player].finished_ms is not None,
                )
                for row in placed
            ],
        )


BOARDS = DigitsBoards()
