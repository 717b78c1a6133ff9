"""Line of sight (integer Bresenham) and the per-radius sight tables built from it."""

from __future__ import annotations

from functools import cache

from arena_engine.matrix_games.constants import CELLS
from arena_engine.matrix_games.yard import CELL_X, CELL_Y, FLOOR, is_wall


def line_of_sight(ax: int, ay: int, bx: int, by: int) -> bool:
    """True when no wall lies strictly between A and B on the Bresenham line."""
    dx = abs(bx - ax)
    dy = abs(by - ay)
    sx = 1 if ax < bx else -1
    sy = 1 if ay < by else -1
    err = dx - dy
    x, y = ax, ay
    while True:
        if x == bx and y == by:
            return True
        if (x != ax or y != ay) and is_wall(x, y):
            return False
        e2 = 2 * err
        if e2 > -dy:
            err -= dy
            x += sx
        if e2 < dx:
            err += dx
            y += sy


def sees(a: int, b: int, radius: int) -> bool:
    """An observer on ``a`` sees ``b``: same cell, or within Chebyshev radius and in sight."""
    if a == b:
        return True
    ax, ay, bx, by = CELL_X[a], CELL_Y[a], CELL_X[b], CELL_Y[b]
    if max(abs(ax - bx), abs(ay - by)) > radius:
        return False
    return line_of_sight(ax, ay, bx, by)


@cache
def sight_row(a: int, radius: int) -> bytes:
    """sight_row(a, r)[b] == 1 when an observer on ``a`` sees ``b`` (computed once per cell)."""
    if not FLOOR[a]:
        return bytes(CELLS)
    return bytes(1 if FLOOR[b] and sees(a, b, radius) else 0 for b in range(CELLS))
