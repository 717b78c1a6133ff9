"""The project's own Digits vectors (explicit slates in, full result out) go through the runner."""

from __future__ import annotations

from pathlib import Path

from arena_engine.vectors import check_file

from tests.conftest import _shared_dir

HERE = Path(__file__).parent


def test_own_combat_vectors_pass() -> None:
    report = check_file(HERE / "combat_vectors.jsonl")
    failures = [r for r in report.results if r.status != "passed"]
    assert not failures, failures
    assert report.count("passed") >= 20


def test_shared_digits_vectors_pass() -> None:
    report = check_file(_shared_dir() / "vectors" / "digits.jsonl")
    assert [r for r in report.results if r.status != "passed"] == []


def test_a_wrong_expectation_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "x", "game": "digits", "op": "combat", "us": {"1": "even"}, '
        '"them": {"1": "odd"}, "expect": {"result": "loss"}}\n'
    )
    assert check_file(bad).count("failed") == 1
