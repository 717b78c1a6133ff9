"""Cells, passages and directions of a rectangular maze.

Cell ``i`` lies at x = i mod width (east), y = i div width (south); cell 0 is the north-west
corner. A cell's passage flags are 1 N, 2 E, 4 S, 8 W.
"""

from __future__ import annotations

from typing import Final

DIRECTIONS: Final = ("N", "E", "S", "W")
FLAG: Final = {"N": 1, "E": 2, "S": 4, "W": 8}
OPPOSITE: Final = {"N": "S", "E": "W", "S": "N", "W": "E"}
DELTA: Final = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}

#: The eight compass bearings.
BEARINGS: Final = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


def neighbour(width: int, height: int, cell: int, direction: str) -> int | None:
    """The cell one step from ``cell`` towards ``direction``, or None off the map."""
    dx, dy = DELTA[direction]
    x, y = cell % width + dx, cell // width + dy
    if 0 <= x < width and 0 <= y < height:
        return y * width + x
    return None


def edges_of(width: int, height: int, cell: int) -> tuple[str, ...]:
    """The sides of ``cell`` that are map edges, in N, E, S, W order."""
    return tuple(d for d in DIRECTIONS if neighbour(width, height, cell, d) is None)


def bearing(dx: int, dy: int) -> str:
    """The nearest of the eight bearings of (dx, dy), y pointing south; never a tie.

    With a = |dx| and b = |dy|: N or S when (a + b)² < 2b², E or W when (a + b)² < 2a², else
    the diagonal. Both boundaries are irrational slopes (tan 22.5°), so integers never tie.
    """
    if dx == 0 and dy == 0:
        raise ValueError("no bearing to the cell itself")
    a, b = abs(dx), abs(dy)
    ns = "N" if dy < 0 else "S"
    ew = "E" if dx > 0 else "W"
    if (a + b) ** 2 < 2 * b * b:
        return ns
    if (a + b) ** 2 < 2 * a * a:
        return ew
    return ns + ew


def chebyshev(width: int, a: int, b: int) -> int:
    return max(abs(a % width - b % width), abs(a // width - b // width))


def window(width: int, height: int, cell: int, radius: int) -> tuple[int, int, int, int]:
    """The square of Chebyshev radius ``radius`` around ``cell``, clipped to the map:
    (x0, y0, x1, y1), both ends included."""
    x, y = cell % width, cell // width
    return (
        max(0, x - radius),
        max(0, y - radius),
        min(width - 1, x + radius),
        min(height - 1, y + radius),
    )
