"""A scripted player: explores toward its key, then its exit, from its own view only.

It remembers every cell it has seen and where it last saw each ground key, and each turn
(``choose``) walks the shortest known path: to its own key, to its exit once it carries the
key, out through the exit once open; to the nearest edge of the unknown while the target is
unseen. It drops the opponent's key when it finds itself carrying it (never onto its own key,
which it could then not pick up), avoids cells holding the opponent's key while its hands are
empty, chases the opponent who carries its key, and otherwise wanders to the least-visited
neighbour. Deterministic: ties go N, E, S, W. The game module offers it as the contract's bot
(fed its seat's pushes; no seat is scripted online); the tests and the bench play it against
itself.
"""

from __future__ import annotations

from collections import deque

from .commands import Action, Drop, Move
from .geometry import DIRECTIONS, FLAG, neighbour
from .views import PlayerView


class Explorer:
    def __init__(self, player: int) -> None:
        self.player = player
        self.width = self.height = 0
        self.known: dict[int, int] = {}  # cell -> passage flags
        self.ground_keys: dict[int, int] = {}  # key owner -> cell where last seen
        self.exit: tuple[int, str] | None = None
        self.visits: dict[int, int] = {}
        self.view: PlayerView | None = None

    def observe(self, view: PlayerView) -> None:
        """Take in a new view of the maze (each view is complete for its square)."""
        self.view = view
        self.width, self.height = view.width, view.height
        seen = {i for i, _ in view.cells}
        self.known.update(view.cells)
        self.ground_keys = {o: c for o, c in self.ground_keys.items() if c not in seen}
        for obj in view.objects:
            if obj.kind == "key" and obj.owner is not None:
                self.ground_keys[obj.owner] = obj.cell
            elif obj.kind == "exit" and obj.owner == self.player and obj.variant is not None:
                self.exit = (obj.cell, obj.variant)
        if view.status.cell is not None:
            self.visits[view.status.cell] = self.visits.get(view.status.cell, 0) + 1

    def choose(self) -> Action | None:
        """The next action, or None when there is nothing left to do."""
        view = self.view
        if view is None or view.status.result is not None or view.status.cell is None:
            return None
        me, here = view.status, view.status.cell
        own, theirs = self.player, 3 - self.player
        if me.carrying == theirs and self.ground_keys.get(own) != here:
            return Drop()
        avoid = set() if me.carrying is not None else {self.ground_keys.get(theirs, -1)}
        goals: set[int] = set()
        if me.carrying == own:
            if self.exit is not None:
                if here == self.exit[0] and me.exit == "open":
                    return Move(self.exit[1])
                goals = {self.exit[0]}
        elif own in self.ground_keys:
            goals = {self.ground_keys[own]}
        elif view.opponent is not None and view.opponent.carrying == own:
            goals = {view.opponent.cell}
        goals.discard(here)
        if not goals and not (me.carrying == own and self.exit is not None):
            goals = self._frontier()
        direction = self._first_step(here, goals, avoid) or self._first_step(here, goals, set())
        if direction is not None:
            return Move(direction)
        return self._wander(here)

    def _frontier(self) -> set[int]:
        """Known cells with an open passage into a cell not seen yet."""
        out = set()
        for cell, flags in self.known.items():
            for d in DIRECTIONS:
                if flags & FLAG[d]:
                    j = neighbour(self.width, self.height, cell, d)
                    if j is not None and j not in self.known:
                        out.add(cell)
                        break
        return out

    def _first_step(self, start: int, goals: set[int], avoid: set[int]) -> str | None:
        """The first direction of a shortest known path from ``start`` into ``goals``."""
        if not goals:
            return None
        if start in goals:
            # The start itself borders the unknown: step into it.
            for d in DIRECTIONS:
                j = neighbour(self.width, self.height, start, d)
                if self.known.get(start, 0) & FLAG[d] and j is not None and j not in self.known:
                    return d
            return None
        first: dict[int, str] = {start: ""}
        todo = deque([start])
        while todo:
            a = todo.popleft()
            for d in DIRECTIONS:
                if not self.known.get(a, 0) & FLAG[d]:
                    continue
                b = neighbour(self.width, self.height, a, d)
                if b is None or b in first or b not in self.known or b in avoid - goals:
                    continue
                first[b] = first[a] or d
                if b in goals:
                    return first[b]
                todo.append(b)
        return None

    def _wander(self, here: int) -> Action | None:
        options = [
            (self.visits.get(j, 0), i, d)
            for i, d in enumerate(DIRECTIONS)
            if self.known.get(here, 0) & FLAG[d]
            for j in [neighbour(self.width, self.height, here, d)]
            if j is not None
        ]
        if not options:
            return None
        return Move(min(options)[2])
