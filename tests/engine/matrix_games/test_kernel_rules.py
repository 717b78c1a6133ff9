"""The tick rules and their tie-breaks, one situation at a time."""

from __future__ import annotations

import pytest
from arena_engine.matrix_games import MatrixGamesError, Order, Settings, Sim
from arena_engine.matrix_games.kernel import FIRE, TURN, WAIT
from arena_engine.matrix_games.orders import gather, hold, hunt
from arena_engine.matrix_games.pathing import bfs_step, distance_field
from arena_engine.matrix_games.yard import RAYS, cell_of

PARK = [(1, 9), (1, 10), (1, 11), (2, 11), (1, 12), (2, 12), (4, 12), (4, 11)]


def parked(matrix: str = "prisoners-dilemma", **kw: int) -> Sim:
    """A sim whose cogs all stand frozen in the bottom-left corner, away from every spawner;
    a test wakes (unfreezes) the cogs it uses when it places them."""
    sim = Sim(Settings(matrix=matrix, **kw))  # type: ignore[arg-type]
    for slot, (x, y) in enumerate(PARK):
        sim.place_cog(slot, x, y)
        sim.freeze[slot] = 10**6
    return sim


def put(sim: Sim, slot: int, x: int, y: int, facing: int | None = None) -> None:
    sim.place_cog(slot, x, y, facing)
    sim.freeze[slot] = 0


def test_ray_stops_before_the_first_wall_and_hits_the_first_cog() -> None:
    assert len(RAYS[cell_of(9, 1)][3][:4]) == 2  # (8,1), (7,1) then the wall at (6,1)
    sim = parked()
    put(sim, 0, 9, 1, facing=1)
    put(sim, 1, 12, 1)
    assert sim._ray_target(0) == 1


def test_bfs_step_goes_north_and_sidesteps_an_occupied_cell() -> None:
    sim = parked()
    goal = cell_of(9, 1)
    field = distance_field(goal)
    assert bfs_step(field, cell_of(9, 2), goal, sim.occ) == 0
    put(sim, 7, 9, 1)
    assert bfs_step(field, cell_of(9, 2), goal, sim.occ) != 0
    assert bfs_step(field, goal, goal, sim.occ) == -1


def test_sidestep_ties_go_to_the_last_direction() -> None:
    sim = parked()
    # (10,4): goal (10,2) two cells north; (10,3) is blocked by a cog, so no neighbour is
    # closer. E (11,4) and W (9,4) are both at distance 3: the "<=" scan keeps W.
    put(sim, 7, 10, 3)
    goal = cell_of(10, 2)
    assert bfs_step(distance_field(goal), cell_of(10, 4), goal, sim.occ) == 3


def test_pickup_cap_and_respawn_timing() -> None:
    sim = parked(token_cap=2)
    spawner = sim.spawners[0]
    put(sim, 0, spawner.x, spawner.y)
    sim.install_orders([hold()] * 8)
    sim.step()
    assert sim.inv[0][spawner.token] == 2 and sim.sp_has[0] == 0
    assert sim.events[-1] == ("pickup", 0, 0, spawner.x, spawner.y, spawner.token)
    for _ in range(44):
        sim.step()
    assert sim.sp_has[0] == 0
    sim.step()  # tick 45: refilled at rule 2, but the cog is at the cap of 2
    assert sim.sp_has[0] == 1 and sim.inv[0][spawner.token] == 2


def test_a_step_costs_three_ticks() -> None:
    sim = parked()
    put(sim, 0, 9, 4)
    sim.install_orders([gather(0)] + [hold()] * 7)
    start = sim.pos[0]
    sim.step()
    assert sim.pos[0] != start and sim.step_cd[0] == 3
    moved = sim.pos[0]
    sim.step()
    sim.step()
    assert sim.pos[0] == moved
    sim.step()
    assert sim.pos[0] != moved


