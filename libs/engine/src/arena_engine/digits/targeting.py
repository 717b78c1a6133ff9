"""Who targets whom: front column first, then c-1, c+1, c-2, c+2, c-3, c+3; then the back row."""

from __future__ import annotations

from collections.abc import Sequence


def _column_order(column: int) -> tuple[int, ...]:
    order = [column]
    for step in (1, 2, 3):
        for c in (column - step, column + step):
            if 0 <= c < 4:
                order.append(c)
    return tuple(order)


#: For a hitter in column 0..3, the opposing cells (0..7) in the order they are tried.
TARGET_ORDER: tuple[tuple[int, ...], ...] = tuple(
    _column_order(c) + tuple(i + 4 for i in _column_order(c)) for c in range(4)
)


def target_cell(column: int, occupied: Sequence[bool]) -> int | None:
    """The opposing cell (0..7) hit from `column` (0..3); `occupied` tells which cells hold one."""
    for cell in TARGET_ORDER[column]:
        if occupied[cell]:
            return cell
    return None
