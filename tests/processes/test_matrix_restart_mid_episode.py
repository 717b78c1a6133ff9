"""Issue 14, "done when": a restart of the match service mid-episode loses nothing. The whole
embedded process (`arena serve`) is killed with `kill -9` while a Matrix Games beat is open, one
person's order for it acknowledged and the other's not given, and started again on the same data
dir. Nobody comes back: the beat's deadline, rebuilt from the log, plays it with the acknowledged
order and the fallback for the silent seat, the later beats are played at their deadlines too,
and the replay served is the engine's for the recorded seed and orders.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_games.contract import Viewer
from arena_games.matrix_games import wire
from arena_games.matrix_games.bot import MatrixGamesBot
from arena_games.matrix_games.replay import replay_bytes
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mg
from arena_games.registry import STANDARD
from arena_runtime.config import Settings
from arena_runtime.envelope import SCHEMAS

from tests.e2e.client import Player
from tests.e2e.test_relayed_games import match_events, matrix_room, next_push
from tests.processes.test_restart_mid_game import Restartable

pytestmark = pytest.mark.slow

#: Three short beats, no pacing; a beat nobody can finish is played 2 s after it opened.
EPISODE = {"beats": 3, "ticks_per_beat": 10, "min_beat_seconds": 0, "decision_timeout_seconds": 2}


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[Restartable]:
    server = Restartable(tmp_path, ARENA_LOG_LEVEL="WARNING")
    try:
        yield server
    finally:
        server.process.terminate()


async def order_beat(player: Player, bot: MatrixGamesBot, beat: int) -> list[dict[str, Any]]:
    """Read the seat's pushes until beat ``beat`` is open, then give the bot's order for it (joined
    first, once the welcome came): the events its acks carried."""
    acked: list[dict[str, Any]] = []
    if not bot.joined:
        assert (await player.push("welcome"))["match_id"]
        acked += (await player.ok("matrix_join"))["events"]
        bot.joined = True
    while bot.observation is None or bot.observation["beat"] != beat:
        bot.observe(await next_push(player))
    reply = bot.reply(beat)
    assert reply is not None and reply.pop("type") == "matrix_order"
    return acked + (await player.ok("matrix_order", **reply))["events"]


async def test_kill_9_mid_beat_loses_no_acknowledged_order_and_the_episode_ends(
    restartable: Restartable,
) -> None:
    url = restartable.process.url
    host, guest = await Player(url).sign_in(), await Player(url).sign_in()
    await host.connect()
    await guest.connect()
    _, match_id, seats = await matrix_room(url, [host, guest], **EPISODE)
    number = {p.player_id: n for n, p in seats.items()}
    bots = {p.player_id: MatrixGamesBot(Viewer(number[p.player_id])) for p in (host, guest)}
    # Beat 0 by both; beat 1 by the host alone: its order acknowledged, the beat still open.
    acked = []
    for events in await asyncio.gather(
        *(order_beat(p, bots[p.player_id], 0) for p in (host, guest))
    ):
        acked += events
    acked += await order_beat(host, bots[host.player_id], 1)
    orders = {(e["slot"], e["beat"], e["intent"]) for e in acked if e["type"] == "order_accepted"}
    assert {(number[host.player_id] - 1, 1)} < {(slot, beat) for slot, beat, _ in orders}
    restartable.restart(signal.SIGKILL)
    await host.close()
    await guest.close()

    # Nobody comes back: every beat left is played at its deadline, by timers the restarted
    # service rebuilt from the log. The replay is served once the episode is over (409
    # match_in_progress until then), with its ending.
    reader = await Player(url).sign_in()
    headers = {"Authorization": f"Bearer {reader.token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers) as http:
        async with asyncio.timeout(60):
            while True:
                answer = await http.get(f"/v1/matches/{match_id}/replay")
                assert answer.status_code in (200, 404, 409), answer.text
                if answer.status_code == 200:
                    assert b'"ending":"full_match"' in answer.content
                    break
                await asyncio.sleep(0.2)
        served = answer.content
    restartable.process.terminate()

    settings = Settings.model_validate({"data_dir": restartable.tmp_path / "var"})
    STANDARD.register_schemas(SCHEMAS)
    payloads = [wire.unwrapped(e.payload) for e in await match_events(settings, match_id)]
    given = [p for p in payloads if isinstance(p, mg.OrderGiven)]
    # Every order acknowledged before the kill is in the log, as it was acknowledged.
    assert orders <= {(p.seat - 1, p.beat, p.order.intent) for p in given}
    played = {p.beat: p for p in payloads if isinstance(p, mg.BeatPlayed)}
    assert sorted(played) == [0, 1, 2] and played[2].last
    # Beat 1 was played after the restart with the host's order and the guest's fallback.
    host_slot, guest_slot = number[host.player_id] - 1, number[guest.player_id] - 1
    assert played[1].orders[host_slot].source == "player"
    assert (host_slot, 1, played[1].orders[host_slot].intent) in orders
    assert played[1].orders[guest_slot].source == "fallback"
    (ended,) = [p for p in payloads if isinstance(p, mg.EpisodeEnded)]
    assert ended.ending == "full_match"
    assert served == replay_bytes(payloads)
