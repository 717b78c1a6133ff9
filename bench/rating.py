"""The rating service: updates per second through the service, and rebuilding its projections.

* service: finished games (``MatchOpened`` + ``MatchEnded``) already in the embedded log, and
  the rating service started on them: games rated per second until the ladder holds them all
  (match events consumed, ``RateMatch`` sent, answered by the ladder's stream runner). Baselines
  from the same run: the bare ladder stream runner answering the same commands (no consumers,
  no match events), and the ladder's decide + apply in memory (the Elo and the fold alone).
* rebuild: a ladder of 100,000 finished games (ranked and casual) appended to the embedded log,
  then the ``rating`` projection (profiles, history, leaderboards) rebuilt from it on SQLite and,
  when it is reachable, PostgreSQL; beside it the raw time to read those events from the log,
  and to read and decode them.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from arena_games.contract import pack
from arena_games.maths_warriors import wire
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_rating import ladder
from arena_rating.projections import RatingProjection
from arena_rating.service import build_service, ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Event, new_command, new_id
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.host import open_runtime
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import ladder_stream, rate_command_id
from arena_runtime.sql import ProjectionRunner, create_engine, session_factory, upgrade_head

from bench import postgres

LADDER = ladder_stream("maths-warriors")
PARTITIONS = 4
PLAYERS = 2000
T0 = datetime(2026, 11, 30, tzinfo=UTC)


def _player(rng: random.Random) -> str:
    return f"p_{rng.randrange(PLAYERS):05d}"


def finished_match(number: int, rng: random.Random) -> list[Event]:
    """A match stream reduced to what the rating service reads: created, then ended."""
    match_id = f"b{number:07d}"
    a = _player(rng)
    b = _player(rng)
    while b == a:
        b = _player(rng)
    seats = [
        match_pb2.MatchSeat(player_id=p, display_name=p.upper(), kind=match_pb2.SEAT_KIND_HUMAN)
        for p in (a, b)
    ]
    mode = match_pb2.MATCH_MODE_RANKED if rng.random() < 0.8 else match_pb2.MATCH_MODE_CASUAL
    winner = rng.choice((1, 2))
    payloads = [
        match_pb2.MatchOpened(
            match_id=match_id,
            game=wire.GAME,
            seats=seats,
            mode=mode,
            settings=pack(mw.MathsWarriorsSettings(game_seconds=720)),
        ),
        wire.ended_of_game_ended(
            mw.GameEnded(
                winner=winner,
                reason=rng.choice(("all_captured", "timeout", "forfeit")),
                winner_player_id=seats[winner - 1].player_id,
            ),
            f"match-{match_id}",
        ),
    ]
    return [
        Event(
            event_id=new_id(),
            stream=f"match-{match_id}",
            sequence=n,
            type=CODEC.schemas.type_of(p),
            payload=p,
            time=T0 + timedelta(seconds=number),
            batch_id=new_id(),
        )
        for n, p in enumerate(payloads, start=1)
    ]


def rate_request(number: int, rng: random.Random) -> pb.RateMatch:
    a = _player(rng)
    b = _player(rng)
    while b == a:
        b = _player(rng)
    # As the rating service sends it (version 2: every seat, ranked): a won, b lost.
    return pb.RateMatch(
        match_id=f"r{number:07d}",
        game="maths-warriors",
        mode="ranked" if rng.random() < 0.8 else "casual",
        seats=[
            pb.LadderPlayer(
                player_id=p,
                display_name=p.upper(),
                seat=seat,
                kind=match_pb2.SEAT_KIND_HUMAN,
                rank=seat,
                score=6 if seat == 1 else 3,
            )
            for seat, p in ((1, a), (2, b))
        ],
        reason=rng.choice(("all_captured", "timeout", "forfeit")),
        ended_at_ms=1_800_000_000_000 + number * 1000,
    )


async def _service_rate(games: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), partitions=PARTITIONS)
        async with open_runtime(settings) as runtime:
            await topics.ensure_topics(runtime.log, PARTITIONS)
            rng = random.Random(1)
            records = [CODEC.event_record(e) for n in range(games) for e in finished_match(n, rng)]
            for start in range(0, len(records), 1000):
                await runtime.log.append(topics.MATCH_EVENTS, records[start : start + 1000])
            service = await build_service(runtime)
            partition = await ladder_runner(runtime.log).partition_of(LADDER)
            started = time.perf_counter()
            await service.start()
            try:
                while True:
                    ends = await runtime.log.end_offsets(topics.RATING_EVENTS)
                    if ends.get(partition, 0) >= games:
                        break
                    await asyncio.sleep(0.02)
            finally:
                elapsed = time.perf_counter() - started
                await service.stop()
    return games / elapsed


async def _runner_rate(games: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        async with open_event_log(Settings(data_dir=Path(tmp))) as log:
            await topics.ensure_topics(log, PARTITIONS)
            runner = ladder_runner(log)
            rng = random.Random(1)
            commands = [
                new_command(LADDER, r, command_id=rate_command_id(r.match_id))
                for r in (rate_request(n, rng) for n in range(games))
            ]
            started = time.perf_counter()
            for command in commands:
                await runner.handle(command)
            return games / (time.perf_counter() - started)


def _fold_rate(games: int) -> float:
    rng = random.Random(1)
    commands = [
        new_command(LADDER, r, command_id=rate_command_id(r.match_id))
        for r in (rate_request(n, rng) for n in range(games))
    ]
    state = ladder.initial(LADDER)
    started = time.perf_counter()
    for number, command in enumerate(commands, start=1):
        for payload in ladder.decide(state, command):  # type: ignore[union-attr]
            ladder.apply(state, Event("e", LADDER, number, "", payload, T0))
    return games / (time.perf_counter() - started)


async def _write_ladder(log: EventLog, games: int) -> None:
    """``games`` ladder events, as the rating service would have written them."""
    rng = random.Random(2)
    state = ladder.initial(LADDER)
    partition = await ladder_runner(log).partition_of(LADDER)
    batch = []
    for number in range(1, games + 1):
        request = rate_request(number, rng)
        command = new_command(LADDER, request, command_id=rate_command_id(request.match_id))
        (payload,) = ladder.decide(state, command)  # type: ignore[misc]
        event = Event(
            event_id=new_id(),
            stream=LADDER,
            sequence=number,
            type=CODEC.schemas.type_of(payload),
            payload=payload,
            time=T0,
            causation_id=command.command_id,
            batch_id=new_id(),
        )
        ladder.apply(state, event)
        record = CODEC.event_record(event)
        batch.append(replace(record, partition=partition))
        if len(batch) == 2000:
            await log.append(topics.RATING_EVENTS, batch)
            batch = []
    if batch:
        await log.append(topics.RATING_EVENTS, batch)


async def _read(log: EventLog, decode: bool) -> tuple[int, float]:
    started = time.perf_counter()
    count = 0
    ends = await log.end_offsets(topics.RATING_EVENTS)
    for partition, end in ends.items():
        offset = 0
        while offset < end:
            records = await log.read(topics.RATING_EVENTS, partition, offset, 1000)
            if not records:
                break
            if decode:
                for record in records:
                    CODEC.decode_event(record.value)
            count += len(records)
            offset = records[-1].offset + 1
    return count, time.perf_counter() - started


async def _rebuild(log: EventLog, url: str) -> float:
    engine = create_engine(url)
    try:
        await upgrade_head(engine)
        runner = ProjectionRunner(RatingProjection(), log, session_factory(engine), batch_size=500)
        started = time.perf_counter()
        await runner.rebuild()
        return time.perf_counter() - started
    finally:
        await engine.dispose()


async def _rebuild_figures(games: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with open_event_log(Settings(data_dir=Path(tmp))) as log:
            await topics.ensure_topics(log, PARTITIONS)
            await _write_ladder(log, games)
            count, raw = await _read(log, decode=False)
            _, decoded = await _read(log, decode=True)
            print(f"  ladder of {count} finished games in the embedded log")
            print(f"  raw read:            {raw:7.2f} s  ({count / raw:10.0f} events/s)")
            print(f"  read + decode:       {decoded:7.2f} s  ({count / decoded:10.0f} events/s)")
            sqlite = await _rebuild(log, f"sqlite+aiosqlite:///{Path(tmp) / 'rebuild.sqlite3'}")
            print(
                f"  rebuild on SQLite:   {sqlite:7.2f} s  ({count / sqlite:10.0f} events/s, "
                f"{sqlite / raw:.1f}x the raw read)"
            )
            if not postgres.reachable():
                print("  rebuild on PostgreSQL: skipped (nothing on 127.0.0.1:5432)")
                return
            async with postgres.scratch_database() as url:
                seconds = await _rebuild(log, url)
            print(
                f"  rebuild on PostgreSQL: {seconds:5.2f} s  ({count / seconds:10.0f} "
                f"events/s, {seconds / raw:.1f}x the raw read)"
            )


def run(quick: bool = False) -> None:
    games = 300 if quick else 3000
    service = asyncio.run(_service_rate(games))
    runner = asyncio.run(_runner_rate(games))
    folded = _fold_rate(games * 10)
    print(f"  through the rating service: {service:8.0f} games rated/s ({games} games)")
    print(
        f"  bare ladder stream runner:  {runner:8.0f} games rated/s "
        f"(the service is {service / runner:.2f}x of it)"
    )
    print(f"  decide + apply in memory:   {folded:8.0f} games rated/s")
    asyncio.run(_rebuild_figures(10_000 if quick else 100_000))
