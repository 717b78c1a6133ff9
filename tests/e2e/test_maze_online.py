"""The Maze online, end to end (issue 17, "Done when"): real WebSockets against one embedded
`arena serve` process shared by every case. A whole game to a win watched by an observer who
sees everything; a draw inside the 200 ms window (two scripted players in lockstep on a maze
symmetric under the half turn) and its rematch; a reconnect; a ranked quick match on the `maze`
ladder; a `kill -9` mid-game losing no accepted move; and `arena verify` re-deciding them all.

Every view is put back together from its records by chunk index and count alone (tests/e2e/
maze.py), so what a client needs is exactly what the socket carries.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_engine.maze import ObserverView

from tests.e2e.client import Player, signed_in
from tests.e2e.maze import (
    Views,
    come_back,
    lockstep,
    maze_room,
    move,
    observed,
    own,
    plan,
    plan_end,
    walk,
    whole_maze,
)
from tests.processes.arena_process import ArenaProcess, arena_env, free_port, run_to_exit

pytestmark = pytest.mark.slow

COOLDOWN_MS = 50
#: A small maze, a short countdown, the product's cooldown (50 ms here).
SMALL = {"width": 7, "height": 7, "cooldown_ms": COOLDOWN_MS, "countdown_ms": 300}
PASSWORD = "correct horse battery"
_names = itertools.count(1)


class Server:
    """`arena serve` on one data dir and port, killed and started again at will."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.env = arena_env(
            workdir / "var",
            free_port(),
            ARENA_WS_RATE_LIMIT="1000",
            ARENA_PROJECTION_POLL_MS="50",
            ARENA_LOG_LEVEL="WARNING",
        )
        self.starts = 0
        self.process = self.start()

    def start(self) -> ArenaProcess:
        self.starts += 1
        self.process = ArenaProcess(["serve"], self.env, self.workdir / f"arena-{self.starts}.log")
        self.process.wait_until("/readyz", 200)
        return self.process

    @property
    def url(self) -> str:
        return self.process.url


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    serving = Server(Path(tmp_path_factory.mktemp("maze-online")))
    try:
        yield serving
    finally:
        serving.process.terminate()


async def test_a_win_watched_by_an_observer_who_sees_everything(server: Server) -> None:
    host, guest, observer = [await signed_in(server.url) for _ in range(3)]
    _, match_id, seats = await maze_room(host, guest, observer, **SMALL)
    watching = Views(observer)
    first = await watching.next()
    assert whole_maze(first) and isinstance(first, ObserverView)
    views = {n: Views(seats[n]) for n in (1, 2)}
    for n in (1, 2):
        started = await seats[n].push("maze_match")
        assert (started["match_id"], started["role"]) == (match_id, str(n))
        assert own(await views[n].playing()).status.cell == first.players[n - 1].cell
    # Player 1 walks out; player 2 stands still. The window closes by the service's timer.
    await walk(COOLDOWN_MS, seats[1], plan(first, 1))
    for n in (1, 2):
        result = own(await views[n].over()).status.result
        assert result is not None and (result.winner, result.reason) == (1, "exit")
    last = await watching.over()
    assert isinstance(last, ObserverView) and last.result is not None
    assert (last.result.winner, last.result.reason) == (1, "exit")
    assert last.players[0].exit == "exited" and last.players[1].exit == "closed"
    # The observer was shown every state the match went through, each the whole maze.
    seqs = [v.state_seq for v in watching.seen]
    assert seqs == list(range(seqs[0], seqs[-1] + 1)) and seqs[0] == first.state_seq
    assert all(whole_maze(v) for v in watching.seen)
    # A player sees their square, not the maze; the mover was shown each accepted move.
    assert any(len(own(v).cells) < 49 for v in views[1].seen)
    assert len(views[1].seen) >= len(plan(first, 1))
    for player in (host, guest, observer):
        await player.close()


async def test_a_draw_inside_the_finish_window_then_a_rematch(server: Server) -> None:
    host, guest, observer = [await signed_in(server.url) for _ in range(3)]
    # Every passage open but the edges: a path to the key avoiding the opponent's key always
    # exists, so the two plans are images of one another, of the same length.
    _, match_id, seats = await maze_room(host, guest, observer, **SMALL, loops_percent=100)
    watching = Views(observer)
    first = await watching.next()
    assert isinstance(first, ObserverView)
    plans = {n: plan(first, n) for n in (1, 2)}
    assert len(plans[1]) == len(plans[2])
    views = {n: Views(seats[n]) for n in (1, 2)}
    for n in (1, 2):
        await views[n].playing()
    await lockstep(seats, plans, COOLDOWN_MS, len(plans[1]))
    last = await watching.over()
    assert isinstance(last, ObserverView) and last.result is not None
    assert (last.result.winner, last.result.reason) == (None, "window")
    exits = [p.exit_at for p in last.players]
    assert None not in exits and abs(exits[0] - exits[1]) <= 200  # type: ignore[operator]
    for n in (1, 2):
        result = own(await views[n].over()).status.result
        assert result is not None and (result.winner, result.reason) == (None, "window")
    # A rematch through the room: a new match, seats swapped.
    await host.push("lobby", event="room_match_finished")
    await host.ok("rematch_request")
    await guest.ok("rematch_accept")
    again = await host.push("lobby", event="room_match_started")
    assert again["data"]["match_id"] != match_id
    swapped = [s["player_id"] for s in again["data"]["seats"]]
    assert swapped == [seats[2].player_id, seats[1].player_id]
    assert (await host.push("maze_match", match_id=again["data"]["match_id"]))["role"] == "2"
    await host.ok("resign")
    for player in (host, guest, observer):
        await player.close()


