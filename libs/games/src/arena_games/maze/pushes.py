"""The Maze's pushes as models (docs/protocol.md, "The Maze"): what its views make, described
once for the protocol's documents and the web client's generated types (:mod:`arena_games.pushes`).

``maze_view`` is one record of a view (:mod:`arena_engine.maze.records`, the format in
docs/rules/maze.md): chunk 0 alone carries ``status`` (and ``opponent`` or ``players``); the cells
and objects follow in the records that have any.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from arena_engine.maze.records import RECORD_VERSION
from pydantic import Field

from arena_games.contract import SeatKind
from arena_games.maze.lobby import SettingsForm
from arena_games.pushes import Push, absent

Phase = Literal["countdown", "playing", "over"]
#: "1" or "2" for a player, "observer".
Role = Literal["1", "2", "observer"]
Exit = Literal["closed", "open", "exited"]
#: A cell's open passages: 1 N, 2 E, 4 S, 8 W.
Passages = Annotated[int, Field(ge=0, le=15)]


class Won(Push):
    winner: int
    reason: str
    at: int


class Drawn(Push):
    draw: Literal[True]
    reason: str
    at: int


Result = Won | Drawn


class SelfStatus(Push):
    """A player's own status (``cell`` null once they left the maze)."""

    cell: int | None
    carrying: int | None
    vision: int
    compass: str | None
    exit: Exit
    result: Result | None


class ObserverStatus(Push):
    result: Result | None


class Opponent(Push):
    cell: int
    carrying: int | None


class SeatStatus(Push):
    cell: int | None
    carrying: int | None
    vision: int
    exit: Exit
    exit_at: int | None


class Players(Push):
    """The observer's view of both seats, by seat number."""

    first: SeatStatus = Field(alias="1")
    second: SeatStatus = Field(alias="2")


class MazeView(Push):
    """One record of a view, at most ``MAX_RECORD_BYTES`` (512) bytes of JSON."""

    type: Literal["maze_view"]
    v: Literal[RECORD_VERSION]  # type: ignore[valid-type]
    seq: int
    role: Role
    phase: Phase
    width: int
    height: int
    meetings: int
    chunk: Annotated[int, Field(ge=0)]
    chunks: Annotated[int, Field(ge=1)]
    status: SelfStatus | ObserverStatus = absent()
    opponent: Opponent = absent()
    #: The observer's: "1" and "2".
    players: Players = absent()
    #: [cell index, open passages]
    cells: list[tuple[int, Passages]] = absent()
    #: [kind, owner (null: anyone's), variant (an exit's outward side), cell]
    objects: list[tuple[str, int | None, str | None, int]] = absent()


class MatchSeat(Push):
    seat: int
    player_id: str
    name: str
    #: The seat's kind (human, ai, scripted), not the player's guest or account.
    kind: SeatKind
    connected: bool
    reconnect_deadline_ms: int | None


class MazeMatch(Push):
    """Who plays, with what settings, and the deadlines (a snapshot's first push)."""

    type: Literal["maze_match"]
    match_id: str
    room_code: str
    mode: str
    sequence: int
    role: Role
    seats: list[MatchSeat]
    settings: SettingsForm
    started_at_ms: int | None
    countdown_end_ms: int | None
    ends_at_ms: int | None
    server_time_ms: int


class MazeRefused(Push):
    """A command of the viewer's the rules refused (its view did not change)."""

    type: Literal["maze_refused"]
    match_id: str
    command_seq: int
    code: str
    t: int


PUSH_MODELS: dict[str, Any] = {
    "maze_match": MazeMatch,
    "maze_view": MazeView,
    "maze_refused": MazeRefused,
}
