"""Benchmarks print every target line through bench.targets, whose verdict comes from the figure
measured: a missed target cannot read as met, nor a target stand as fixed text beside a figure."""

from __future__ import annotations

import re
from pathlib import Path

from bench.targets import target_line

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_the_verdict_is_computed_from_the_figure() -> None:
    assert target_line(0.75, ">=", 0.8, "0.8x raw") == "target >= 0.8x raw: MISSED"
    assert target_line(0.8, ">=", 0.8, "0.8x raw") == "target >= 0.8x raw: MET"
    assert target_line(504, ">=", 1000, "1,000 moves/s") == "target >= 1,000 moves/s: MISSED"
    assert target_line(49.9, "<", 50, "50 ms", "p99") == "target p99 < 50 ms: MET"
    assert target_line(50, "<", 50, "50 ms", "p99") == "target p99 < 50 ms: MISSED"
    assert target_line(5.0, "<=", 5) == "target <= 5: MET"
    assert target_line(float("nan"), "<", 50).endswith("MISSED")


def test_no_bench_writes_a_target_or_its_verdict_as_fixed_text() -> None:
    fixed = re.compile(r"target\s*(?:[<>]=?|≤|≥)|[\"'](?:MET|MISSED|met|NOT met|OVER TARGET)[\"']")
    for path in sorted(BENCH.glob("*.py")):
        if path.name == "targets.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not fixed.search(line), f"{path.name}:{number}: {line.strip()}"
