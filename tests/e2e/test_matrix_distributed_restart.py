"""Issue 14, distributed: the match service's process (`arena match`, on the Tansu broker with
PostgreSQL and Redis, a gateway on each side) killed with `kill -9` while a Matrix Games beat is
open, one seat's order for it acknowledged, the other's not given. The sockets stay on their
gateways; the new match service plays the beat at its deadline (rebuilt from the log) with the
acknowledged order and the fallback, the episode ends, its views reach the seats through the
gateways, and `arena verify --strict` replays the match's log as recorded.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import pytest
from arena_games.contract import Viewer
from arena_games.matrix_games import wire
from arena_games.matrix_games.bot import MatrixGamesBot
from arena_games.matrix_games.replay import replay_bytes
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mg
from arena_games.registry import STANDARD
from arena_runtime.config import Settings
from arena_runtime.envelope import SCHEMAS

from tests.e2e.test_distributed import SERVICES, Stack, signed_in
from tests.e2e.test_distributed import receiver as receiver  # the fixtures
from tests.e2e.test_distributed import stack as stack
from tests.e2e.test_relayed_games import match_events, matrix_room, next_push
from tests.processes.arena_process import run_to_exit
from tests.processes.test_matrix_restart_mid_episode import EPISODE, order_beat

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


async def test_kill_9_of_the_match_service_mid_beat_loses_no_acknowledged_order(
    stack: Stack,
) -> None:
    gateways = stack.gateways
    host = await signed_in(gateways[0])
    guest = await signed_in(gateways[1], sign_in_at=gateways[0])
    _, match_id, seats = await matrix_room(gateways[0], [host, guest], **EPISODE)
    number = {p.player_id: n for n, p in seats.items()}
    bots = {p.player_id: MatrixGamesBot(Viewer(number[p.player_id])) for p in (host, guest)}
    acked: list[dict[str, Any]] = []
    for events in await asyncio.gather(
        *(order_beat(p, bots[p.player_id], 0) for p in (host, guest))
    ):
        acked += events
    acked += await order_beat(host, bots[host.player_id], 1)
    orders = {(e["slot"], e["beat"], e["intent"]) for e in acked if e["type"] == "order_accepted"}
    match = SERVICES.index("match")
    stack.processes[match].terminate(signal.SIGKILL)
    stack.start(match).wait_until("/readyz", 200)

    # Nobody orders again: the sockets, still on their gateways, are shown the episode's end.
    async def until_final(player: Any) -> None:
        while (await next_push(player, wait=60))["type"] != "final":
            pass

    await asyncio.gather(until_final(host), until_final(guest))
    env = stack.envs[match]
    settings = Settings.model_validate(
        {
            "data_dir": env["ARENA_DATA_DIR"],
            "kafka_bootstrap": env["ARENA_KAFKA_BOOTSTRAP"],
            "topic_prefix": env["ARENA_TOPIC_PREFIX"],
            "partitions": int(env["ARENA_PARTITIONS"]),
        }
    )
    STANDARD.register_schemas(SCHEMAS)
    payloads = [wire.unwrapped(e.payload) for e in await match_events(settings, match_id)]
    given = {(p.seat - 1, p.beat, p.order.intent) for p in payloads if isinstance(p, mg.OrderGiven)}
    assert orders <= given
    played = {p.beat: p for p in payloads if isinstance(p, mg.BeatPlayed)}
    assert sorted(played) == [0, 1, 2] and played[2].last
    host_slot, guest_slot = number[host.player_id] - 1, number[guest.player_id] - 1
    assert played[1].orders[host_slot].source == "player"
    assert played[1].orders[guest_slot].source == "fallback"
    assert b'"ending":"full_match"' in replay_bytes(payloads)
    # The log replays as recorded (this stack runs no projections: the served replay is the
    # embedded test's, tests/processes/test_matrix_restart_mid_episode.py).
    verified = run_to_exit(["verify", "--strict", match_id], env, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    await host.close()
    await guest.close()
