"""The slate: two rows of four cells. Placement, selling and moving.

Cells are numbered 1..8 in the rules and in events (1..4 the front row, 5..8 the back row, cell
c + 4 behind cell c); inside the engine a slate is a tuple of 8 entries indexed 0..7.
"""

from __future__ import annotations

from typing import NamedTuple

from .catalogue import MAX_LEVEL, Catalogue
from .errors import DigitsError

CELLS = 8
COLUMNS = 4


class Digit(NamedTuple):
    """A digit on a slate. A named tuple, not a dataclass: combat looks digits up by hash in
    its hottest loop, and tuple hashing is done in C."""

    kind: str
    level: int = 1

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "level": self.level}


Slate = tuple[Digit | None, ...]

EMPTY_SLATE: Slate = (None,) * CELLS


class SlateError(DigitsError):
    """A slate or slate order the rules refuse (bad cell or level, full slate, empty cell, …)."""


def make_slate(cells: dict[int, Digit] | list[Digit | None]) -> Slate:
    """A slate from {cell 1..8: digit} or a list of 8 entries."""
    if isinstance(cells, dict):
        out: list[Digit | None] = [None] * CELLS
        for cell, digit in cells.items():
            out[_index(cell)] = digit
        return tuple(out)
    if len(cells) != CELLS:
        raise SlateError("bad_slate_size")
    return tuple(cells)


def check_slate(slate: Slate, catalogue: Catalogue) -> None:
    if len(slate) != CELLS:
        raise SlateError("bad_slate_size")
    for digit in slate:
        if digit is None:
            continue
        if digit.kind not in catalogue.by_name:
            raise SlateError("unknown_kind")
        if not 1 <= digit.level <= MAX_LEVEL:
            raise SlateError("bad_level")


def _index(cell: int) -> int:
    if not isinstance(cell, int) or not 1 <= cell <= CELLS:
        raise SlateError("bad_cell")
    return cell - 1


def is_full(slate: Slate) -> bool:
    return all(d is not None for d in slate)


def default_cell(slate: Slate, support: bool) -> int:
    """The cell (1..8) a bought digit goes to: first free front cell, else first free back cell;
    supports try the back row first."""
    rows = ((4, 5, 6, 7), (0, 1, 2, 3)) if support else ((0, 1, 2, 3), (4, 5, 6, 7))
    for row in rows:
        for i in row:
            if slate[i] is None:
                return i + 1
    raise SlateError("slate_full")


def place(slate: Slate, digit: Digit, cell: int) -> Slate:
    i = _index(cell)
    if is_full(slate):
        raise SlateError("slate_full")
    if slate[i] is not None:
        raise SlateError("cell_taken")
    return (*slate[:i], digit, *slate[i + 1 :])


def remove(slate: Slate, cell: int) -> tuple[Slate, Digit]:
    i = _index(cell)
    digit = slate[i]
    if digit is None:
        raise SlateError("cell_empty")
    return (*slate[:i], None, *slate[i + 1 :]), digit


def move(slate: Slate, src: int, dst: int) -> Slate:
    """Free; onto a taken cell the two digits swap."""
    i, j = _index(src), _index(dst)
    if slate[i] is None:
        raise SlateError("cell_empty")
    cells = list(slate)
    cells[i], cells[j] = cells[j], cells[i]
    return tuple(cells)


def set_level(slate: Slate, cell: int, level: int) -> Slate:
    i = _index(cell)
    digit = slate[i]
    if digit is None:
        raise SlateError("cell_empty")
    return (*slate[:i], Digit(digit.kind, level), *slate[i + 1 :])


def slate_from_json(raw: object) -> Slate:
    """A slate from a list of 8 entries (null, "kind", {"kind", "level"}) or {"cell": entry}."""
    entries: list[object]
    if isinstance(raw, dict):
        entries = [None] * CELLS
        for key, value in raw.items():
            if not str(key).isdigit():
                raise SlateError("bad_cell")
            entries[_index(int(key))] = value
    elif isinstance(raw, list):
        entries = list(raw)
    else:
        raise SlateError("bad_slate")
    if len(entries) != CELLS:
        raise SlateError("bad_slate_size")
    out: list[Digit | None] = []
    for entry in entries:
        if entry is None:
            out.append(None)
        elif isinstance(entry, str):
            out.append(Digit(entry, 1))
        elif isinstance(entry, dict) and isinstance(entry.get("kind"), str):
            level = entry.get("level", 1)
            if not isinstance(level, int):
                raise SlateError("bad_level")
            out.append(Digit(str(entry["kind"]), level))
        else:
            raise SlateError("bad_slate")
    return tuple(out)
