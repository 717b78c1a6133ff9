"""docs/rules/maze.md must tell the truth about the settings and the record format."""

from __future__ import annotations

import json
import re
from pathlib import Path

from arena_engine.maze import MazeSettings, project, view_records
from arena_engine.maze.settings import RANGES

from tests.engine.maze.play import started

DOC = (Path(__file__).resolve().parents[3] / "docs" / "rules" / "maze.md").read_text()


def test_the_settings_table_matches_the_defaults_and_ranges() -> None:
    rows = {
        cells[0].strip("`"): cells
        for line in DOC.splitlines()
        if line.startswith("| `")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    defaults = MazeSettings().to_dict()
    assert set(rows) == set(defaults)
    for name, (low, high) in RANGES.items():
        assert rows[name][1] == str(defaults[name]), name
        assert rows[name][2].startswith(f"{low}..{high}"), name


def test_the_documented_record_members_are_the_records_members() -> None:
    state, _ = started(MazeSettings(), seed=5)
    for role in (1, "observer"):
        first = json.loads(view_records(project(state, role))[0])  # type: ignore[arg-type]
        for member in first:
            assert re.search(f"`{member}[` ]", DOC), member
