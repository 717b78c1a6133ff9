"""Seeded maze generation: a connected maze with loops, fair to both players by symmetry.

Everything is symmetric under the half turn about the centre (cell ``c`` <-> ``n - 1 - c``):
the passages, and each player's start, key, compass and exit are the rotation of the other's;
vision artifacts come in rotated pairs. Player 2 therefore faces exactly player 1's problem.

The draws come from SplitMix64 seeded with the context's seed (``arena_engine.splitmix``), in a
fixed order, so a seed names one layout for ever; the layout is recorded in ``MatchStarted``
anyway, so replays never regenerate it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import TypeVar

from arena_engine.splitmix import SplitMix64

from .geometry import DIRECTIONS, FLAG, OPPOSITE, edges_of, neighbour
from .layout import MazeObject, Setup
from .settings import MazeSettings

T = TypeVar("T")


class _Draws(SplitMix64):
    __slots__ = ()

    def below(self, n: int) -> int:
        """An integer in [0, n) by multiply-shift (bias below n / 2**64)."""
        return (self.next64() * n) >> 64

    def shuffle(self, items: list[T]) -> None:
        """Fisher-Yates from the last index down."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]


class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def join(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[ra] = rb
        return True


def _edge_orbits(width: int, height: int) -> list[tuple[tuple[int, int], ...]]:
    """Every interior wall as (a, b) with a < b, grouped with its half-turn image."""
    n = width * height
    seen: set[tuple[int, int]] = set()
    orbits: list[tuple[tuple[int, int], ...]] = []
    for a in range(n):
        for d in ("E", "S"):
            b = neighbour(width, height, a, d)
            if b is None or (a, b) in seen:
                continue
            image = (min(n - 1 - a, n - 1 - b), max(n - 1 - a, n - 1 - b))
            orbit = ((a, b),) if image == (a, b) else ((a, b), image)
            seen.update(orbit)
            orbits.append(orbit)
    return orbits


def carve(width: int, height: int, loops_percent: int, draws: _Draws) -> tuple[int, ...]:
    """Passage flags of a connected, half-turn symmetric maze with at least one loop.

    Kruskal's algorithm over wall orbits in a random order opens an orbit when one of its walls
    joins two regions (its image may then close a loop); afterwards ``loops_percent`` of the
    walls still closed, and at least one, are opened too.
    """
    orbits = _edge_orbits(width, height)
    draws.shuffle(orbits)
    regions = _Union(width * height)
    opened: list[tuple[tuple[int, int], ...]] = []
    closed: list[tuple[tuple[int, int], ...]] = []
    for orbit in orbits:
        joined = [regions.join(a, b) for a, b in orbit]
        (opened if any(joined) else closed).append(orbit)
    extra = max(1, len(closed) * loops_percent // 100)
    opened.extend(closed[:extra])
    flags = [0] * (width * height)
    for orbit in opened:
        for a, b in orbit:
            if b == a + 1:
                flags[a] |= FLAG["E"]
                flags[b] |= FLAG["W"]
            else:
                flags[a] |= FLAG["S"]
                flags[b] |= FLAG["N"]
    return tuple(flags)


def distances(width: int, height: int, cells: Sequence[int], origin: int) -> list[int]:
    """Breadth-first distances over open passages; -1 where ``origin`` cannot reach."""
    dist = [-1] * (width * height)
    dist[origin] = 0
    todo = deque([origin])
    while todo:
        a = todo.popleft()
        for d in DIRECTIONS:
            if cells[a] & FLAG[d]:
                b = neighbour(width, height, a, d)
                assert b is not None
                if dist[b] < 0:
                    dist[b] = dist[a] + 1
                    todo.append(b)
    return dist


def _far_half(candidates: list[int], dist: list[int]) -> list[int]:
    """The candidates at or beyond the median distance (all of them when there are few)."""
    if len(candidates) < 4:
        return candidates
    ordered = sorted(dist[c] for c in candidates)
    median = ordered[len(ordered) // 2]
    return [c for c in candidates if dist[c] >= median]


def generate_setup(settings: MazeSettings, seed: int) -> Setup:
    """The layout ``seed`` names under ``settings`` (size, loops, vision pairs)."""
    w, h = settings.width, settings.height
    n = w * h
    draws = _Draws(seed)
    cells = carve(w, h, settings.loops_percent, draws)
    used: set[int] = set()

    def free(cell: int) -> bool:
        # A paired object needs both its cell and the cell's image, and they must differ.
        image = n - 1 - cell
        return image != cell and cell not in used and image not in used

    def take(cell: int) -> int:
        used.update((cell, n - 1 - cell))
        return cell

    start = take(_start(w, h, cells, [c for c in range(n) if free(c)], draws))
    from_start = distances(w, h, cells, start)
    key = take(draws.choice(_far_half([c for c in range(n) if free(c)], from_start)))
    from_key = distances(w, h, cells, key)
    rim = [c for c in range(n) if free(c) and edges_of(w, h, c)]
    exit_cell = take(draws.choice(_far_half(rim, from_key)))
    exit_dir = draws.choice(edges_of(w, h, exit_cell))
    # The compass lies on the nearer half of the maze from the start, where it is of use.
    near = [c for c in range(n) if free(c) and from_start[c] >= 2]
    far = set(_far_half(near, from_start))
    compass = take(draws.choice([c for c in near if c not in far] or near))
    visions: list[int] = []
    for _ in range(settings.vision_pairs):
        spots = [c for c in range(n) if free(c)]
        if not spots:
            break
        visions.append(take(draws.choice(spots)))

    def image(cell: int) -> int:
        return n - 1 - cell

    objects = [
        MazeObject("key", 1, key),
        MazeObject("key", 2, image(key)),
        MazeObject("compass", 1, compass),
        MazeObject("compass", 2, image(compass)),
        MazeObject("exit", 1, exit_cell, exit_dir),
        MazeObject("exit", 2, image(exit_cell), OPPOSITE[exit_dir]),
    ]
    for v in visions:
        objects += [MazeObject("vision", None, v), MazeObject("vision", None, image(v))]
    return Setup(w, h, cells, tuple(objects), (start, image(start)))


#: How many start cells are tried for one far enough from its image.
START_TRIES = 16


def _start(width: int, height: int, cells: Sequence[int], spots: list[int], draws: _Draws) -> int:
    """Player 1's start: the first of up to START_TRIES drawn cells whose walk to its image
    (player 2's start) is at least width + height, else the farthest of those tried."""
    n = width * height
    best, best_gap = spots[0], -1
    for _ in range(START_TRIES):
        cell = draws.choice(spots)
        gap = distances(width, height, cells, cell)[n - 1 - cell]
        if gap >= width + height:
            return cell
        if gap > best_gap:
            best, best_gap = cell, gap
    return best
