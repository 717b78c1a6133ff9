"""Runner for the language-neutral rule vectors (shared/vectors/*.jsonl)."""

from arena_engine.vectors.runner import (
    CaseResult,
    FileReport,
    check_case,
    check_file,
    check_lines,
)

__all__ = ["CaseResult", "FileReport", "check_case", "check_file", "check_lines"]
