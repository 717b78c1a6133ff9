"""The map, the PCG32 stream and the spawner layout it draws."""

from __future__ import annotations

from arena_engine.matrix_games.constants import BOARD_H, BOARD_W, OPENING_CELLS, WALLS
from arena_engine.matrix_games.pathing import bfs_distances
from arena_engine.matrix_games.rng import Pcg32
from arena_engine.matrix_games.sight import line_of_sight
from arena_engine.matrix_games.yard import (
    FLOOR_CELLS,
    MIXED_ZONE,
    ZONE_A,
    ZONE_B,
    ZONE_C,
    cell_of,
    draw_spawners,
    is_wall,
)


def test_map_facts() -> None:
    assert len(WALLS) == BOARD_H and all(len(row) == BOARD_W for row in WALLS)
    assert len(FLOOR_CELLS) == 216
    assert all(row == row[::-1] for row in WALLS)
    assert list(WALLS) == list(reversed(WALLS))
    field = bfs_distances(FLOOR_CELLS[0])
    assert all(field[c] >= 0 for c in FLOOR_CELLS)  # 4-connected
    assert is_wall(-1, 3) and is_wall(24, 3) and is_wall(3, 14)


def test_opening_cells_are_floor_and_outside_zones() -> None:
    for x, y in OPENING_CELLS:
        assert not is_wall(x, y)
        for zone in (ZONE_A, ZONE_B, ZONE_C, MIXED_ZONE):
            assert not zone.contains(x, y)


def test_zone_pools() -> None:
    assert [len(z.pool()) for z in (ZONE_A, ZONE_B, ZONE_C, MIXED_ZONE)] == [28, 28, 34, 36]


def test_pcg32_first_outputs() -> None:
    for seed, expected in ((0, [3837872008, 932996374, 1548399547]), (1, [3380776849, 361947764])):
        rng = Pcg32(seed)
        assert [rng.next_u32() for _ in expected] == expected
    rng = Pcg32(7)
    assert [rng.next_u32(), rng.next_u32()] == [4046551126, 168348581]


def test_below_one_consumes_nothing() -> None:
    a, b = Pcg32(3), Pcg32(3)
    assert a.below(1) == 0 and a.below(0) == 0
    assert a.next_u32() == b.next_u32()


def test_golden_spawner_layout() -> None:
    layout = [(s.x, s.y, s.token) for s in draw_spawners(10, 2)]
    assert layout[:5] == [(1, 1, 0), (2, 1, 0), (3, 1, 0), (4, 1, 0), (7, 1, 0)]
    assert layout[16:18] == [(16, 1, 1), (19, 1, 1)]
    assert layout[32:] == [
        (1, 6, 0), (2, 6, 1), (10, 6, 0), (13, 6, 1), (14, 6, 0), (16, 6, 1),
        (2, 7, 0), (6, 7, 1), (7, 7, 0), (8, 7, 1), (12, 7, 0), (13, 7, 1),
    ]  # fmt: skip


def test_spawner_counts_and_dependence_on_k() -> None:
    two, three = draw_spawners(99, 2), draw_spawners(99, 3)
    assert len(two) == 44 and len(three) == 60
    assert two[:32] == three[:32]  # zones A and B depend only on the seed
    assert [s.token for s in three[48:]] == [n % 3 for n in range(12)]
    assert draw_spawners(-5, 2) == draw_spawners(-5, 2)


def test_line_of_sight_is_blocked_by_walls_between_only() -> None:
    assert line_of_sight(1, 1, 4, 1)
    assert not line_of_sight(4, 1, 7, 1)  # (5,1) and (6,1) are walls
    assert line_of_sight(9, 1, 9, 1)
    assert cell_of(3, 2) == 51
