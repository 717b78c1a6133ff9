"""A match's fixed layout: the maze's passages, its objects and the two starts.

``Setup`` validates on construction (``bad_maze`` for anything the rule vectors call malformed)
and keeps the lookups the rules need. Its dict form is the rule vectors' (``maze``, ``objects``,
``start``), which is also how ``MatchStarted`` records it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .errors import ErrorCode, MazeError
from .geometry import DIRECTIONS, FLAG, OPPOSITE, edges_of, neighbour

KINDS: Final = ("key", "compass", "exit", "vision")
OWNED: Final = frozenset({"key", "compass", "exit"})
PLAYERS: Final = (1, 2)


def _bad(message: str) -> MazeError:
    return MazeError(ErrorCode.BAD_MAZE, message)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class MazeObject:
    """A key, compass or exit of ``owner`` (1 or 2), or a vision artifact (owner None).

    ``dir`` is an exit's outward side (a map edge of its cell); None for the other kinds.
    """

    kind: str
    owner: int | None
    cell: int
    dir: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "owner": self.owner, "cell": self.cell}
        if self.kind == "exit":
            out["dir"] = self.dir
        return out


@dataclass(frozen=True, slots=True)
class Setup:
    width: int
    height: int
    cells: tuple[int, ...]
    objects: tuple[MazeObject, ...]
    starts: tuple[int, int]
    # Lookups, derived from the objects (index 0 is player 1's).
    key_cells: tuple[int, int] = field(init=False, compare=False, repr=False)
    exits: tuple[tuple[int, str], tuple[int, str]] = field(init=False, compare=False, repr=False)
    compasses: tuple[int | None, int | None] = field(init=False, compare=False, repr=False)
    visions: frozenset[int] = field(init=False, compare=False, repr=False)
    indexed_cells: tuple[tuple[int, int], ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        w, h = self.width, self.height
        if not (_is_int(w) and _is_int(h)) or w < 1 or h < 1:
            raise _bad("width and height must be positive integers")
        n = w * h
        if len(self.cells) != n:
            raise _bad(f"cells must hold width × height = {n} flags")
        for i, flags in enumerate(self.cells):
            if not _is_int(flags) or not 0 <= flags <= 15:
                raise _bad(f"cell {i}: flags must be an integer in 0..15")
        for i, flags in enumerate(self.cells):
            for d in DIRECTIONS:
                if not flags & FLAG[d]:
                    continue
                j = neighbour(w, h, i, d)
                if j is None:
                    raise _bad(f"cell {i} opens {d} off the map")
                if not self.cells[j] & FLAG[OPPOSITE[d]]:
                    raise _bad(f"cell {i} opens {d} but cell {j} does not open back")
        if len(self.starts) != 2 or not all(_is_int(s) and 0 <= s < n for s in self.starts):
            raise _bad("each player needs a start cell inside the map")
        keys: dict[int, int] = {}
        exits: dict[int, tuple[int, str]] = {}
        compasses: dict[int, int] = {}
        visions: set[int] = set()
        for obj in self.objects:
            if obj.kind not in KINDS:
                raise _bad(f"unknown object kind {obj.kind!r}")
            if not _is_int(obj.cell) or not 0 <= obj.cell < n:
                raise _bad(f"{obj.kind} at cell {obj.cell!r} lies outside the map")
            if obj.kind == "vision":
                if obj.owner is not None:
                    raise _bad("a vision artifact has no owner")
                if obj.cell in visions:
                    raise _bad(f"two vision artifacts on cell {obj.cell}")
                visions.add(obj.cell)
                continue
            if obj.owner not in PLAYERS:
                raise _bad(f"a {obj.kind} needs owner 1 or 2")
            tables: dict[str, dict[int, Any]] = {"key": keys, "compass": compasses, "exit": exits}
            table = tables[obj.kind]
            if obj.owner in table:
                raise _bad(f"player {obj.owner} has two {obj.kind}s")
            if obj.kind == "exit":
                if obj.dir not in edges_of(w, h, obj.cell):
                    raise _bad(f"exit dir {obj.dir!r} is not a map edge of cell {obj.cell}")
                table[obj.owner] = (obj.cell, obj.dir)
            else:
                table[obj.owner] = obj.cell
        if set(keys) != {1, 2} or set(exits) != {1, 2}:
            raise _bad("each player needs exactly one key and one exit")
        for p, cell in compasses.items():
            if cell == exits[p][0]:
                raise _bad(f"player {p}'s compass lies on their own exit")
        object.__setattr__(self, "key_cells", (keys[1], keys[2]))
        object.__setattr__(self, "exits", (exits[1], exits[2]))
        object.__setattr__(self, "compasses", (compasses.get(1), compasses.get(2)))
        object.__setattr__(self, "visions", frozenset(visions))
        object.__setattr__(self, "indexed_cells", tuple(enumerate(self.cells)))

    @property
    def size(self) -> int:
        return self.width * self.height

    def exit_of(self, player: int) -> tuple[int, str]:
        return self.exits[player - 1]

    def compass_of(self, player: int) -> int | None:
        return self.compasses[player - 1]

    def to_dict(self) -> dict[str, Any]:
        """The rule vectors' form: ``maze``, ``objects`` and ``start``."""
        return {
            "maze": {"width": self.width, "height": self.height, "cells": list(self.cells)},
            "objects": [o.to_dict() for o in self.objects],
            "start": {"1": self.starts[0], "2": self.starts[1]},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Setup:
        """A setup from the rule vectors' form; anything malformed is ``bad_maze``."""
        maze, objects, start = data.get("maze"), data.get("objects"), data.get("start")
        if not isinstance(maze, Mapping) or not isinstance(objects, list):
            raise _bad("maze must be an object and objects a list")
        if not isinstance(start, Mapping) or set(start) != {"1", "2"}:
            raise _bad('start must be {"1": cell, "2": cell}')
        cells = maze.get("cells")
        if not isinstance(cells, list):
            raise _bad("maze.cells must be a list")
        parsed: list[MazeObject] = []
        for raw in objects:
            if not isinstance(raw, Mapping):
                raise _bad("every object must be an object")
            kind, owner, cell = raw.get("kind"), raw.get("owner"), raw.get("cell")
            direction = raw.get("dir") if kind == "exit" else None
            if not isinstance(kind, str) or not (owner is None or _is_int(owner)):
                raise _bad(f"malformed object {dict(raw)!r}")
            if direction is not None and not isinstance(direction, str):
                raise _bad("an exit's dir must be N, E, S or W")
            parsed.append(MazeObject(kind, owner, cell, direction))  # type: ignore[arg-type]
        return cls(
            maze.get("width"),  # type: ignore[arg-type]
            maze.get("height"),  # type: ignore[arg-type]
            tuple(cells),
            tuple(parsed),
            (start["1"], start["2"]),
        )
