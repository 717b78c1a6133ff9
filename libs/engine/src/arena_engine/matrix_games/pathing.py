"""Breadth-first distance fields over floor cells (cogs ignored), one per goal, cached."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from arena_engine.matrix_games.constants import CELLS
from arena_engine.matrix_games.yard import FLOOR, NEIGHBOURS


def bfs_distances(goal: int) -> list[int]:
    """Distance from ``goal`` to every cell in 4-neighbour steps; -1 for walls and unreachable."""
    dist = [-1] * CELLS
    if not FLOOR[goal]:
        return dist
    dist[goal] = 0
    queue = [goal]
    head = 0
    while head < len(queue):
        c = queue[head]
        head += 1
        here = dist[c] + 1
        for n in NEIGHBOURS[c]:
            if n >= 0 and dist[n] < 0:
                dist[n] = here
                queue.append(n)
    return dist


@cache
def distance_field(goal: int) -> tuple[int, ...]:
    """The field for one goal cell; a pure function of the map, so it is computed once."""
    return tuple(bfs_distances(goal))


def bfs_step(field: Sequence[int], start: int, goal: int, occ: list[int]) -> int:
    """First step of a shortest path from ``start`` toward ``goal``, or -1.

    Cells holding any cog are avoided. The closest free neighbour wins with ties to the
    earliest of N, E, S, W; when none is closer, the least-bad free sidestep (distance here or
    here + 1) is taken, and because that scan accepts "<=", its ties go to the LAST direction.
    """
    if start == goal:
        return -1
    here = field[start]
    if here < 0:
        return -1
    result = -1
    best = here
    nbs = NEIGHBOURS[start]
    for d in range(4):
        n = nbs[d]
        if n < 0 or occ[n] >= 0:
            continue
        dn = field[n]
        if 0 <= dn < best:
            best = dn
            result = d
    if result >= 0:
        return result
    side = here + 1
    for d in range(4):
        n = nbs[d]
        if n < 0 or occ[n] >= 0:
            continue
        dn = field[n]
        if 0 <= dn <= side:
            side = dn
            result = d
    return result