async def test_a_reconnect_rebuilds_the_same_view(server: Server) -> None:
    host, guest, observer = [await signed_in(server.url) for _ in range(3)]
    code, _, seats = await maze_room(host, guest, observer, **SMALL)
    first = await Views(observer).next()
    assert isinstance(first, ObserverView)
    steps = plan(first, 1)
    mover = Views(seats[1])
    await mover.playing()
    await walk(COOLDOWN_MS, seats[1], steps[:3])
    # The views of the accepted moves were pushed before their acks: all here now.
    while seats[1].has("maze_view"):
        await mover.next()
    before = mover.seen[-1]
    await seats[1].close()
    back = await come_back(server.url, seats[1], code)
    snapshot = await back.push("maze_match")
    assert snapshot["role"] == "1"
    # The snapshot's records reassemble to the view the player had before leaving.
    rebuilt = await Views(back).next()
    assert rebuilt == before
    await walk(COOLDOWN_MS, back, steps[3:])
    result = own(await Views(back).over()).status.result
    assert result is not None and result.winner == 1
    for player in (back, seats[2], observer):
        await player.close()


async def account(url: str) -> Player:
    name = f"mazer{next(_names)}"
    async with httpx.AsyncClient(base_url=url) as http:
        made = await http.post("/v1/accounts", json={"username": name, "password": PASSWORD})
    assert made.status_code == 201, made.text
    player = Player(url)
    player.player_id, player.name, player.token = (
        made.json()["player_id"],
        name,
        made.json()["token"],
    )
    await player.connect()
    return player


async def leaderboard(url: str, token: str, want: set[str]) -> dict[str, Any]:
    """The `maze` ladder once it lists ``want`` (the read models follow the log)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers) as http:
        for _ in range(300):
            answer = await http.get("/v1/leaderboards/maze?limit=100")
            if answer.status_code == 200:
                entries = {e["player_id"]: e for e in answer.json()["entries"]}
                if want <= set(entries):
                    return entries
            await asyncio.sleep(0.05)
    raise AssertionError("the maze ladder never listed both players")


async def test_a_ranked_quick_match_moves_the_maze_ladder(server: Server) -> None:
    ann, ben = await account(server.url), await account(server.url)
    for player in (ann, ben):
        await player.ok("queue", game="maze", mode="ranked")
    started = {p.player_id: await p.push("maze_match") for p in (ann, ben)}
    match_id = started[ann.player_id]["match_id"]
    assert started[ben.player_id]["match_id"] == match_id
    assert started[ann.player_id]["mode"] == "ranked"
    seats = {int(started[p.player_id]["role"]): p for p in (ann, ben)}
    assert started[ann.player_id]["settings"]["width"] == 15  # a quick match: the defaults
    await Views(seats[2]).playing()
    await seats[2].ok("resign")
    result = own(await Views(seats[1]).over()).status.result
    assert result is not None and (result.winner, result.reason) == (1, "forfeit")
    # Elo from 1000 each: the winner gains 12, the loser gives 12.
    entries = await leaderboard(server.url, ann.token, {ann.player_id, ben.player_id})
    assert entries[seats[1].player_id]["rating"] == 1012
    assert entries[seats[2].player_id]["rating"] == 988
    for player in (ann, ben):
        await player.close()


async def test_kill_9_mid_game_loses_no_accepted_move(server: Server) -> None:
    host, guest, observer = [await signed_in(server.url) for _ in range(3)]
    code, match_id, seats = await maze_room(host, guest, observer, **SMALL)
    first = await Views(observer).next()
    assert isinstance(first, ObserverView)
    steps = {n: plan(first, n) for n in (1, 2)}
    for n in (1, 2):
        await Views(seats[n]).playing()
    acked = [await move(seats[n], steps[n].pop(0)) for n in (1, 2)]
    await asyncio.sleep(COOLDOWN_MS / 1000)
    acked.append(await move(seats[1], steps[1].pop(0)))
    server.process.terminate(signal.SIGKILL)
    server.start()
    for player in (host, guest, observer):
        await player.close()
    back = {n: await come_back(server.url, seats[n], code) for n in (1, 2)}
    # Each player's rebuilt view is at the last acknowledged state or later, and their cell is
    # where their acknowledged moves took them.
    for n in (1, 2):
        assert (await back[n].push("maze_match"))["match_id"] == match_id
        view = own(await Views(back[n]).next())
        assert view.state_seq >= acked[-1]["seq"]
        assert view.phase == "playing"
    watcher = await signed_in(server.url)
    await watcher.ok("watch_match", match_id=match_id)
    now = await Views(watcher).next()
    assert isinstance(now, ObserverView) and now.state_seq == acked[-1]["seq"]
    walked = {1: plan(first, 1)[:2], 2: plan(first, 2)[:1]}
    for n in (1, 2):
        assert now.players[n - 1].cell == plan_end(first, n, walked[n])
    await walk(COOLDOWN_MS, back[1], steps[1])
    result = observed(await Views(watcher).over()).result
    assert result is not None and (result.winner, result.reason) == (1, "exit")
    for player in (*back.values(), watcher):
        await player.close()


def test_arena_verify_re_decides_every_maze_game(server: Server) -> None:
    verified = run_to_exit(["verify", "--strict"], server.env, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "OK" in verified.stdout
    matches = int(verified.stdout.split(" matches")[0].split()[-1])
    assert matches >= 6, verified.stdout
