"""A scripted Maze player for the contract's tests, benches and simulations: the engine's
``Explorer`` driven by exactly what its seat is pushed.

It puts each view back together from its records (``reassemble``, by ``chunk`` and ``chunks``
alone, as any client does), shows it to the Explorer, and answers with the Explorer's next
action while play is on. It sends nothing during the countdown, once it is out or the match is
decided, and nothing at all for an observer (observers cannot move).
"""

from __future__ import annotations

from typing import Any

from arena_engine.maze import Drop, Explorer, PlayerView, reassemble

from arena_games.contract import Viewer
from arena_games.maze.views import RECORD


class MazeBot:
    def __init__(self, viewer: Viewer) -> None:
        self.explorer = Explorer(viewer.seat) if viewer.seat in (1, 2) else None
        #: The records of the view being received, by chunk.
        self._chunks: dict[int, dict[str, Any]] = {}
        self.view: PlayerView | None = None

    def observe(self, message: dict[str, Any]) -> None:
        if message.get("type") != RECORD or self.explorer is None:
            return
        if message["chunk"] == 0 or any(r["seq"] != message["seq"] for r in self._chunks.values()):
            self._chunks = {}
        self._chunks[message["chunk"]] = message
        if len(self._chunks) == message["chunks"]:
            view = reassemble(self._chunks.values())
            self._chunks = {}
            assert isinstance(view, PlayerView)
            self.view = view
            self.explorer.observe(view)

    def reply(self, seed: int) -> dict[str, Any] | None:
        view = self.view
        if self.explorer is None or view is None or view.phase != "playing":
            return None
        action = self.explorer.choose()
        if action is None:
            return None
        if isinstance(action, Drop):
            return {"type": "maze_drop"}
        return {"type": "maze_move", "dir": action.dir}


def bot(viewer: Viewer) -> MazeBot:
    return MazeBot(viewer)