def test_resolution_resets_freezes_and_immunises() -> None:
    sim = parked()
    put(sim, 0, 9, 1, facing=1)
    put(sim, 1, 11, 1)
    sim.inv[0] = [1, 5]
    sim.inv[1] = [4, 1]
    sim.install_orders([hunt(1)] + [hold()] * 7)
    sim.step()
    kinds = [e[0] for e in sim.events[8:]]
    assert kinds[:4] == ["beam", "interact", "reset", "reset"]
    assert sim.inv[0] == [1, 1] and sim.inv[1] == [1, 1]
    assert (sim.freeze[0], sim.immune[0], sim.beam_cd[0]) == (12, 12, 25)
    assert sim.frames[-1].freeze[0] == 12  # frame t shows freeze 12
    for _ in range(11):
        sim.step()
    assert sim.freeze[0] == 1
    sim.step()
    assert sim.freeze[0] == 0


def test_a_frozen_target_is_a_no_contest_and_a_miss_costs_six() -> None:
    sim = parked()
    put(sim, 0, 9, 1, facing=1)
    put(sim, 1, 11, 1)
    sim.freeze[1] = 5
    sim.install_orders([hunt(1)] + [hold()] * 7)
    sim.step()
    assert sim.events[-2:] == [("beam", 0, 0, 9, 1, 1, 4, 1), ("nocontest", 0, 0, 1, "immune")]
    assert sim.beam_cd[0] == 6


def test_bos_row_side_is_the_row_camp_and_same_camp_is_no_contest() -> None:
    sim = parked("bach-or-stravinsky")
    put(sim, 4, 9, 1, facing=1)
    put(sim, 0, 11, 1)
    sim.install_orders([hold()] * 4 + [hunt(0)] + [hold()] * 3)
    sim.step()
    interact = next(e for e in sim.events if e[0] == "interact")
    assert interact[3:5] == (0, 4)  # row = slot 0 although slot 4 fired
    sim = parked("bach-or-stravinsky")
    put(sim, 4, 9, 1, facing=1)
    put(sim, 5, 11, 1)
    sim.install_orders([hold()] * 4 + [hunt(5)] + [hold()] * 3)
    sim.step()
    assert sim.events[-1] == ("nocontest", 0, 4, 5, "same_camp")


def test_hunt_turns_then_fires_and_hold_fires_at_anyone_in_the_ray() -> None:
    sim = parked()
    put(sim, 0, 9, 1, facing=2)
    put(sim, 1, 11, 1)
    sim.install_orders([hunt(1), hold()] + [hold()] * 6)
    assert sim._evaluate(0, True) == TURN + 1
    sim.facing[0] = 1
    assert sim._evaluate(0, True) == FIRE
    sim.beam_cd[0] = 3
    assert sim._evaluate(0, True) == WAIT
    sim.facing[1] = 3
    assert sim._evaluate(1, True) == FIRE


def test_avoid_moves_away_and_allows_distance_two() -> None:
    sim = parked()
    put(sim, 0, 10, 4)
    put(sim, 1, 10, 2)
    sim.install_orders([Order("avoid", -1, 1)] + [hold()] * 7)
    assert sim._evaluate(0, True) == 2  # south, to distance 3
    put(sim, 0, 11, 4)
    put(sim, 1, 10, 4)
    # From distance 1, E reaches distance 2: allowed (the reference excludes only 0-1).
    assert sim._evaluate(0, True) == 1


def test_hold_refaces_the_nearest_cog_every_fourth_tick() -> None:
    sim = parked()
    put(sim, 0, 10, 4, facing=0)
    put(sim, 1, 13, 5)
    sim.install_orders([hold()] * 8)
    sim.tick = 4
    assert sim._evaluate(0, True) == TURN + 1
    sim.tick = 5
    assert sim._evaluate(0, True) == WAIT


def test_leadchange_and_finish() -> None:
    sim = parked(beats=1)
    sim.install_orders([hold()] * 8)
    sim.score[3] = 10
    sim.step()
    assert sim.events[-1] == ("leadchange", 0, 3, 10)
    with pytest.raises(MatrixGamesError):
        sim.finish("bored")
    sim.finish("deadline")
    sim.finish("complete")  # acts only once
    assert (sim.reason, sim.ending) == ("deadline", "play_deadline")
    with pytest.raises(MatrixGamesError):
        sim.install_orders([hold()] * 8)


def test_place_cog_rejects_walls_and_occupied_cells() -> None:
    sim = Sim(Settings())
    with pytest.raises(MatrixGamesError):
        sim.place_cog(0, 0, 0)
    with pytest.raises(MatrixGamesError):
        sim.place_cog(0, 14, 1)
