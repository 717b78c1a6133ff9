"""The project's own Maze vectors and the shared ones go through `arena rules check`'s runner."""

from __future__ import annotations

import json
from pathlib import Path

from arena_engine.vectors import check_file, check_lines

from tests.conftest import _shared_dir

HERE = Path(__file__).parent


def test_own_maze_vectors_pass() -> None:
    report = check_file(HERE / "vectors.jsonl")
    failures = [r for r in report.results if r.status != "passed"]
    assert not failures, "\n".join(f"{r.case_id}: {r.actual} {r.reason}" for r in failures)
    assert report.count("passed") >= 50


def test_shared_maze_vectors_pass() -> None:
    report = check_file(_shared_dir() / "vectors" / "maze.jsonl")
    assert [r for r in report.results if r.status != "passed"] == []
    assert report.count("passed") == 24


def _case(case_id: str) -> dict[str, object]:
    for line in (HERE / "vectors.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["id"] == case_id:
            return dict(case)
    raise KeyError(case_id)


def test_a_wrong_expectation_fails() -> None:
    case = _case("window-second-exit-200-ms-later-is-a-draw")
    case["expect"] = {"result": {"winner": 1}}
    assert check_lines("x.jsonl", [json.dumps(case)]).count("failed") == 1


def test_a_record_one_byte_off_fails() -> None:
    case = _case("records-fill-chunk-zero-to-exactly-512-bytes")
    case["expect"] = {"record_bytes": {"1": [511, 289]}}
    assert check_lines("x.jsonl", [json.dumps(case)]).count("failed") == 1
