"""View records: bounded, self-describing, and refused by reassembly when they do not fit
together."""

from __future__ import annotations

import json

import pytest
from arena_engine.maze import (
    MAX_RECORD_BYTES,
    ErrorCode,
    MazeError,
    MazeSettings,
    project,
    reassemble,
    view_records,
)

from tests.engine.maze.play import started


def _records(role: object = "observer", width: int = 21) -> list[str]:
    state, _ = started(MazeSettings(width=width, height=width), seed=11)
    return view_records(project(state, role))  # type: ignore[arg-type]


def test_a_big_observer_view_is_cut_into_full_records() -> None:
    records = _records()
    sizes = [len(r.encode()) for r in records]
    assert len(records) > 5 and max(sizes) <= MAX_RECORD_BYTES
    # Greedy: no record but the last could have taken the next cell.
    assert min(sizes[:-1]) > MAX_RECORD_BYTES - len(",[440,15]")
    parsed = [json.loads(r) for r in records]
    assert [p["chunk"] for p in parsed] == list(range(len(records)))
    assert {p["chunks"] for p in parsed} == {len(records)}
    assert "players" in parsed[0] and all("players" not in p for p in parsed[1:])
    cells = [c for p in parsed for c in p.get("cells", [])]
    assert [c[0] for c in cells] == list(range(21 * 21))


def test_a_record_count_of_two_digits_is_accounted_for() -> None:
    records = _records(width=41)
    assert len(records) >= 10
    assert all(len(r.encode()) <= MAX_RECORD_BYTES for r in records)
    assert reassemble(records) == reassemble(sorted(records))


@pytest.mark.parametrize(
    "spoil",
    [
        lambda rs: rs[1:],  # a chunk missing
        lambda rs: rs + rs[-1:],  # a chunk twice
        lambda rs: [rs[0].replace('"v":1', '"v":2'), *rs[1:]],  # another version
        lambda rs: [rs[0], rs[1].replace('"seq":0', '"seq":1'), *rs[2:]],  # another view
        lambda rs: [rs[0], rs[1].replace('"chunks"', '"status":{},"chunks"'), *rs[2:]],
        lambda rs: ["not json", *rs[1:]],
        lambda rs: [],
    ],
)
def test_records_that_do_not_make_one_view_are_refused(spoil: object) -> None:
    records = _records()
    assert reassemble(records) is not None
    with pytest.raises(MazeError) as refused:
        reassemble(spoil(records))  # type: ignore[operator]
    assert refused.value.code is ErrorCode.BAD_RECORDS


def test_parsed_records_reassemble_too() -> None:
    records = _records(role=1)
    assert reassemble(json.loads(r) for r in records) == reassemble(records)
