"""Digits ghost selection: the engine's GhostIndex built from 1,000,000 stored ghosts, and queried.

Target (issue 16): p99 under 5 ms per selection with 1,000,000 stored ghosts. This measures the
engine side only (the index in memory and `select_ghost`'s cascade); the service's own bench,
through its store and its stream, comes with the service.

The build: the ghosts are generated first as the store keeps them, column by column (not timed:
the earlier figure of 58 s for 1,000,000 timed the seeded generator with the build), then
`GhostIndex.from_columns` builds the index in bulk, shown beside a same-run baseline: adding the
first 200,000 one by one (`GhostIndex.add`, what a store replaying its log without the bulk path
does). The issue sets no target for the build, so none is judged.

Then the same selections through the ghost store (`GhostStore.select`: the pick and the army
message), over 100,000 ghosts (the store's slates and records bound its size on a shared
machine), with the same p99 target. The ghosts are seeded: rounds weighted
towards the early ones (every game plays round 1, few reach round 12), records possible at their
round, ratings spread around 1000 (600-1400 mostly), 50,000 owners. Each query is a player of a
random round, record and rating, never served their own armies; one in ten is a player far from
everyone (700-1500 points away), who walks every tier and band before a wide match or a house
ghost (the slowest query).

Every query is timed in process CPU time, in three passes, and the verdict is read on each
query's best pass: the machine is shared, and a query that waits for a core measures the
scheduler, not the index (as the Maze and Matrix benches do). The first pass by the wall clock,
waits included, is printed beside it.
"""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Iterator

from arena_engine.digits.ghost_selection import Ghost, GhostIndex, GhostQuery, select_ghost
from arena_engine.digits.rng import Rng
from arena_engine.digits.slate import Digit
from arena_games.digits.ghost_store import Entry, GhostSaved, GhostStore

from bench.targets import target_line

TARGET_P99_MS = 5.0
GHOSTS = 1_000_000
QUERIES = 10_000
#: The baseline (adding one by one) runs on this many of the ghosts.
BASELINE_GHOSTS = 200_000
OWNERS = 50_000
#: Relative number of ghosts saved at rounds 1..12.
ROUND_WEIGHTS = (12, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2)


def _record(rng: Rng, round_no: int) -> tuple[int, int]:
    losses = rng.below(min(3, round_no))
    return rng.below(round_no - losses), losses


def _rating(rng: Rng) -> int:
    return 1000 + 2 * sum(rng.between(-100, 100) for _ in range(3))


def seeded_ghosts(count: int, seed: int = 2026) -> Iterator[Ghost]:
    rng = Rng(seed, "bench-ghosts")
    for position in range(count):
        round_no = 1 + rng.weighted(ROUND_WEIGHTS)
        wins, losses = _record(rng, round_no)
        yield Ghost(position, f"p{rng.below(OWNERS)}", round_no, wins, losses, _rating(rng))


def seeded_columns(
    count: int, seed: int = 2026
) -> tuple[list[int], list[str], list[int], list[int], list[int], list[int]]:
    """The same ghosts as :func:`seeded_ghosts`, column by column."""
    columns: tuple[list[int], list[str], list[int], list[int], list[int], list[int]] = (
        [], [], [], [], [], []
    )  # fmt: skip
    positions, owners, rounds, wins, losses, ratings = columns
    for ghost in seeded_ghosts(count, seed):
        positions.append(ghost.position)
        owners.append(ghost.owner)
        rounds.append(ghost.round_no)
        wins.append(ghost.wins)
        losses.append(ghost.losses)
        ratings.append(ghost.rating)
    return columns


