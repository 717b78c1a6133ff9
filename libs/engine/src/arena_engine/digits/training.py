"""Training: once per round, one level 1 or 2 digit, one question at the training stage."""

from __future__ import annotations

from .catalogue import MAX_LEVEL
from .slate import Digit, Slate, SlateError


def trainable(slate: Slate, cell: int) -> Digit:
    """The digit at `cell` if it may be trained, else a SlateError."""
    if not isinstance(cell, int) or not 1 <= cell <= len(slate):
        raise SlateError("bad_cell")
    digit = slate[cell - 1]
    if digit is None:
        raise SlateError("cell_empty")
    if digit.level >= MAX_LEVEL:
        raise SlateError("max_level")
    return digit


def answer_is_right(answer: int | None, expected: int, answered_ms: int, deadline_ms: int) -> bool:
    """Right only when it is the answer and it arrived by the deadline."""
    return answer is not None and answer == expected and answered_ms <= deadline_ms
