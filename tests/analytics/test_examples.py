"""The worked examples of docs/analytics.md run on a simulated data set (real services), give
sound results, write their plots, and are the queries the page shows."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import duckdb
from arena_cli.analytics.export import Exporter, Range
from arena_runtime.eventlog.factory import open_event_log

from tests.analytics.conftest import PLAYERS, EveryGame, Simulated
from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "docs" / "analytics" / "examples.py"
PNG = b"\x89PNG\r\n\x1a\n"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("analytics_examples", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def test_the_examples_run_on_simulated_data(
    simulated: Simulated, every_game: EveryGame, tmp_path: Path
) -> None:
    async with open_event_log(every_game.settings) as log:
        await Exporter(log, tmp_path / "export", formats=("parquet",)).run(Range())
    results = script().run(tmp_path / "export", tmp_path / "plots")

    columns, first = results["first_mover"]
    assert columns == ["band", "matches", "first_mover_wins"]
    assert sum(r[1] for r in first) == simulated.matches  # every match ranked, rated and banded
    assert all(0.0 <= r[2] <= 1.0 for r in first)

    columns, captures = results["mind_captures"]
    assert [r[0] for r in captures] == ["D4", "D6", "D8", "D10", "D12", "D20"]
    # A match ends when one side has captured all six dice: at least six captures a match.
    assert sum(r[1] for r in captures) >= 6 * simulated.matches
    assert all(0 <= r[2] <= r[1] for r in captures)

    columns, ratings = results["ratings"]
    assert columns == ["band", "players"]
    assert 2 <= sum(r[1] for r in ratings) <= PLAYERS
    assert len(ratings) > 1, "ratings did not spread: the players' skills made no difference"

    columns, digits = results["digits_balance"]
    assert columns[:2] == ["digit", "offered"] and len(columns) == 8
    picked = [r for r in digits if any(v for v in r[2:5])]
    assert picked, "no digit was ever bought"
    assert all(v is None or 0.0 <= v <= 1.0 for r in digits for v in r[2:])
    # Win rates only where an army held the digit in those rounds, which it was bought for.
    assert all(r[5] is not None for r in picked if r[2])

    columns, cooperation = results["matrix_cooperation"]
    assert columns == ["variant", "policy", "seats", "tokens", "cooperation"]
    assert {r[0] for r in cooperation} <= {"prisoners-dilemma", "stag-hunt"}
    assert sum(r[2] for r in cooperation) == 8 * 6  # every seat of the six episodes
    assert "person" in {r[1] for r in cooperation}
    assert all(0.0 <= r[4] <= 1.0 for r in cooperation)

    columns, maze = results["maze_finish"]
    assert columns == ["size", "matches", "median_s", "p90_s", "draw_rate"]
    assert sum(r[1] for r in maze) == 6 and {r[0] for r in maze} <= {"5×5", "7×5"}
    assert all(0 < r[2] <= r[3] and 0.0 <= r[4] <= 1.0 for r in maze)

    # Both seats of a game of simultaneous moves play: each came out of some maze.
    exits = script().table(tmp_path / "export", "arena.games.maze.v1.Exited")
    exited = duckdb.sql(f"SELECT DISTINCT player FROM {exits}").fetchall()
    assert sorted(exited) == [(1,), (2,)]

    columns, ladders = results["ladders"]
    assert [r[0] for r in ladders] == ["digits", "maths-warriors", "maze"]
    assert all(r[2] <= r[3] <= r[4] <= r[5] <= r[6] for r in ladders)
    assert all(1 <= r[1] <= PLAYERS for r in ladders)

    columns, season = results["digits_season"]
    assert columns == ["season", "combats", "players", "p10", "median", "p90"]
    assert season and season[0][1] == "1-10"
    assert all(1 <= r[2] <= 3 and r[3] <= r[4] <= r[5] for r in season)

    for name in results:
        png = (tmp_path / "plots" / f"{name}.png").read_bytes()
        assert png.startswith(PNG) and len(png) > 5000


def test_the_page_shows_the_queries_the_script_runs() -> None:
    page = (REPO_ROOT / "docs" / "analytics.md").read_text()
    for example in script().examples(Path("EXPORT")):
        shown = re.sub(
            r"read_parquet\('EXPORT/parquet/arena\.(?:\w+\.)*v1\.(\w+)/\*/\*/\*\.parquet', "
            r"hive_partitioning = true\)",
            r"\1",
            example.sql,
        ).strip()
        assert shown in page, example.name
        assert f"analytics/{example.name}.png" in page
        assert (REPO_ROOT / "docs" / "analytics" / f"{example.name}.png").read_bytes()[:8] == PNG


def test_the_script_refuses_a_directory_without_an_export(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 2 and "no Parquet export" in done.stderr
