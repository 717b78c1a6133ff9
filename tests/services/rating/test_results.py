"""Finished matches become RateMatch commands: by the reading rule, once per match id, and the
same after a restart that missed a match's start."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_games.registry import READING
from arena_rating.results import ResultReader
from arena_rating.service import build_service
from arena_runtime import metrics, topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Command, Event, new_id
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.host import open_runtime
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb

from tests.services.rating import matches
from tests.services.rating.test_replay import eventually


async def commands(log: EventLog) -> list[Command]:
    found = []
    for partition, end in (await log.end_offsets(topics.RATING_COMMANDS)).items():
        for record in await log.read(topics.RATING_COMMANDS, partition, 0, end or 1):
            found.append(CODEC.decode_command(record.value))
    return found


async def feed(reader: ResultReader, log: EventLog, events: list[Event]) -> None:
    """Hand the reader the records of these events as the consume loop would (decoded through
    the seam, as the service's event worker does), in log order."""
    wanted = {e.event_id for e in events}
    for partition, end in (await log.end_offsets(topics.MATCH_EVENTS)).items():
        for record in await log.read(topics.MATCH_EVENTS, partition, 0, max(end, 1)):
            event = READING.decode_event(record.value)
            if event.event_id in wanted:
                await reader.handle(event, record)


def ranked_game(match_id: str, seed: int) -> list[Event]:
    seats = (matches.seat("p_a"), matches.seat("p_b"))
    return matches.match_events(
        match_id, seats, match_pb2.MATCH_MODE_RANKED, matches.play(random.Random(seed))
    )


async def test_one_command_per_finished_match_even_after_a_restart(tmp_path: Path) -> None:
    async with open_event_log(Settings(data_dir=tmp_path)) as log:
        await topics.ensure_topics(log, 2)
        game = ranked_game("m1", 1)
        await matches.append(log, game)
        reader = ResultReader(log)
        await feed(reader, log, game)
        (sent,) = await commands(log)
        assert sent.command_id == "rate:m1" and sent.stream == "ladder-maths-warriors"
        rate: pb.RateMatch = sent.payload
        ended: mw.GameEnded = game[-1].payload
        two = matches.sides(rate)
        assert two.winner.player_id == ended.winner_player_id
        assert {two.winner.player_id, two.loser.player_id} == {"p_a", "p_b"}
        assert (rate.mode, rate.reason, rate.game) == ("ranked", ended.reason, "maths-warriors")

        # A restarted reader resumes after the match started: it folds the match from the log.
        second = ranked_game("m2", 2)
        await matches.append(log, second)
        restarted = ResultReader(log)
        await feed(restarted, log, second[-2:])
        rates = [c.payload for c in await commands(log)]
        assert [r.match_id for r in rates] == ["m1", "m2"]
        assert matches.sides(rates[1]).winner.player_id == second[-1].payload.winner_player_id

        # A redelivered GameEnded, and a zombie's GameEnded on a taken sequence number: nothing.
        flipped = mw.GameEnded()
        flipped.CopyFrom(game[-1].payload)
        flipped.winner = 3 - flipped.winner
        zombie = replace(game[-1], event_id=new_id(), batch_id=new_id(), payload=flipped)
        await matches.append(log, [game[-1], zombie])
        await feed(restarted, log, [game[-1], zombie])
        await feed(reader, log, [game[-1], zombie])
        assert [c.payload.match_id for c in await commands(log)] == ["m1", "m2", "m1"]
        # (the restarted reader folded m1 from the log: the same command id, which the ladder
        # answers once; the zombie's winner was never sent)
        assert {
            matches.sides(c.payload).winner.player_id
            for c in await commands(log)
            if c.payload.match_id == "m1"
        } == {game[-1].payload.winner_player_id}


class CountingReads:
    """The real log, counting the reads made through it."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self.reads = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._log, name)

    async def read(self, *args: object, **kwargs: object) -> object:
        self.reads += 1
        return await self._log.read(*args, **kwargs)  # type: ignore[arg-type]


async def test_a_restart_amid_many_games_reads_each_partition_once(tmp_path: Path) -> None:
    async with open_event_log(Settings(data_dir=tmp_path)) as log:
        await topics.ensure_topics(log, 2)
        games = [ranked_game(f"m{n}", n) for n in range(8)]
        # Every game half played, then the rest: a restart in between sees only second halves.
        for game in games:
            await matches.append(log, game[: len(game) // 2])
        for game in games:
            await matches.append(log, game[len(game) // 2 :])
        counting = CountingReads(log)
        restarted = ResultReader(counting)  # type: ignore[arg-type]
        await feed(restarted, log, [e for game in games for e in game[len(game) // 2 :]])
        sent = {c.payload.match_id: c.payload for c in await commands(log)}
        assert set(sent) == {f"m{n}" for n in range(8)}
        for n, game in enumerate(games):
            assert matches.sides(sent[f"m{n}"]).winner.player_id == (
                game[-1].payload.winner_player_id
            )
        assert counting.reads <= 2  # one scan of each partition
        assert restarted.matches == {}


async def feed_skipping(
    reader: ResultReader, log: EventLog, strip_headers: bool = False
) -> list[Event]:
    """Hand the reader every match-event record as its event worker does: those its ``skip``
    answers True for left unread. Returns the events decoded."""
    decoded = []
    for partition, end in (await log.end_offsets(topics.MATCH_EVENTS)).items():
        for record in await log.read(topics.MATCH_EVENTS, partition, 0, max(end, 1)):
            if strip_headers:  # as written before the headers existed
                record = record._replace(headers=())
            if reader.skip(record):
                continue
            event = READING.decode_event(record.value)
            decoded.append(event)
            await reader.handle(event, record)
    return decoded


async def test_moves_are_followed_from_their_headers_without_decoding_them(
    tmp_path: Path,
) -> None:
    """The reader decodes a match's start, its end and what comes out of turn; its moves, in
    turn, are admitted from their headers (ce_sequence, arena-batch) unread. A zombie's move and
    records without the headers are decoded and read by the reading rule as before."""
    async with open_event_log(Settings(data_dir=tmp_path)) as log:
        await topics.ensure_topics(log, 1)
        game = ranked_game("m1", 1)
        # A zombie's move ahead of the real one: the next sequence, but not a batch that is next.
        zombie = replace(game[3], event_id=new_id(), batch_id=new_id(), batch_index=1)
        await matches.append(log, [*game[:3], zombie, *game[3:]])
        reader = ResultReader(log)
        decoded = await feed_skipping(reader, log)
        assert [e.event_id for e in decoded] == [
            game[0].event_id,
            zombie.event_id,
            game[-1].event_id,
        ]
        assert len(game) > 4  # moves were left unread
        (sent,) = await commands(log)
        assert sent.command_id == "rate:m1"
        assert matches.sides(sent.payload).winner.player_id == game[-1].payload.winner_player_id

    async with open_event_log(Settings(data_dir=tmp_path / "old")) as log:
        await topics.ensure_topics(log, 1)
        await matches.append(log, game)
        old = ResultReader(log)
        assert len(await feed_skipping(old, log, strip_headers=True)) == len(game)
        (sent,) = await commands(log)
        assert sent.command_id == "rate:m1"


async def test_the_service_leaves_a_match_s_moves_unread(tmp_path: Path) -> None:
    """The rating service's match-event member hands its reader a match's start and end only:
    the moves between are admitted from their headers and counted nowhere."""
    labels = {"topic": topics.MATCH_EVENTS, "group": "rating.events"}
    before = metrics.sample("arena_records_consumed_total", labels)
    async with open_runtime(Settings(data_dir=tmp_path)) as runtime:
        await topics.ensure_topics(runtime.log, runtime.settings.partitions)
        service = await build_service(runtime)
        await service.start()
        try:
            game = ranked_game("m1", 3)
            await matches.append(runtime.log, game)

            async def rated() -> bool:
                return bool(await commands(runtime.log))

            await eventually(rated, "the match was never rated")
        finally:
            await service.stop()
    assert len(game) > 2
    assert metrics.sample("arena_records_consumed_total", labels) == before + 2
