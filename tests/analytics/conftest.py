"""Fixtures of the analytics suites: a simulated data set (real services on the embedded log),
and logs to copy it into, embedded or on the real broker."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from arena_runtime import topics
from arena_runtime.config import Settings, load_settings
from arena_runtime.eventlog import EventLog, OutgoingRecord
from arena_runtime.eventlog.factory import open_event_log

ARENA = Path(sys.executable).parent / "arena"
#: The seeded data set of the suite: small, so it plays in seconds.
MATCHES = 30
PLAYERS = 10
SEED = 7


def arena_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_DATA_DIR=str(data_dir), ARENA_LOG_LEVEL="WARNING", **extra)
    return env


def run_arena(
    args: list[str], env: dict[str, str], timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARENA), *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@dataclass(frozen=True)
class Simulated:
    data_dir: Path
    settings: Settings
    matches: int
    output: str


@pytest.fixture(scope="session")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Simulated:
    """`arena events simulate` of Maths Warriors, ranked, through the real match and rating
    services on the embedded log."""
    data_dir = tmp_path_factory.mktemp("simulated")
    done = run_arena(
        [
            "events",
            "simulate",
            "--matches",
            str(MATCHES),
            "--players",
            str(PLAYERS),
            "--seed",
            str(SEED),
        ],
        arena_env(data_dir),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    settings = load_settings({"ARENA_DATA_DIR": str(data_dir)})
    return Simulated(data_dir, settings, MATCHES, done.stdout)


#: The other games of the examples' data set (docs/analytics.md), each small: its clocks shortened
#: through its own settings, Digits' players answering no faster than its integrity check allows.
OTHER_GAMES: dict[str, list[str]] = {
    "digits": [
        "--matches", "3", "--players", "3", "--think-ms", "105",
        "--setting", "army_wait_ms=0", "--setting", "human_answer_ms=100",
    ],
    "matrix-games": [
        "--matches", "6", "--players", "3", "--people", "1",
        "--setting", "min_beat_seconds=0", "--setting", "player_connect_timeout_seconds=0",
        "--setting", "variant=prisoners-dilemma,stag-hunt", "--setting", "beats=4",
    ],
    "maze": [
        "--matches", "6", "--players", "4",
        "--setting", "countdown_ms=0", "--setting", "width=5,7", "--setting", "height=5",
    ],
}  # fmt: skip


@dataclass(frozen=True)
class EveryGame:
    data_dir: Path
    settings: Settings
    #: Each game's simulation: what it printed.
    outputs: dict[str, str]


@pytest.fixture(scope="session")
def every_game(simulated: Simulated, tmp_path_factory: pytest.TempPathFactory) -> EveryGame:
    """The Maths Warriors data set with Digits, Matrix Games and the Maze added to its log
    (`arena events simulate` of each, through the real services). The three play at once, each
    on a log of its own (Digits' players spend most of it thinking), and their event records are
    then appended to a copy of the Maths Warriors log as they are: match ids name their game and
    every rating stream is one game's ladder, so nothing collides."""
    root = tmp_path_factory.mktemp("every-game")
    data_dir = root / "data"
    shutil.copytree(simulated.data_dir, data_dir)
    running = {
        game: subprocess.Popen(
            [str(ARENA), "events", "simulate", "--game", game, "--seed", str(SEED), *args],
            env=arena_env(root / game),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for game, args in OTHER_GAMES.items()
    }
    outputs = {"maths-warriors": simulated.output}
    for game, process in running.items():
        stdout, stderr = process.communicate(timeout=240)
        assert process.returncode == 0, (game, stderr[-3000:])
        outputs[game] = stdout
    settings = load_settings({"ARENA_DATA_DIR": str(data_dir)})

    async def merge() -> None:
        async with open_event_log(settings) as target:
            for game in OTHER_GAMES:
                source_settings = load_settings({"ARENA_DATA_DIR": str(root / game)})
                async with open_event_log(source_settings) as source:
                    await append_events(source, target)

    asyncio.run(merge())
    return EveryGame(data_dir, settings, outputs)


async def append_events(source: EventLog, target: EventLog) -> None:
    """Every event record of ``source`` appended to ``target``: same partition, key, value and
    headers."""
    for topic in topics.EVENTS:
        for partition, end in sorted((await source.end_offsets(topic)).items()):
            offset = 0
            while offset < end:
                records = await source.read(topic, partition, offset, 1000)
                if not records:
                    break
                await target.append(
                    topic,
                    [OutgoingRecord(r.value, r.key, r.headers, partition) for r in records],
                )
                offset = records[-1].offset + 1


OpenLog = Callable[[], EventLog]


@pytest.fixture(params=["embedded", pytest.param("kafka", marks=pytest.mark.kafka)])
def log_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings of an empty log: embedded under tmp_path, or topics of their own on the broker."""
    if request.param == "embedded":
        return load_settings({"ARENA_DATA_DIR": str(tmp_path / "log")})
    prefix = f"{request.getfixturevalue('topic_prefix')}{uuid.uuid4().hex[:8]}."
    return load_settings(
        {
            "ARENA_DATA_DIR": str(tmp_path / "log"),
            "ARENA_KAFKA_BOOTSTRAP": request.getfixturevalue("kafka_bootstrap"),
            "ARENA_TOPIC_PREFIX": prefix,
            **request.getfixturevalue("kafka_consumer_timings").settings(),
        }
    )


def opener(settings: Settings) -> OpenLog:
    return lambda: open_event_log(settings)
