"""Digits on the rating service: each ranked combat rated as it is fought (read from the match's
own events through the module's ``ratings.units``), seasons by the Paris month, and a voided game
taken back by compensating events so that the ladder equals one where it was never played.

The games are real Digits games (``digits_games``), written to the embedded log as the match
service writes them; the result reader and the ladder run over the log as the service runs them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from arena_cli.main import main
from arena_engine.digits import ladder as engine_ladder
from arena_engine.digits import paris
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dpb
from arena_games.registry import READING
from arena_rating import ladder
from arena_rating.results import ResultReader
from arena_rating.service import ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import ladder_stream

from tests.services.rating import digits_games as dg

#: 2026-12-01 10:00 Paris.
T0 = 1_796_115_600_000
DAY = 86_400_000
#: 2027-01-03 10:00 Paris: the next season.
T1 = T0 + 33 * DAY


async def rate_all(log: EventLog) -> list[Any]:
    """A fresh reader over the whole match log (as after a restart), then the ladder over every
    command sent; the ladder's new events. A command the ladder already answered changes
    nothing."""
    reader = ResultReader(log)
    for partition, end in (await log.end_offsets(topics.MATCH_EVENTS)).items():
        for record in await log.read(topics.MATCH_EVENTS, partition, 0, max(end, 1)):
            await reader.handle(READING.decode_event(record.value), record)
    runner = ladder_runner(log)
    out = []
    for partition, end in (await log.end_offsets(topics.RATING_COMMANDS)).items():
        for record in await log.read(topics.RATING_COMMANDS, partition, 0, max(end, 1)):
            answer = await runner.handle(CODEC.decode_command(record.value))
            if answer.rejection is not None:
                assert answer.rejection.code == ladder.ALREADY_RECORDED, answer.rejection
            out.extend(answer.events)
    return out


async def folded(log: EventLog) -> ladder.Ladder:
    state = ladder.initial(ladder_stream("digits"))
    for partition, end in (await log.end_offsets(topics.RATING_EVENTS)).items():
        for record in await log.read(topics.RATING_EVENTS, partition, 0, max(end, 1)):
            event = CODEC.decode_event(record.value)
            if event.stream == state_stream():
                state = ladder.apply(state, event)
    return state


async def logged(log: EventLog) -> int:
    return sum((await log.end_offsets(topics.RATING_EVENTS)).values())


def state_stream() -> str:
    return ladder_stream("digits")


GAMES = {
    # match id: (player, start, the armies' frozen ratings, mode)
    "d1": ("p_ann", T0, [1000, 1100, 900, 1200, 1000, 1000], "ranked"),
    "d2": ("p_bob", T0 + DAY, [1040, 1040, 1040, 990, 990, 990], "ranked"),
    "d3": ("p_ann", T1, [1300, 1000, 1000, 1000, 1000, 1000], "ranked"),
    "d4": ("p_ann", T0 + 2 * DAY, [800, 800, 800, 800], "casual"),
}


async def write(log: EventLog, ids: list[str]) -> dict[str, list[Any]]:
    written = {}
    for match_id in ids:
        player, start, ratings, mode = GAMES[match_id]
        written[match_id] = dg.events(match_id, player, dg.play(start, ratings, mode), mode)
        await dg.append(log, written[match_id])
    return written


def expected(written: dict[str, list[Any]]) -> dict[str, engine_ladder.Standing]:
    """The engine's own ladder over the ranked combats of these games, in time order."""
    combats = []
    for match_id, events in written.items():
        player, _, _, mode = GAMES[match_id]
        if mode != "ranked":
            continue
        army = 0
        for event in events:
            if type(event.payload).__name__ == "ShopEnded":
                army = event.payload.army.rating
            if type(event.payload).__name__ == "CombatFought":
                time_ms = int(event.time.timestamp() * 1000)
                combats.append((time_ms, player, match_id, event.payload, army))
    history: list[engine_ladder.LadderEvent] = []
    for time_ms, player, match_id, combat, army in sorted(combats, key=lambda c: c[:3]):
        standing = engine_ladder.fold(history).get(player, engine_ladder.Standing())
        history += engine_ladder.rate_combat(
            standing, player, match_id, combat.round, paris.season_of(time_ms), army, combat.result
        )
    return engine_ladder.fold(history)


def standings(state: ladder.Ladder) -> dict[str, tuple[int, str, int]]:
    return {p: (s.rating, s.season, s.season_units) for p, s in state.standings.items()}


def as_tuples(found: dict[str, engine_ladder.Standing]) -> dict[str, tuple[int, str, int]]:
    return {p: (s.rating, s.season or "", s.season_combats) for p, s in found.items()}


async def test_each_ranked_combat_is_rated_against_its_armys_frozen_rating(tmp_path: Path) -> None:
    async with open_event_log(Settings(data_dir=tmp_path)) as log:
        await topics.ensure_topics(log, 2)
        written = await write(log, ["d1", "d2", "d4"])
        events = await rate_all(log)
        rated = [e.payload for e in events if isinstance(e.payload, pb.UnitRated)]
        # Every ranked combat once, none of the casual game's.
        assert sorted((r.match_id, r.unit) for r in rated) == sorted(
            [("d1", n) for n in range(1, 7)] + [("d2", n) for n in range(1, 7)]
        )
        assert [r.opponent_rating for r in rated if r.match_id == "d1"] == GAMES["d1"][2]
        assert {r.k for r in rated} == {24} and {r.season for r in rated} == {"2026-12"}
        # The games as wholes are recorded (history), never rated.
        recorded = [e.payload for e in events if isinstance(e.payload, pb.MatchRecorded)]
        assert sorted(r.match_id for r in recorded) == ["d1", "d2", "d4"]
        state = await folded(log)
        assert standings(state) == as_tuples(expected(written))
        assert "p_ann" in state.standings and state.standings["p_ann"].rating != 1000
        # Read again from the start (a restart): nothing is rated twice.
        before = await logged(log)
        await rate_all(log)
        assert await logged(log) == before


