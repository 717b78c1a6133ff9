"""Complete games on the distributed stack: the Tansu broker, PostgreSQL and Redis, every service
its own `arena` process, and two gateway instances serving the same games with a player on each
(each instance reads every partition, so both see every event; previews and the rate limit go
through Redis)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.client import Player
from tests.e2e.games import Mirror, next_move_push, play_move, play_to_the_end
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

SERVICES = ("match", "matchmaking", "rating", "gateway", "gateway")


@pytest.fixture(scope="module")
def gateways(
    tmp_path_factory: pytest.TempPathFactory,
    kafka_bootstrap: str,
    topic_prefix: str,
    postgres_url: str,
    redis_url: str,
    redis_prefix: str,
) -> Iterator[list[str]]:
    workdir = Path(tmp_path_factory.mktemp("distributed"))
    distributed = {
        "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "ARENA_TOPIC_PREFIX": f"{topic_prefix}e2e.",
        "ARENA_DATABASE_URL": postgres_url,
        "ARENA_REDIS_URL": redis_url,
        "ARENA_CACHE_PREFIX": redis_prefix,
        "ARENA_PARTITIONS": "2",
        "ARENA_MATCH_RECONNECT_SECONDS": "2",
        "ARENA_MATCH_AI_THINK_MS": "50",
        "ARENA_LOG_LEVEL": "WARNING",
    }
    processes: list[ArenaProcess] = []
    try:
        # All at once, as Kubernetes starts them: each migrates the one database at start-up.
        for number, name in enumerate(SERVICES):
            env = arena_env(workdir / "var", free_port(), **distributed)
            processes.append(ArenaProcess([name], env, workdir / f"{name}-{number}.log"))
        for process in processes:
            process.wait_until("/readyz", 200)
        yield [p.url for p, name in zip(processes, SERVICES, strict=True) if name == "gateway"]
    finally:
        for process in processes:
            process.terminate()


async def signed_in(url: str, sign_in_at: str | None = None) -> Player:
    player = (
        await Player(url).sign_in() if sign_in_at is None else await _signed_at(url, sign_in_at)
    )
    await player.connect()
    return player


async def _signed_at(url: str, sign_in_at: str) -> Player:
    """A guest created through one gateway, playing through another (sessions are in Redis)."""
    elsewhere = await Player(sign_in_at).sign_in()
    player = Player(url)
    player.player_id, player.name, player.token = (
        elsewhere.player_id,
        elsewhere.name,
        elsewhere.token,
    )
    return player


async def room_game(host_url: str, guest_url: str, **settings: object):  # type: ignore[no-untyped-def]
    host, guest = await signed_in(host_url), await signed_in(guest_url, sign_in_at=host_url)
    code = (await host.ok("create_room", settings=settings))["code"]
    await guest.ok("join_room", code=code)
    snapshot = await host.push("snapshot")
    assert (await guest.push("snapshot"))["match_id"] == snapshot["match_id"]
    by_id = {host.player_id: host, guest.player_id: guest}
    return {s["seat"]: by_id[s["player_id"]] for s in snapshot["seats"]}, snapshot, code


async def test_a_player_on_each_gateway_plays_to_the_end(gateways: list[str]) -> None:
    seats, snapshot, _ = await room_game(gateways[0], gateways[1])
    over = await play_to_the_end(seats, Mirror.of(snapshot))
    assert over["reason"] == "all_captured"
    # The loser's instance pushed the end; the winner had it in the ack of the winning move.
    loser = seats[3 - over["winner"]]
    assert (await loser.push("game_over"))["sequence"] == over["sequence"]
    for player in seats.values():
        await player.close()


async def test_against_the_ai(gateways: list[str]) -> None:
    human = await signed_in(gateways[1])
    await human.ok("play_ai", level="medium")
    snapshot = await human.push("snapshot")
    seat = next(s["seat"] for s in snapshot["seats"] if s["player_id"] == human.player_id)
    mirror = Mirror.of(snapshot)
    for _ in range(400):
        if mirror.over is not None:
            break
        if mirror.to_move == seat:
            await play_move(human, mirror)
        else:
            mirror.apply(await next_move_push(human))
    assert mirror.over is not None
    await human.close()


async def test_forfeit_after_a_disconnect_is_seen_on_the_other_gateway(gateways: list[str]) -> None:
    seats, _, _ = await room_game(gateways[0], gateways[1])
    await seats[1].close()
    assert (await seats[2].push("opponent_disconnected"))["seat"] == 1
    over = await seats[2].push("game_over")
    assert (over["reason"], over["winner"]) == ("forfeit", 2)
    await seats[2].close()


async def test_reconnect_through_the_other_gateway_inside_the_window(gateways: list[str]) -> None:
    seats, snapshot, code = await room_game(gateways[0], gateways[0])
    leaving = seats[1]
    await leaving.close()
    await seats[2].push("opponent_disconnected")
    back = await _signed_at(gateways[1], gateways[0])
    back.player_id, back.token = leaving.player_id, leaving.token
    await back.connect(auth=False)
    await back.ok("reconnect", code=code, player_id=back.player_id, token=back.token)
    again = await back.push("snapshot")  # folded from the log by an instance that never saw it
    assert (again["match_id"], again["sequence"]) == (snapshot["match_id"], again["sequence"])
    await seats[2].push("opponent_reconnected")
    seats[1] = back
    over = await play_to_the_end(seats, Mirror.of(again))
    assert over["reason"] == "all_captured"
    for player in seats.values():
        await player.close()


async def test_timeout_rematch_and_preview_across_instances(gateways: list[str]) -> None:
    seats, snapshot, _ = await room_game(gateways[0], gateways[1], move_seconds=1, preview=True)
    await seats[1].push("turn_skipped", reason="timeout")
    await seats[2].push("turn_skipped", reason="timeout")
    mover = seats[1]
    dice = snapshot["dice"]["1"]
    tokens = [{"die": "D4", "value": dice["D4"]}, "*", {"die": "D6", "value": dice["D6"]}]
    assert (await mover.ok("preview", tokens=tokens))["delivered"]
    assert (await seats[2].push("preview"))["value"] == dice["D4"] * dice["D6"]
    await seats[2].ok("resign")
    await seats[1].push("lobby", event="room_match_finished")  # matchmaking knows it is over
    await seats[1].ok("rematch_request")
    await seats[2].ok("rematch_accept")
    second = await seats[2].push("snapshot")
    assert second["match_id"] != snapshot["match_id"]
    assert (await seats[1].push("snapshot"))["match_id"] == second["match_id"]
    for player in seats.values():
        await player.close()


async def test_the_rate_limit_is_one_budget_across_instances(gateways: list[str]) -> None:
    one = await signed_in(gateways[0])
    two = Player(gateways[1])  # the same player, through the other instance
    two.player_id, two.token = one.player_id, one.token
    await two.connect()
    await asyncio.sleep(1.1)
    answers = await asyncio.gather(*(p.request("skip") for p in [one, two] * 8))
    assert sum(a.get("code") == "rate_limited" for a in answers) >= 4
    await asyncio.sleep(1.1)
    assert await one.ok("pong") == {} and await two.ok("pong") == {}
    await one.close()
    await two.close()
