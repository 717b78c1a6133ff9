"""The yard as flat tables: cells are ``y * 24 + x``; zones and the seeded spawner layout."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Final

from arena_engine.matrix_games.constants import BOARD_H, BOARD_W, CELLS, DIR_DX, DIR_DY, WALLS
from arena_engine.matrix_games.rng import Pcg32


def cell_of(x: int, y: int) -> int:
    return y * BOARD_W + x


def is_wall(x: int, y: int) -> bool:
    """Out of bounds counts as wall."""
    if x < 0 or y < 0 or x >= BOARD_W or y >= BOARD_H:
        return True
    return WALLS[y][x] == "#"


#: Column and row of every cell index.
CELL_X: Final = tuple(c % BOARD_W for c in range(CELLS))
CELL_Y: Final = tuple(c // BOARD_W for c in range(CELLS))
#: True for floor cells.
FLOOR: Final = tuple(not is_wall(CELL_X[c], CELL_Y[c]) for c in range(CELLS))
#: Free cells, row-major (y outer, x inner).
FLOOR_CELLS: Final = tuple(c for c in range(CELLS) if FLOOR[c])


def _neighbours(c: int) -> tuple[int, int, int, int]:
    x, y = CELL_X[c], CELL_Y[c]
    out = []
    for d in range(4):
        nx, ny = x + DIR_DX[d], y + DIR_DY[d]
        out.append(-1 if is_wall(nx, ny) else cell_of(nx, ny))
    return out[0], out[1], out[2], out[3]


#: NEIGHBOURS[cell] = (N, E, S, W) floor neighbour cells, -1 where the neighbour is a wall.
NEIGHBOURS: Final = tuple(_neighbours(c) for c in range(CELLS))

MAX_BEAM_RANGE: Final = 8


def _ray(c: int, d: int) -> tuple[int, ...]:
    x, y = CELL_X[c], CELL_Y[c]
    out = []
    for _ in range(MAX_BEAM_RANGE):
        x += DIR_DX[d]
        y += DIR_DY[d]
        if is_wall(x, y):
            break
        out.append(cell_of(x, y))
    return tuple(out)


#: RAYS[cell][dir]: the cells along dir up to the longest beam, stopping before the first wall.
RAYS: Final = tuple(tuple(_ray(c, d) for d in range(4)) for c in range(CELLS))


def chebyshev(a: int, b: int) -> int:
    return max(abs(CELL_X[a] - CELL_X[b]), abs(CELL_Y[a] - CELL_Y[b]))


@dataclass(frozen=True, slots=True)
class Zone:
    """An inclusive rectangle; ``token`` is -1 for the mixed band."""

    token: int
    x0: int
    y0: int
    x1: int
    y1: int
    cx: int
    cy: int
    spawners: int

    def contains(self, x: int, y: int) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1

    def pool(self) -> list[int]:
        """The rectangle's floor cells, row-major: the pool the RNG shuffles."""
        return [
            cell_of(x, y)
            for y in range(self.y0, self.y1 + 1)
            for x in range(self.x0, self.x1 + 1)
            if not is_wall(x, y)
        ]


ZONE_A: Final = Zone(0, 1, 1, 7, 5, 4, 3, 16)
ZONE_B: Final = Zone(1, 16, 1, 22, 5, 19, 3, 16)
ZONE_C: Final = Zone(2, 8, 8, 15, 12, 11, 10, 16)
MIXED_Y0: Final = 6
MIXED_ZONE: Final = Zone(-1, 1, MIXED_Y0, 22, 7, BOARD_W // 2, MIXED_Y0, 12)
#: Where a token with no zone would gather; unreachable with the seven variants.
FALLBACK_CENTRE: Final = (BOARD_W // 2, BOARD_H // 2)


def zones_for(k: int) -> tuple[Zone, ...]:
    """Zones in observation and draw order: A, B, (C when K = 3), mixed."""
    return (ZONE_A, ZONE_B, ZONE_C, MIXED_ZONE) if k >= 3 else (ZONE_A, ZONE_B, MIXED_ZONE)


def zone_centre(k: int, token: int) -> tuple[int, int]:
    for zone in zones_for(k):
        if zone.token == token:
            return zone.cx, zone.cy
    return FALLBACK_CENTRE


@dataclass(frozen=True, slots=True)
class Spawner:
    x: int
    y: int
    token: int

    @property
    def cell(self) -> int:
        return cell_of(self.x, self.y)


def draw_spawners(seed: int, k: int) -> tuple[Spawner, ...]:
    """The seeded spawner layout, in ``spawners[]`` order (zone A, B, (C), then the mixed band).

    Each zone shuffles its row-major floor cells with Fisher-Yates (j = below(i + 1), from the
    last index down to 1), keeps the first ``count`` and sorts them by (y, x). The n-th mixed
    spawner in sorted order carries token n mod K.
    """
    rng = Pcg32(seed)
    out: list[Spawner] = []
    for zone in zones_for(k):
        pool = zone.pool()
        for i in range(len(pool) - 1, 0, -1):
            j = rng.below(i + 1)
            pool[i], pool[j] = pool[j], pool[i]
        chosen = sorted(pool[: zone.spawners])  # cell order is (y, x) order
        for n, c in enumerate(chosen):
            token = zone.token if zone.token >= 0 else n % k
            out.append(Spawner(CELL_X[c], CELL_Y[c], token))
    return tuple(out)


@cache
def token_candidates(origin: int, token: int) -> tuple[int, ...]:
    """Every cell that can hold a spawner of ``token`` (its zone and the mixed band), sorted
    by Chebyshev distance from ``origin``, then (y, x). The first of them holding a token of
    that type is the nearest token; the order does not depend on the seed."""
    zones = [z for z in (ZONE_A, ZONE_B, ZONE_C) if z.token == token] + [MIXED_ZONE]
    cells = {c for z in zones for c in z.pool()}
    return tuple(sorted(cells, key=lambda c: (chebyshev(origin, c), c)))
