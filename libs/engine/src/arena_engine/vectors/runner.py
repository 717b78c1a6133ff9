"""Execute rule-vector cases against the engine and compare with their expectations.

Each game registers one function in GAME_HANDLERS: it takes a case (the parsed JSON object) and
returns what the engine reports, as a dict in the vector format (``{"error": CODE}`` for a
rejection). Only the fields present in ``expect`` are compared; a game without a handler is
skipped, never passed.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]

# game name -> "module:function"; imported lazily so that one game's import error cannot hide
# another game's results.
GAME_HANDLERS: dict[str, str] = {
    "maths-warriors": "arena_engine.maths_warriors.vectors:run_case",
    "rating": "arena_engine.rating_vectors:run_case",
    "digits": "arena_engine.digits.vectors:run_case",
    "matrix-games": "arena_engine.matrix_games.vectors:run_case",
    "maze": "arena_engine.maze.vectors:run_case",
}

#: Fields whose lists are compared as multisets (the vector format says "in any order").
UNORDERED_FIELDS = frozenset({"rerolled"})

FLOAT_TOLERANCE = 1e-9


class UnsupportedGame(Exception):
    """No engine for this game (yet): the case is skipped."""


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    status: str  # "passed" | "failed" | "skipped"
    expected: Any = None
    actual: Any = None
    reason: str = ""


@dataclass
class FileReport:
    path: str
    results: list[CaseResult] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)


def _handler(game: str) -> Handler:
    target = GAME_HANDLERS.get(game)
    if target is None:
        raise UnsupportedGame(game)
    module_name, func_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise UnsupportedGame(game) from exc
        raise
    handler: Handler = getattr(module, func_name)
    return handler


def _matches(expected: Any, actual: Any, key: str | None = None) -> bool:
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        return all(k in actual and _matches(v, actual[k], k) for k, v in expected.items())
    if isinstance(expected, list):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            return False
        if key in UNORDERED_FIELDS:
            return sorted(map(json.dumps, expected)) == sorted(map(json.dumps, actual))
        return all(_matches(e, a) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, float) or isinstance(actual, float):
        if not isinstance(actual, (int, float)) or not isinstance(expected, (int, float)):
            return False
        return abs(float(expected) - float(actual)) <= FLOAT_TOLERANCE * max(1.0, abs(expected))
    return bool(expected == actual)


def check_case(case: dict[str, Any]) -> CaseResult:
    case_id = str(case.get("id", "?"))
    expected = case.get("expect")
    try:
        handler = _handler(str(case.get("game")))
    except UnsupportedGame:
        return CaseResult(case_id, "skipped", expected, reason=f"game {case.get('game')!r}")
    try:
        actual = handler(case)
    except UnsupportedGame as exc:
        return CaseResult(case_id, "skipped", expected, reason=str(exc))
    except Exception as exc:  # a crashing case is a failure, never a stop of the whole run
        return CaseResult(case_id, "failed", expected, reason=f"{type(exc).__name__}: {exc}")
    status = "passed" if _matches(expected, actual) else "failed"
    return CaseResult(case_id, status, expected, actual)


def parse_cases(name: str, lines: Iterable[str]) -> Iterable[dict[str, Any]]:
    """The cases of a JSONL text; a line that is not JSON becomes an ``__invalid__`` case."""
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            yield {"id": f"{name}:{lineno}", "game": "__invalid__", "_error": str(exc)}
            continue
        yield case


def check_lines(path: str, lines: Iterable[str]) -> FileReport:
    """Check every case of a JSONL text (pure: the caller reads the file named ``path``)."""
    report = FileReport(path)
    for case in parse_cases(PurePath(path).name, lines):
        if case.get("game") == "__invalid__":
            report.results.append(
                CaseResult(str(case["id"]), "failed", reason=f"invalid JSON: {case['_error']}")
            )
            continue
        report.results.append(check_case(case))
    return report


def check_file(path: Path) -> FileReport:
    """``check_lines`` over a file: the engine's only file read, kept for the CLI and tests."""
    with path.open(encoding="utf-8") as fh:
        return check_lines(str(path), fh)
