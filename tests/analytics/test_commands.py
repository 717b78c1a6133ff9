"""`arena events export` and `simulate` as commands: what they print, and bad input refused
with a clear message, exit 2 and nothing written."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from arena_runtime import topics
from arena_runtime.eventlog.factory import open_event_log

from tests.analytics.conftest import (
    MATCHES,
    OTHER_GAMES,
    EveryGame,
    Simulated,
    arena_env,
    run_arena,
)
from tests.analytics.data import jsonl_rows, tree
from tests.harness.kafka import ConsumerTimings


async def test_the_simulation_played_every_match_through_the_services(
    simulated: Simulated,
) -> None:
    assert simulated.output.startswith(f"{MATCHES} maths-warriors matches")
    async with open_event_log(simulated.settings) as log:
        seen: dict[str, int] = {}
        for topic in (topics.MATCH_EVENTS, topics.RATING_EVENTS):
            for partition, end in (await log.end_offsets(topic)).items():
                for record in await log.read(topic, partition, 0, end + 1):
                    kind = (record.header("arena-type") or b"").decode()
                    seen[kind] = seen.get(kind, 0) + 1
    # Written by the match service (on the game seam) and by the ladder.
    assert seen["arena.v1.MatchOpened"] == seen["arena.v1.MatchEnded"] == MATCHES
    assert seen["arena.v1.MatchRated"] == MATCHES
    assert seen.get("arena.v1.CommandRejected", 0) == 0


async def test_every_game_plays_through_the_services(every_game: EveryGame) -> None:
    for game, args in OTHER_GAMES.items():
        matches = int(args[args.index("--matches") + 1])
        assert every_game.outputs[game].startswith(f"{matches} {game} matches"), game
    async with open_event_log(every_game.settings) as log:
        opened: dict[str, int] = {}
        ended: dict[str, int] = {}
        seen: set[str] = set()
        for topic in (topics.MATCH_EVENTS, topics.RATING_EVENTS):
            for partition, end in (await log.end_offsets(topic)).items():
                for record in await log.read(topic, partition, 0, end + 1):
                    kind = (record.header("arena-type") or b"").decode()
                    seen.add(kind)
                    game = (record.key or b"").decode().split("-sim-")[-1].rsplit("-", 1)[0]
                    if kind == "arena.v1.MatchOpened":
                        opened[game] = opened.get(game, 0) + 1
                    elif kind == "arena.v1.MatchEnded":
                        ended[game] = ended.get(game, 0) + 1
    assert {g: opened[g] for g in OTHER_GAMES} == {g: ended[g] for g in OTHER_GAMES}
    # Digits' players think as long as its integrity check asks: no game voided, combats rated.
    assert "arena.games.digits.v1.GameVoided" not in seen
    assert "arena.v1.UnitRated" in seen


def test_export_command(simulated: Simulated, tmp_path: Path) -> None:
    env = arena_env(simulated.data_dir)
    out = tmp_path / "export"
    done = run_arena(["events", "export", "--out", str(out), "--chunk", "50"], env)
    assert done.returncode == 0, done.stderr
    assert "events exported to" in done.stdout and "(resumed)" not in done.stdout
    assert "records (" in done.stderr and "100%" in done.stderr  # progress
    before = tree(out)
    again = run_arena(["events", "export", "--out", str(out), "--chunk", "50", "--quiet"], env)
    assert again.returncode == 0 and "(resumed)" in again.stdout and again.stderr == ""
    assert tree(out) == before


def test_bad_input_is_refused_and_writes_nothing(simulated: Simulated, tmp_path: Path) -> None:
    env = arena_env(simulated.data_dir)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    cases = [
        (["events", "export", "--out", str(busy)], "holds no export to resume"),
        (
            ["events", "export", "--out", str(tmp_path / "a"), "--pseudonymise"],
            "ARENA_EXPORT_PSEUDONYM_KEY",
        ),
        (["events", "export", "--out", str(tmp_path / "b"), "--offsets", "9:3"], "START <= END"),
        (["events", "export", "--out", str(tmp_path / "c"), "--since", "yesterday"], "ISO 8601"),
        (
            ["events", "export", "--out", str(tmp_path / "d"), "--topic", "arena.commands.match"],
            "not an event topic",
        ),
        (["events", "simulate", "--game", "chess"], "no game 'chess'"),
        (["events", "simulate", "--matches", "0"], "at least one match"),
        (["events", "simulate", "--people", "3"], "seats 1-2 people a match, not 3"),
        (["events", "simulate", "--setting", "colour=red"], 'no field named "colour"'),
        (
            ["events", "simulate", "--game", "digits", "--setting", "army_wait_ms=0,99999"],
            "invalid_army_wait",
        ),
    ]
    for args, message in cases:
        done = run_arena(args, env)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
    assert tree(busy) == {"notes.txt": b"mine"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy"]
    short = run_arena(
        ["events", "export", "--out", str(tmp_path / "e")],
        {**env, "ARENA_EXPORT_PSEUDONYM_KEY": "short"},
    )
    assert short.returncode == 2 and "ARENA_EXPORT_PSEUDONYM_KEY" in short.stderr
    assert "short" not in short.stderr.replace("ARENA_EXPORT", "")


@pytest.mark.kafka
def test_simulate_export_and_tail_on_kafka(
    kafka_bootstrap: str,
    topic_prefix: str,
    kafka_consumer_timings: ConsumerTimings,
    tmp_path: Path,
) -> None:
    env = arena_env(
        tmp_path / "data",
        ARENA_KAFKA_BOOTSTRAP=kafka_bootstrap,
        ARENA_TOPIC_PREFIX=f"{topic_prefix}{uuid.uuid4().hex[:8]}.",
        ARENA_PARTITIONS="2",
        **kafka_consumer_timings.settings(),
    )
    played = run_arena(["events", "simulate", "--matches", "3", "--players", "4"], env)
    assert played.returncode == 0, played.stderr[-3000:]
    assert played.stdout.startswith("3 maths-warriors matches")
    exported = run_arena(["events", "export", "--out", str(tmp_path / "out"), "--quiet"], env)
    assert exported.returncode == 0, exported.stderr
    ended = [row for row in jsonl_rows(tmp_path / "out") if row["type"] == "arena.v1.MatchEnded"]
    assert len(ended) == 3
    tailed = run_arena(
        ["events", "tail", "--from-start", "--no-follow", "--type", "MatchRated"], env
    )
    assert tailed.returncode == 0 and len(tailed.stdout.splitlines()) == 3
