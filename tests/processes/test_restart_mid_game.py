"""Issue 12, "done when": the whole embedded process (`arena serve`) is stopped mid-game, by
SIGTERM or `kill -9`, and started again on the same data dir. Two guests then reconnect through
the protocol with their old tokens and finish the game; or one stays away, and the game ends by
forfeit when the reconnect window (counted from the restart) closes.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_games.maths_warriors.bot import Mirror

from tests.e2e.client import Player
from tests.e2e.games import play_move, play_to_the_end
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

pytestmark = pytest.mark.slow
MOVES_BEFORE = 4


class Restartable:
    """`arena serve` on one data dir and port, stopped and started again at will."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.tmp_path = tmp_path
        self.env = arena_env(tmp_path / "var", free_port(), **env)
        self.starts = 0
        self.process = self.start()

    def start(self) -> ArenaProcess:
        self.starts += 1
        log = self.tmp_path / f"arena-{self.starts}.log"
        self.process = ArenaProcess(["serve"], self.env, log)
        self.process.wait_until("/readyz", 200)
        return self.process

    def restart(self, sig: int) -> None:
        self.process.terminate(sig)
        self.start()


@pytest.fixture
def restartable(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Restartable]:
    server = Restartable(tmp_path, **getattr(request, "param", {}))
    try:
        yield server
    finally:
        server.process.terminate()


async def start_room_game(url: str) -> tuple[Player, Player, Mirror, dict[int, Player]]:
    host, guest = await Player(url).sign_in(), await Player(url).sign_in()
    await host.connect()
    await guest.connect()
    code = (await host.ok("create_room"))["code"]
    await guest.ok("join_room", code=code)
    snapshot = await host.push("snapshot")
    await guest.push("snapshot")
    seats = {
        s["seat"]: (host if s["player_id"] == host.player_id else guest) for s in snapshot["seats"]
    }
    mirror = Mirror.of(snapshot)
    for _ in range(MOVES_BEFORE):
        await play_move(seats[mirror.to_move], mirror)
    return host, guest, mirror, seats


async def come_back(url: str, before: Player, code: str) -> tuple[Player, dict[str, Any]]:
    """A new socket with the old token, then `reconnect`: its ack, then its snapshot."""
    player = Player(url)
    player.player_id, player.name, player.token = before.player_id, before.name, before.token
    player._ids = before._ids  # message ids are unique per session: new ones go on counting
    authed = await player.connect()
    assert authed is not None and authed["type"] == "ack", authed  # the old token still works
    back = await player.ok("reconnect", code=code, player_id=player.player_id, token=player.token)
    assert back["code"] == code
    return player, await player.push("snapshot", match_id=back["match_id"])


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
async def test_both_guests_reconnect_with_their_old_tokens_and_finish(
    restartable: Restartable, sig: int
) -> None:
    url = restartable.process.url
    host, guest, mirror, seats = await start_room_game(url)
    code = next(m["data"]["code"] for m in host.pushes if m.get("event") == "room_match_started")
    to_move, dice = mirror.to_move, mirror.dice
    restartable.restart(sig)
    await host.close()
    await guest.close()

    host2, snapshot = await come_back(url, host, code)
    guest2, _ = await come_back(url, guest, code)
    # The game is where it was: no move acknowledged before the crash was lost.
    assert snapshot["status"] == "playing" and snapshot["to_move"] == to_move
    assert Mirror.of(snapshot).dice == dice
    again = {n: (host2 if p is host else guest2) for n, p in seats.items()}
    over = await play_to_the_end(again, Mirror.of(snapshot))
    assert over["reason"] == "all_captured", over
    await host2.close()
    await guest2.close()


# The window opens when the match service recovers, before the whole process is ready: 20 s
# leave a loaded machine's restart and reconnect inside it.
@pytest.mark.parametrize("restartable", [{"ARENA_MATCH_RECONNECT_SECONDS": "20"}], indirect=True)
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
async def test_a_guest_who_stays_away_after_a_restart_forfeits(
    restartable: Restartable, sig: int
) -> None:
    url = restartable.process.url
    host, guest, _, _ = await start_room_game(url)
    code = next(m["data"]["code"] for m in host.pushes if m.get("event") == "room_match_started")
    restartable.restart(sig)
    await host.close()
    await guest.close()

    host2, snapshot = await come_back(url, host, code)
    assert snapshot["status"] == "playing"
    # The guest never comes back: when the window opened at the restart closes, the host wins.
    over = await host2.push("game_over", wait=60)
    assert over["reason"] == "forfeit" and over["winner_player_id"] == host.player_id
    late, final = await come_back(url, guest, code)
    assert final["status"] == "over" and final["win_reason"] == "forfeit"
    await host2.close()
    await late.close()