async def test_a_new_season_resets_once_and_a_void_takes_the_game_back_exactly(
    tmp_path: Path,
) -> None:
    async with open_event_log(Settings(data_dir=tmp_path / "voided")) as log:
        await topics.ensure_topics(log, 2)
        written = await write(log, ["d1", "d2", "d3"])
        events = await rate_all(log)
        resets = [e.payload for e in events if isinstance(e.payload, pb.SeasonReset)]
        assert [(r.player_id, r.season) for r in resets] == [("p_ann", "2027-01")]
        assert standings(await folded(log)) == as_tuples(expected(written))

        # The operator voids d1, after its end: its combats are taken back, and d3's, rated
        # on top of them, worked out again.
        end = int(written["d3"][-1].time.timestamp() * 1000)
        await dg.append(log, dg.voided("d1", written["d1"], end + DAY))
        events = await rate_all(log)
        (voided,) = [e.payload for e in events if isinstance(e.payload, pb.MatchVoided)]
        assert voided.match_id == "d1" and voided.by == "ops"
        (back,) = [e.payload for e in events if isinstance(e.payload, pb.RatingTakenBack)]
        assert back.player_id == "p_ann" and list(back.match_ids) == ["d1"]
        after_void = standings(await folded(log))
        # A snapshot keeps all of a per-combat ladder: standings, units, voids, history, seasons.
        state = await folded(log)
        assert state.history and state.voided and state.units and state.lines and state.counted
        assert ladder.decode(state_stream(), ladder.encode(state)) == state
        assert after_void == as_tuples(expected({k: written[k] for k in ("d2", "d3")}))
        before = await logged(log)
        await rate_all(log)
        assert await logged(log) == before  # a void is taken back once

    # The rebuilt ladder equals one where the voided game never happened.
    async with open_event_log(Settings(data_dir=tmp_path / "never")) as log:
        await topics.ensure_topics(log, 2)
        for match_id in ("d2", "d3"):
            await dg.append(log, written[match_id])
        await rate_all(log)
        assert standings(await folded(log)) == after_void


def test_arena_admin_void_sends_the_void_and_the_rating_follows_by_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path))
    settings = Settings(data_dir=tmp_path)
    player, start, ratings, mode = GAMES["d1"]
    game, timed = dg.play_game(start, ratings, mode)
    written = dg.events("d1", player, timed, mode)

    async def first() -> dict[str, tuple[int, str, int]]:
        async with open_event_log(settings) as log:
            await topics.ensure_topics(log, settings.partitions)
            await dg.append(log, written)
            await rate_all(log)
            return standings(await folded(log))

    assert asyncio.run(first())["p_ann"][0] != 1000

    # Bad input: a typed refusal, nothing sent.
    assert main(["admin", "void", "d1", "--reason", "   "]) == 2
    assert main(["admin", "void", "d 1", "--reason", "bot"]) == 2
    assert "bad_" in capsys.readouterr().err
    assert (
        main(["admin", "void", "d1", "--reason", "answers faster than a person", "--by", "eve"])
        == 0
    )

    async def then() -> tuple[list[Any], dict[str, tuple[int, str, int]]]:
        async with open_event_log(settings) as log:
            commands = []
            for partition, end in (await log.end_offsets(topics.MATCH_COMMANDS)).items():
                for record in await log.read(topics.MATCH_COMMANDS, partition, 0, max(end, 1)):
                    commands.append(READING.decode_command(record.value))
            # The match service's part: the game decides the void (seat 0), its event is logged.
            (command,) = commands
            end_ms = int(written[-1].time.timestamp() * 1000) + DAY
            await dg.append(log, dg.decided(game, command.payload, written, end_ms))
            await rate_all(log)
            return commands, standings(await folded(log))

    commands, after = asyncio.run(then())
    (command,) = commands
    assert command.stream == "match-d1" and command.command_id == "void:d1"
    assert isinstance(command.payload, dpb.VoidGame)
    assert (command.payload.by, command.payload.why) == ("eve", "answers faster than a person")
    assert "p_ann" not in after or after["p_ann"] == (1000, "", 0)


async def test_a_game_voided_for_inhuman_answers_moves_no_rating_earlier_combats_included(
    tmp_path: Path,
) -> None:
    """Round 3's Focus answered faster than a person: the game voids itself (integrity); the
    combats of rounds 1 and 2, rated already, are taken back, and no later one is rated."""
    async with open_event_log(Settings(data_dir=tmp_path)) as log:
        await topics.ensure_topics(log, 2)
        timed = dg.play(T0, GAMES["d1"][2], "ranked", fast_round=3)
        voids = [e for e, _ in timed if isinstance(e, dpb.GameVoided)]
        assert [v.reason for v in voids] == ["too_fast"]
        await dg.append(log, dg.events("d9", "p_ann", timed))
        events = await rate_all(log)
        rated = [e.payload for e in events if isinstance(e.payload, pb.UnitRated)]
        assert [r.unit for r in rated] == [1, 2]
        assert [type(e.payload).__name__ for e in events if e.payload not in rated][:2] == [
            "MatchVoided",
            "RatingTakenBack",
        ]
        assert standings(await folded(log)) == {"p_ann": (1000, "", 0)}
