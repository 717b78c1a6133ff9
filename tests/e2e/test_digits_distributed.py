"""Digits on the distributed stack (the Tansu broker, PostgreSQL, Redis; the gateway, match and
matchmaking services each an `arena` process): a game played over a real WebSocket while the
match service is killed with `kill -9` mid-round and started again. Every action acknowledged
before the kill is in the game the player comes back to, which then goes on to its end."""

from __future__ import annotations

import asyncio
import secrets
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_games.contract import Viewer
from arena_games.digits.bot import DigitsBot

from tests.e2e.client import Player
from tests.e2e.digits import play
from tests.harness.postgres import database_of_its_own
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

SERVICES = ("match", "matchmaking", "gateway")
#: How long a restarted match service may take to own the partitions again (the killed
#: member's session has to time out first).
BACK_WITHIN = 90.0


class Stack:
    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.env = env
        self.starts = 0
        self.processes = {name: self.start(name) for name in SERVICES}
        for process in self.processes.values():
            process.wait_until("/readyz", 200)

    def start(self, name: str) -> ArenaProcess:
        self.starts += 1
        env = arena_env(self.workdir / "var", free_port(), **self.env)
        return ArenaProcess([name], env, self.workdir / f"{name}-{self.starts}.log")

    def kill_and_restart(self, name: str) -> None:
        self.processes[name].terminate(signal.SIGKILL)
        self.processes[name] = self.start(name)
        self.processes[name].wait_until("/readyz", 200)


@pytest.fixture
def stack(
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_prefix: str,
    postgres_url: str,
    redis_url: str,
    redis_prefix: str,
) -> Iterator[Stack]:
    env = {
        "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "ARENA_TOPIC_PREFIX": f"{topic_prefix}digits{secrets.token_hex(3)}.",
        "ARENA_DATABASE_URL": database_of_its_own(postgres_url),
        "ARENA_REDIS_URL": redis_url,
        "ARENA_CACHE_PREFIX": redis_prefix,
        "ARENA_PARTITIONS": "2",
        "ARENA_CONSUMER_SESSION_TIMEOUT_MS": "6000",
        "ARENA_CONSUMER_HEARTBEAT_MS": "500",
        "ARENA_WS_RATE_LIMIT": "1000",
        "ARENA_LOG_LEVEL": "WARNING",
    }
    stack = Stack(tmp_path, env)
    try:
        yield stack
    finally:
        for process in stack.processes.values():
            process.terminate()


def shop_of(push: dict[str, Any]) -> tuple[Any, ...]:
    return (push["round"], push["phase"], push["slate"], push["shop"]["gold"], push["record"])


async def test_a_kill_9_of_the_match_service_mid_round_loses_no_acknowledged_action(
    stack: Stack,
) -> None:
    url = stack.processes["gateway"].url
    player = await Player(url).sign_in()
    await player.connect()
    game = (await player.ok("play_solo", game="digits", mode="casual"))["match_id"]
    pushes = await play(
        player, lambda p: p["type"] == "digits_game" and p["phase"] == "shop", match_id=game
    )
    shop = pushes[-1]
    # Round 1's shop: buy the cheapest offer (acknowledged), then the match service dies.
    offers = [(o["price"], n) for n, o in enumerate(shop["shop"]["offers"]) if o is not None]
    price, offer = min(offers)
    assert price <= shop["shop"]["gold"]
    await player.ok("digits_buy", offer=offer)
    bought = await player.push("digits_game", match_id=game)
    while player.has("digits_game"):  # the latest
        bought = await player.push("digits_game", match_id=game)
    assert sum(d is not None for d in bought["slate"]) == 1
    stack.kill_and_restart("match")

    async def back() -> dict[str, Any]:
        while True:
            answer = await player.request("reconnect", match_id=game, player_id=player.player_id)
            if answer["type"] == "ack":
                return await player.push("digits_game", match_id=game)
            assert answer["code"] in ("timeout", "not_in_match"), answer
            await asyncio.sleep(0.5)

    snapshot = await asyncio.wait_for(back(), BACK_WITHIN)
    assert shop_of(snapshot) == shop_of(bought)
    # The game goes on from there to its end.
    bot = DigitsBot(Viewer(1))
    bot.observe(snapshot)
    pushes = await play(player, bot=bot, match_id=game)
    assert pushes[-1]["over"] and pushes[-1]["round"] >= 1
    await player.close()
