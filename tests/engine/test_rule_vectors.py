"""Every shared rule-vector file goes through `arena rules check`; failures fail the suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_engine.vectors import check_file
from arena_engine.vectors.runner import GAME_HANDLERS

from tests.conftest import _shared_dir

VECTOR_FILES = sorted((_shared_dir() / "vectors").glob("*.jsonl"))


@pytest.mark.parametrize("path", VECTOR_FILES, ids=[p.name for p in VECTOR_FILES])
def test_vector_file(path: Path) -> None:
    report = check_file(path)
    failures = [r for r in report.results if r.status == "failed"]
    assert not failures, "\n".join(
        f"{r.case_id}: expected {r.expected}, got {r.actual} {r.reason}" for r in failures
    )
    skipped = [r for r in report.results if r.status == "skipped"]
    if skipped:
        # A game without an engine yet is counted as skipped, never as passed.
        pytest.skip(f"{len(skipped)} case(s) of unsupported games: {skipped[0].reason}")


def test_unsupported_game_is_skipped_not_passed() -> None:
    from arena_engine.vectors import check_case

    result = check_case({"id": "x", "game": "no-such-game", "op": "any", "expect": {}})
    assert result.status == "skipped"
    assert "no-such-game" not in GAME_HANDLERS


def test_cli_exit_code_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arena_cli.main import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "broken", "game": "maths-warriors"\n')
    assert main(["rules", "check", str(bad)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == "0 passed, 1 failed"


def test_check_lines_reads_no_file_and_names_a_bad_line() -> None:
    from arena_engine.vectors import check_lines

    case = (
        '{"id": "r1", "game": "rating", "op": "elo_maths_warriors", "winner": 1000,'
        ' "loser": 1000, "expect": {"delta": 12}}'
    )
    report = check_lines("dir/cases.jsonl", [case, "", "{not json"])
    assert report.path == "dir/cases.jsonl"
    assert [r.status for r in report.results] == ["passed", "failed"]
    assert report.results[1].case_id == "cases.jsonl:3"
