"""Every shared rule-vector file goes through `arena rules check`; failures fail the suite, and so
does a case the runner cannot check: every game a shared vector file names must have a handler."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_engine.vectors import check_file
from arena_engine.vectors.runner import GAME_HANDLERS, parse_cases

from tests.conftest import _shared_dir

VECTOR_FILES = sorted((_shared_dir() / "vectors").glob("*.jsonl"))


@pytest.mark.parametrize("path", VECTOR_FILES, ids=[p.name for p in VECTOR_FILES])
def test_vector_file(path: Path) -> None:
    report = check_file(path)
    failures = [r for r in report.results if r.status == "failed"]
    assert not failures, "\n".join(
        f"{r.case_id}: expected {r.expected}, got {r.actual} {r.reason}" for r in failures
    )
    # The runner counts a case it has no handler for as skipped; the suite does not accept one.
    unchecked = [r for r in report.results if r.status == "skipped"]
    assert not unchecked, (
        f"{len(unchecked)} case(s) of {path.name} were not checked ({unchecked[0].reason}): "
        "every game named in a shared vector file needs a handler in GAME_HANDLERS"
    )


def test_every_game_named_in_the_shared_vectors_has_a_handler() -> None:
    named = {
        str(case.get("game"))
        for path in VECTOR_FILES
        for case in parse_cases(path.name, path.read_text(encoding="utf-8").splitlines())
        if case.get("game") != "__invalid__"
    }
    assert VECTOR_FILES and named
    assert sorted(named - set(GAME_HANDLERS)) == []


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
