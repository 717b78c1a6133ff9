"""The project's own Digits vectors (explicit slates in, full result out) go through the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arena_engine.digits.vectors import run_case
from arena_engine.digits.vectors_ladder import LADDER_OPS
from arena_engine.digits.vectors_play import PLAY_OPS
from arena_engine.vectors import check_file

from tests.conftest import _shared_dir

HERE = Path(__file__).parent


def test_own_combat_vectors_pass() -> None:
    report = check_file(HERE / "combat_vectors.jsonl")
    failures = [r for r in report.results if r.status != "passed"]
    assert not failures, failures
    assert report.count("passed") >= 20


def test_own_game_and_rules_vectors_pass() -> None:
    report = check_file(HERE / "vectors.jsonl")
    assert [r for r in report.results if r.status != "passed"] == []
    ops = {json.loads(line)["op"] for line in (HERE / "vectors.jsonl").read_text().splitlines()}
    assert ops >= set(PLAY_OPS) | set(LADDER_OPS)  # every op has cases others can copy


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ({"op": "play", "mode": "ranked", "steps": [{"type": "Reroll"}]}, "bad_t"),
        ({"op": "play", "mode": "ranked", "steps": [{"t": 0, "type": "Nope"}]}, "unknown_type"),
        ({"op": "play", "mode": "ranked", "steps": ["StartFocus"]}, "bad_step"),
        ({"op": "play", "mode": "blitz", "steps": []}, "unknown_mode"),
        ({"op": "paris", "ms": "noon"}, "bad_ms"),
        ({"op": "ladder", "steps": [{"combat": {}, "void": []}]}, "bad_step"),
        ({"op": "credits", "steps": [{"type": "Steal"}]}, "bad_step"),
        ({"op": "season_leaderboard", "entries": [{"player": "a", "elo": 3}]}, "bad_entry"),
        ({"op": "room_schedule", "players": ["a", "a"], "round": 1}, "duplicate_player"),
    ],
)
def test_bad_vector_input_is_a_clear_error(case: dict[str, object], code: str) -> None:
    assert run_case({"game": "digits", **case}) == {"error": code}


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
