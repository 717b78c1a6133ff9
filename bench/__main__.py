"""`python -m bench [NAME...] [--quick]`: run every benchmark, or only those named."""

from __future__ import annotations

import argparse
import importlib
import time

# Each module exposes run(quick: bool = False) -> None and prints its own figures.
BENCHES: list[str] = [
    "eventlog",
    "maths_warriors_solver",
    "digits_combat",
    "digits_ghosts",
    "digits_rounds",
    "matrix_games_episodes",
    "matrix_games_module",
    "matrix_online",
    "maze",
    "maze_online",
    "streams",
    "projections",
    "matchmaking",
    "rating",
    "match_memory",
    "online_games",
    "second_game",
    "web_client",
    "oversize_frames",
    "export",
    "cold_start",
    "failover",
]


def calibration_seconds(loops: int = 5_000_000) -> float:
    """The best of three runs of a pure-Python loop: how fast this machine's CPU is right now.

    Printed first so that runs of different days can be compared: the absolute targets (moves
    per second) move with the machine, ratios measured in one run much less. It covers only the
    interpreter, not the disk or SQLite.
    """
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for i in range(loops):
            total += i
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="smaller workloads, for smoke tests")
    args = parser.parse_args()
    selected = args.names or BENCHES
    unknown = sorted(set(selected) - set(BENCHES))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    from arena_games.registry import STANDARD
    from arena_runtime.envelope import SCHEMAS

    STANDARD.register_schemas(SCHEMAS)  # every game's payloads, as `arena` registers them
    print(f"machine: pure-Python calibration loop {calibration_seconds():.2f} s", flush=True)
    for name in selected:
        print(f"== {name} ==", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"bench.{name}").run(quick=args.quick)
        print(f"== {name}: {time.perf_counter() - started:.1f} s ==\n", flush=True)


if __name__ == "__main__":
    main()
