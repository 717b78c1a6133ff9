"""Match service memory and decision speed, with live games held by its stream runner.

Creates N matches and plays a few moves in each through ``MatchRunner.handle`` over the embedded
log — the service's decision path without the consumer — compacting answers as the service does.
Reports the Python heap the runner keeps per 1,000 live games (tracemalloc, after a collection)
beside the baseline of the bare engine states of the same games, and the runner's commands per
second beside the engine's own decide + apply rate on the same moves, measured in the same run.
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
import tracemalloc
from pathlib import Path

import psutil
from arena_engine.maths_warriors import Context, GameState, Skip, Start, Strength
from arena_engine.maths_warriors import Rejection as EngineRejection
from arena_engine.maths_warriors import apply as engine_apply
from arena_engine.maths_warriors import decide as engine_decide
from arena_engine.maths_warriors.dice import active, other
from arena_games.contract import pack
from arena_games.maths_warriors import wire as schema
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_match.clock import now_ms
from arena_match.decide import MatchSettings
from arena_match.runner import Decider, MatchRunner
from arena_match.state import stream_of
from arena_runtime import topics
from arena_runtime.envelope import new_command
from arena_runtime.eventlog.embedded import EmbeddedEventLog
from arena_runtime.proto_gen.arena.v1 import match_pb2

from bench.targets import target_line

TARGET_MB_PER_1000 = 50.0
#: Moves per game: few enough that no game ends (a game needs at least 6 captures).
MOVES = 5


def _create(match_id: str) -> match_pb2.StartMatch:
    seats = [
        match_pb2.MatchSeat(
            player_id=f"p_{match_id}_{n}", display_name=f"P{n}", kind=match_pb2.SEAT_KIND_HUMAN
        )
        for n in (1, 2)
    ]
    return match_pb2.StartMatch(
        match_id=match_id,
        game=schema.GAME,
        seats=seats,
        settings=pack(pb.MathsWarriorsSettings(game_seconds=3600, move_seconds=30)),
    )


def scripted_move(state: GameState) -> Strength | Skip:
    """A cheap legal move: the first Strength capture the rules allow, else a skip."""
    mover = state.to_move
    for attacker in active(state.dice(mover)):
        for target in active(state.dice(other(mover))):
            move = Strength(mover, (attacker.value,), target.value)
            if not isinstance(engine_decide(state, move, Context(0, 1)), EngineRejection):
                return move
    return Skip(mover)


async def _fill(runner: MatchRunner, games: int, prefix: str = "m") -> int:
    commands = 0
    for game in range(games):
        match_id = f"{prefix}{game}"
        stream = stream_of(match_id)
        await runner.handle(new_command(stream, _create(match_id)))
        for _ in range(MOVES):
            view = runner.view(stream)
            assert view is not None
            state = view.state
            game = state.game.game  # the engine's state inside Maths Warriors' own
            move = scripted_move(game)
            payload = schema.move_to_proto(move, state.seat(game.to_move).player_id)
            await runner.handle(new_command(stream, payload))
            runner.compact(stream)
        commands += 1 + MOVES
    return commands


def _engine_games(games: int) -> tuple[list[GameState], int]:
    """The same kind of games on bare engine states: decide + apply, nothing else."""
    states, decided = [], 0
    for game in range(games):
        state = GameState()
        for event in engine_decide(state, Start(), Context(now_ms(), game)):  # type: ignore[union-attr]
            state = engine_apply(state, event)
        for number in range(MOVES):
            outcome = engine_decide(state, scripted_move(state), Context(now_ms(), number))
            assert not isinstance(outcome, EngineRejection)
            for event in outcome:
                state = engine_apply(state, event)
        decided += 1 + MOVES
        states.append(state)
    return states, decided


async def _open(directory: str) -> EmbeddedEventLog:
    event_log = EmbeddedEventLog(Path(directory) / "events.db")
    await event_log.start()
    await topics.ensure_topics(event_log, 8)
    return event_log


def _heap_mb(before: tracemalloc.Snapshot) -> float:
    gc.collect()
    diff = tracemalloc.take_snapshot().compare_to(before, "filename")
    return sum(stat.size_diff for stat in diff) / 1e6


async def _speed_and_rss(games: int) -> None:
    """Commands per second, and the process's growth, with no tracing in the way."""
    per_1000 = 1000 / games
    with tempfile.TemporaryDirectory() as directory:
        event_log = await _open(directory)
        try:
            runner = MatchRunner(event_log, Decider(MatchSettings(), now_ms))
            await _fill(runner, 50, prefix="warm-up")  # one-time allocations: caches, codecs
            gc.collect()
            rss_before = psutil.Process().memory_info().rss
            started = time.perf_counter()
            commands = await _fill(runner, games)
            runner_rate = commands / (time.perf_counter() - started)
            gc.collect()
            rss_mb = (psutil.Process().memory_info().rss - rss_before) / 1e6
        finally:
            await event_log.close()
    started = time.perf_counter()
    _, decided = _engine_games(games)
    engine_rate = decided / (time.perf_counter() - started)
    print(f"speed: {commands} commands, one at a time")
    print(f"  match runner (decide, append, read back): {runner_rate:,.0f} commands/s")
    print(
        f"  baseline, engine decide + apply: {engine_rate:,.0f} commands/s "
        f"(runner/baseline {runner_rate / engine_rate:.3f})"
    )
    print(
        f"  process resident size grew {rss_mb * per_1000:.1f} MB per 1,000 games while they "
        "were played (the runner, the embedded log's caches, allocator slack)"
    )


async def _heap(games: int) -> None:
    """The Python heap the runner keeps for live games, beside the bare engine states."""
    per_1000 = 1000 / games
    with tempfile.TemporaryDirectory() as directory:
        event_log = await _open(directory)
        try:
            runner = MatchRunner(event_log, Decider(MatchSettings(), now_ms))
            await _fill(runner, 1, prefix="warm-up")
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
            await _fill(runner, games)
            runner_mb = _heap_mb(before)
            live = sum(1 for view in runner._streams.values() if not view.state.over)
            before = tracemalloc.take_snapshot()
            states, _ = _engine_games(games)
            engine_mb = _heap_mb(before)
            tracemalloc.stop()
            del states, runner
        finally:
            await event_log.close()
    print(f"memory: {games} games of {MOVES} moves, {live} live")
    print(
        f"  match runner: {runner_mb * per_1000:.1f} MB per 1,000 live games  "
        + target_line(runner_mb * per_1000, "<", TARGET_MB_PER_1000, f"{TARGET_MB_PER_1000:.0f} MB")
    )
    print(
        f"  baseline, bare engine states: {engine_mb * per_1000:.2f} MB per 1,000 games "
        f"(runner/baseline {runner_mb / max(engine_mb, 1e-9):.1f}x)"
    )


def run(quick: bool = False) -> None:
    games = 200 if quick else 1000
    asyncio.run(_speed_and_rss(games))
    asyncio.run(_heap(games))


if __name__ == "__main__":
    run()