def _queries(count: int) -> list[GhostQuery]:
    rng = Rng(2026, "bench-queries")
    out = []
    for _ in range(count):
        round_no = 1 + rng.weighted(ROUND_WEIGHTS)
        rating = _rating(rng)
        if rng.chance(10):
            rating = 1000 + rng.choice((-1, 1)) * rng.between(700, 1500)
        out.append(
            GhostQuery(
                round_no, _record(rng, round_no), rating, frozenset({f"p{rng.below(OWNERS)}"})
            )
        )
    return out


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(quick: bool = False) -> None:
    count = 100_000 if quick else GHOSTS
    queries = _queries(2_000 if quick else QUERIES)
    started = time.perf_counter()
    columns = seeded_columns(count)
    generated = time.perf_counter() - started
    w0, c0 = time.perf_counter(), time.process_time()
    index = GhostIndex.from_columns(*columns)
    built_wall, built_cpu = time.perf_counter() - w0, time.process_time() - c0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"index of {len(index):,} ghosts built in bulk in {built_cpu:.2f} s CPU "
        f"({built_wall:.2f} s wall; generating them took {generated:.1f} s, not counted; "
        f"process max RSS {rss_mb:.0f} MB)"
    )
    part = min(count, BASELINE_GHOSTS)
    head = tuple(column[:part] for column in columns)
    c0 = time.process_time()
    GhostIndex.from_columns(*head)  # type: ignore[arg-type]
    bulk_cpu = time.process_time() - c0
    one_by_one = GhostIndex()
    ghosts = [Ghost(*row) for row in zip(*head, strict=True)]  # the columns in Ghost's order
    c0 = time.process_time()
    for ghost in ghosts:
        one_by_one.add(ghost)
    add_cpu = time.process_time() - c0
    ratio = add_cpu / bulk_cpu if bulk_cpu else float("inf")
    print(
        f"  the first {part:,}: bulk {1e6 * bulk_cpu / part:.2f} us a ghost, one by one "
        f"(baseline) {1e6 * add_cpu / part:.2f} us a ghost: {ratio:.1f}x "
        "(no target: the issue sets none for the build)"
    )

    passes: list[list[float]] = []
    wall: list[float] = []
    tiers = {"record": 0, "wins": 0, "round": 0, "house": 0}
    for _ in range(3):
        samples = []
        for n, query in enumerate(queries):
            w0, t0 = time.perf_counter_ns(), time.process_time_ns()
            pick = select_ghost([index], query, n)
            samples.append((time.process_time_ns() - t0) / 1e6)
            if not passes:
                wall.append((time.perf_counter_ns() - w0) / 1e6)
                tiers[pick.tier] += 1
        passes.append(samples)
    best = [min(times) for times in zip(*passes, strict=True)]
    p99 = _percentile(best, 0.99)
    print(
        f"select_ghost x {len(queries):,} (process CPU time, best of 3): "
        f"p50 {statistics.median(best):.3f} ms, p99 {p99:.3f} ms, max {max(best):.2f} ms  "
        + target_line(p99, "<", TARGET_P99_MS, f"{TARGET_P99_MS:.0f} ms", "p99")
        + " (provisional on a shared machine)"
    )
    print(
        f"  first pass by the wall clock: p50 {statistics.median(wall):.3f} ms, "
        f"p99 {_percentile(wall, 0.99):.3f} ms, max {max(wall):.2f} ms"
    )
    print("  served from tiers: " + ", ".join(f"{k} {v}" for k, v in tiers.items()))

    adds = []
    extra = seeded_ghosts(1_000, seed=7)
    for i, ghost in enumerate(extra):
        moved = Ghost(
            count + i, ghost.owner, ghost.round_no, ghost.wins, ghost.losses, ghost.rating
        )
        t0 = time.perf_counter_ns()
        index.add(moved)
        adds.append((time.perf_counter_ns() - t0) / 1e6)
    print(
        f"add one ghost to the index: p50 {statistics.median(adds):.3f} ms, "
        f"p99 {_percentile(adds, 0.99):.3f} ms"
    )
    _store_pass(queries, quick)


#: Ghosts in the store pass (the store keeps a slate and a record per ghost: its memory, not the
#: index's, bounds this on a shared machine).
STORE_GHOSTS = 100_000
#: 2026-12-01 10:00 Paris.
_SAVED_MS = 1_796_115_600_000


def _store_pass(queries: list[GhostQuery], quick: bool) -> None:
    """The same selections through the ghost store the service will keep: its log folded and
    indexed in bulk (``GhostStore.from_log``), then ``select`` (the pick and the army message;
    house ghosts left for the game to build)."""
    count = 20_000 if quick else STORE_GHOSTS
    slate = (
        Digit("plus"),
        Digit("minus", 2),
        Digit("zero"),
        None,
        Digit("sigma"),
        None,
        None,
        None,
    )
    log: list[Entry] = [
        GhostSaved(
            f"g{g.position}", g.owner, g.owner, "ranked", g.rating, _SAVED_MS,
            g.round_no, g.wins, g.losses, slate,
        )
        for g in seeded_ghosts(count)
    ]  # fmt: skip
    c0 = time.process_time()
    store = GhostStore.from_log(log)
    built = time.process_time() - c0
    passes: list[list[float]] = []
    for _ in range(3):
        samples = []
        for n, query in enumerate(queries):
            assert query.record is not None
            player = next(iter(query.exclude_owners))
            t0 = time.process_time_ns()
            store.select(
                mode="ranked",
                round_no=query.round_no,
                record=query.record,
                rating=query.rating,
                player=player,
                seed=n,
                now_ms=_SAVED_MS,
            )
            samples.append((time.process_time_ns() - t0) / 1e6)
        passes.append(samples)
    best = [min(times) for times in zip(*passes, strict=True)]
    p99 = _percentile(best, 0.99)
    print(
        f"through the store ({count:,} ghosts, its log folded and indexed in {built:.2f} s CPU): "
        f"select p50 {statistics.median(best):.3f} ms, p99 {p99:.3f} ms, max {max(best):.2f} ms  "
        + target_line(p99, "<", TARGET_P99_MS, f"{TARGET_P99_MS:.0f} ms", "p99")
    )
