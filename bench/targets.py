"""A benchmark's target line: the verdict, MET or MISSED, computed from the figure it measured.

Every bench prints its targets through :func:`target_line`, never as fixed text beside a figure,
so a missed target cannot read as a met one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


def met(figure: float, op: str, bound: float) -> bool:
    """Whether ``figure op bound`` holds (a figure that is not a number meets nothing)."""
    return COMPARISONS[op](figure, bound)


def target_line(figure: float, op: str, bound: float, shown: str = "", what: str = "") -> str:
    """``target [what] op shown: MET`` (or ``MISSED``): ``shown`` is the bound as the reader
    should see it, with its unit (default: the bound itself)."""
    verdict = "MET" if met(figure, op, bound) else "MISSED"
    subject = f"{what} " if what else ""
    return f"target {subject}{op} {shown or f'{bound:,g}'}: {verdict}"
