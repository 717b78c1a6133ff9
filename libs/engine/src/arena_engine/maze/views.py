"""Each role's view of a match, rebuilt from zero from the position every time.

A player sees the cells within Chebyshev radius 3 of their cell (6 while their vision counter is
above 0), clipped by the map and not occluded by walls, the objects lying on those cells, the
opponent only while standing on one of them, and their own status. An observer sees every cell,
every object still in the maze, both players and the public result.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import NamedTuple, TypeAlias

from .commands import Role
from .errors import ErrorCode, MazeError
from .geometry import window
from .layout import Setup
from .settings import NORMAL_RADIUS, VISION_RADIUS
from .state import MazeState, PlayerState, Position, Result


class ViewObject(NamedTuple):
    """An object as a view shows it. ``variant`` is an exit's outward side, else None."""

    kind: str
    owner: int | None
    variant: str | None
    cell: int


@dataclass(frozen=True, slots=True)
class SelfStatus:
    cell: int | None  # None once the player has left the maze
    carrying: int | None
    vision: int
    compass: str | None
    exit: str  # closed, open or exited
    result: Result | None


@dataclass(frozen=True, slots=True)
class Opponent:
    cell: int
    carrying: int | None


@dataclass(frozen=True, slots=True)
class SeatStatus:
    cell: int | None
    carrying: int | None
    vision: int
    exit: str  # closed, open or exited
    exit_at: int | None  # the authoritative exit time


@dataclass(frozen=True, slots=True)
class PlayerView:
    state_seq: int
    player: int
    phase: str
    width: int
    height: int
    meetings: int
    cells: tuple[tuple[int, int], ...]  # (cell index, passage flags), by index
    objects: tuple[ViewObject, ...]  # by cell, kind, owner (None first)
    status: SelfStatus
    opponent: Opponent | None  # None while the opponent is not on one of the cells

    @property
    def role(self) -> str:
        return str(self.player)


@dataclass(frozen=True, slots=True)
class ObserverView:
    state_seq: int
    phase: str
    width: int
    height: int
    meetings: int
    cells: tuple[tuple[int, int], ...]
    objects: tuple[ViewObject, ...]
    players: tuple[SeatStatus, SeatStatus]
    result: Result | None

    @property
    def role(self) -> str:
        return "observer"


View: TypeAlias = PlayerView | ObserverView


def object_order(obj: ViewObject) -> tuple[int, str, int]:
    return (obj.cell, obj.kind, 0 if obj.owner is None else obj.owner)


def _objects(setup: Setup, pos: Position) -> list[ViewObject]:
    """Every object still in the maze: ground keys, compasses, exits, unconsumed artifacts."""
    out: list[ViewObject] = []
    for obj in setup.objects:
        if obj.kind == "key" or (obj.kind == "vision" and obj.cell not in pos.artifacts):
            continue
        out.append(ViewObject(obj.kind, obj.owner, obj.dir, obj.cell))
    for owner, key in enumerate(pos.keys, 1):
        if key.cell is not None:
            out.append(ViewObject("key", owner, None, key.cell))
    return out


def radius_of(player: PlayerState) -> int:
    return VISION_RADIUS if player.vision > 0 else NORMAL_RADIUS


def player_view(state: MazeState, player: int) -> PlayerView:
    setup, pos = state.setup, state.position
    me = pos.player(player)
    w = setup.width
    # An exited player goes on seeing the square around the cell they left by.
    centre = me.cell if me.cell is not None else setup.exit_of(player)[0]
    x0, y0, x1, y1 = window(w, setup.height, centre, radius_of(me))
    rows = setup.indexed_cells
    cells = tuple(chain.from_iterable(rows[y * w + x0 : y * w + x1 + 1] for y in range(y0, y1 + 1)))
    inside = [o for o in _objects(setup, pos) if x0 <= o.cell % w <= x1 and y0 <= o.cell // w <= y1]
    inside.sort(key=object_order)
    them = pos.player(3 - player)
    opponent = None
    if them.cell is not None and x0 <= them.cell % w <= x1 and y0 <= them.cell // w <= y1:
        opponent = Opponent(them.cell, pos.carrying(3 - player))
    status = SelfStatus(
        me.cell, pos.carrying(player), me.vision, me.compass, me.exit_status, pos.result
    )
    return PlayerView(
        pos.state_seq,
        player,
        pos.phase,
        w,
        setup.height,
        pos.meetings,
        cells,
        tuple(inside),
        status,
        opponent,
    )


def observer_view(state: MazeState) -> ObserverView:
    setup, pos = state.setup, state.position
    seats = tuple(
        SeatStatus(p.cell, pos.carrying(n), p.vision, p.exit_status, p.exited_at)
        for n, p in enumerate(pos.players, 1)
    )
    return ObserverView(
        pos.state_seq,
        pos.phase,
        setup.width,
        setup.height,
        pos.meetings,
        setup.indexed_cells,
        tuple(sorted(_objects(setup, pos), key=object_order)),
        (seats[0], seats[1]),
        pos.result,
    )


def project(state: MazeState, role: Role | str) -> View:
    """The view of ``role``: 1, 2 (or "1", "2") or "observer"."""
    if role in (1, "1"):
        return player_view(state, 1)
    if role in (2, "2"):
        return player_view(state, 2)
    if role == "observer":
        return observer_view(state)
    raise MazeError(ErrorCode.BAD_COMMAND, f"no role {role!r}")
