"""Playing the Maze through the protocol, for the embedded and distributed end-to-end tests.

A socket's views are put back together from its ``maze_view`` records by ``chunk`` and
``chunks`` alone (:class:`Views`), as docs/protocol.md says a client does. Moves are scripted
from an observer's view, which holds the whole maze (:func:`plan`): shortest paths to the
player's key, then to their exit, then out. The generated maze is symmetric under the half turn,
so both players' plans have the same length, and players moving in lockstep leave in the same
round: a draw inside the 200 ms window, built from the product's own settings.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from typing import Any

from arena_engine.maze import MAX_RECORD_BYTES, ObserverView, PlayerView, View, reassemble

from tests.e2e.client import WAIT, Player

#: Passage flag and step (dx, dy) of each direction.
STEPS = {"N": (1, 0, -1), "E": (2, 1, 0), "S": (4, 0, 1), "W": (8, -1, 0)}


class Views:
    """A socket's Maze views, reassembled from its records in the order they complete."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self._parts: dict[int, dict[int, dict[str, Any]]] = {}
        self.seen: list[View] = []
        self.records = 0

    async def next(self, wait: float = WAIT) -> View:
        while True:
            record = await self.player.push("maze_view", wait)
            # The push is the record as the engine wrote it: compact JSON of at most 512 bytes.
            assert len(json.dumps(record, separators=(",", ":")).encode()) <= MAX_RECORD_BYTES
            self.records += 1
            parts = self._parts.setdefault(record["seq"], {})
            assert record["chunk"] not in parts, record
            parts[record["chunk"]] = record
            if len(parts) == record["chunks"]:
                del self._parts[record["seq"]]
                view = reassemble(parts.values())
                self.seen.append(view)
                return view

    async def until(self, done: Any, wait: float = WAIT) -> View:
        while not done(view := await self.next(wait)):
            pass
        return view

    async def playing(self) -> View:
        return await self.until(lambda v: v.phase == "playing")

    async def over(self, wait: float = WAIT) -> View:
        return await self.until(lambda v: v.phase == "over", wait)


def _path(view: ObserverView, src: int, dst: int, avoid: int) -> list[int] | None:
    """The cells of a shortest path by open passages from ``src`` to ``dst`` not entering
    ``avoid`` (``src`` left out), or None."""
    flags = dict(view.cells)
    came: dict[int, int | None] = {src: None}
    todo = deque([src])
    while todo:
        cell = todo.popleft()
        x, y = cell % view.width, cell // view.width
        for bit, dx, dy in STEPS.values():
            nxt = (y + dy) * view.width + x + dx
            if flags[cell] & bit and nxt not in came and nxt != avoid:
                came[nxt] = cell
                todo.append(nxt)
    if dst not in came:
        return None
    cells = [dst]
    while (back := came[cells[-1]]) is not None:
        cells.append(back)
    return cells[-2::-1]


def _direction(width: int, src: int, dst: int) -> str:
    return {-width: "N", 1: "E", width: "S", -1: "W"}[dst - src]


def plan(view: ObserverView, player: int) -> list[str]:
    """Player's actions from their cell out of the maze: moves (``N``, ``E``, ``S``, ``W``) to
    their key, to their exit, then out. On the way to the key the opponent's key is avoided
    when it can be; else, picked up with the empty hand, it is put down at once (``drop``)."""
    where = {(o.kind, o.owner): o for o in view.objects}
    start = view.players[player - 1].cell
    key, exit_ = where[("key", player)], where[("exit", player)]
    assert start is not None and exit_.variant is not None
    other_key = where[("key", 3 - player)].cell
    to_key = _path(view, start, key.cell, other_key) or _path(view, start, key.cell, -1)
    to_exit = _path(view, key.cell, exit_.cell, -1)
    assert to_key is not None and to_exit is not None
    actions, cell = [], start
    for nxt in to_key:
        actions.append(_direction(view.width, cell, nxt))
        if nxt == other_key:
            actions.append("drop")
        cell = nxt
    for nxt in to_exit:
        actions.append(_direction(view.width, cell, nxt))
        cell = nxt
    return [*actions, exit_.variant]


def plan_end(view: ObserverView, player: int, steps: list[str]) -> int:
    """The cell ``steps`` lead to from the player's cell in ``view``."""
    cell = view.players[player - 1].cell
    assert cell is not None
    for action in steps:
        cell += {"N": -view.width, "E": 1, "S": view.width, "W": -1, "drop": 0}[action]
    return cell


async def move(player: Player, action: str) -> dict[str, Any]:
    """An accepted move (or ``drop``): its ack names the state sequence of the view it led to."""
    if action == "drop":
        result = await player.ok("maze_drop")
    else:
        result = await player.ok("maze_move", dir=action)
    assert result["seq"] is not None, result
    return result


#: The gateway's default limit is 10 messages a second per player (``ws_rate_limit``); a move
#: every 110 ms keeps under it whatever the acks' latency, as a client must.
PACE_MS = 110


def _pause(cooldown_ms: int) -> float:
    return max(cooldown_ms, PACE_MS) / 1000


async def walk(cooldown_ms: int, player: Player, actions: list[str]) -> None:
    """One player's actions, each after the cooldown (counted from the last ack) and never
    faster than the gateway's message limit."""
    for action in actions:
        await move(player, action)
        await asyncio.sleep(_pause(cooldown_ms))


async def come_back(url: str, before: Player, code: str) -> Player:
    """A new socket with the old token, then ``reconnect`` by the room's code."""
    player = Player(url)
    player.player_id, player.name, player.token = before.player_id, before.name, before.token
    player._ids = before._ids  # message ids are unique per session
    await player.connect()
    await player.ok("reconnect", code=code, player_id=player.player_id, token=player.token)
    return player


async def maze_room(
    host: Player, guest: Player, observer: Player | None, **settings: Any
) -> tuple[str, str, dict[int, Player]]:
    """A Maze room of ``host`` and ``guest`` (started when the guest joins), watched by
    ``observer`` from its code: the code, the match id and who sits where."""
    code = (await host.ok("create_room", game="maze", settings=settings))["code"]
    if observer is not None:
        await observer.ok("watch_room", code=code)
    await guest.ok("join_room", code=code)
    started = await host.push("lobby", event="room_match_started")
    match_id = started["data"]["match_id"]
    if observer is not None:
        watched = await observer.ok("watch_match", match_id=match_id)
        assert (watched["game"], watched["seat"]) == ("maze", False)
    by_id = {host.player_id: host, guest.player_id: guest}
    seats = {n: by_id[s["player_id"]] for n, s in enumerate(started["data"]["seats"], start=1)}
    return code, match_id, seats


async def lockstep(
    seats: dict[int, Player], plans: dict[int, list[str]], cooldown_ms: int, rounds: int
) -> None:
    """``rounds`` rounds of both players' next moves sent together, each round after the
    cooldown (counted from the acks: the server's times are earlier) and the message limit."""
    for _ in range(rounds):
        await asyncio.gather(*(move(seats[n], plans[n].pop(0)) for n in plans if plans[n]))
        await asyncio.sleep(_pause(cooldown_ms))


def whole_maze(view: View) -> bool:
    return isinstance(view, ObserverView) and len(view.cells) == view.width * view.height


def own(view: View) -> PlayerView:
    assert isinstance(view, PlayerView)
    return view


def observed(view: View) -> ObserverView:
    assert isinstance(view, ObserverView)
    return view
