"""Complete games on the distributed stack: the Tansu broker, PostgreSQL and Redis, every service
its own `arena` process, and two gateway instances serving the same games with a player on each
(each instance reads every partition, so both see every event; previews and the rate limit go
through Redis)."""

from __future__ import annotations

import asyncio
import secrets
import signal
import time
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from arena_engine.maths_warriors.ai import choose_move
from arena_runtime import topics
from arena_runtime.envelope import ce_time
from arena_runtime.eventlog import OutgoingRecord, Record
from arena_runtime.eventlog.kafka import KafkaEventLog
from arena_runtime.proto_gen.arena.v1 import envelope_pb2

from tests.e2e.client import Player
from tests.e2e.games import Mirror, message_for, next_move_push, play_move, play_to_the_end
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
from tests.harness.otlp import OtlpReceiver, ReceivedSpan, until
from tests.harness.postgres import database_of_its_own
from tests.processes.arena_process import ArenaProcess, arena_env, free_port, run_to_exit

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

SERVICES = ("match", "matchmaking", "rating", "gateway", "gateway", "projections")


class Stack:
    """Every service's process, each startable again on its own environment."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.processes: list[ArenaProcess] = []
        self.envs: list[dict[str, str]] = []
        self.starts = 0

    def start(self, number: int) -> ArenaProcess:
        self.starts += 1
        name = SERVICES[number]
        log = self.workdir / f"{name}-{number}-{self.starts}.log"
        process = ArenaProcess([name], self.envs[number], log)
        if number < len(self.processes):
            self.processes[number] = process
        else:
            self.processes.append(process)
        return process

    @property
    def gateways(self) -> list[str]:
        named = zip(self.processes, SERVICES, strict=True)
        return [p.url for p, name in named if name == "gateway"]


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    """Where every process of the stack exports its spans (OTLP/HTTP)."""
    with OtlpReceiver() as otlp:
        yield otlp


@pytest.fixture(scope="module")
def stack(
    receiver: OtlpReceiver,
    tmp_path_factory: pytest.TempPathFactory,
    kafka_bootstrap: str,
    topic_prefix: str,
    postgres_url: str,
    redis_url: str,
    redis_prefix: str,
) -> Iterator[Stack]:
    workdir = Path(tmp_path_factory.mktemp("distributed"))
    distributed = {
        "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
        # Its own topics and keys: two modules start this stack (one after the other).
        "ARENA_TOPIC_PREFIX": f"{topic_prefix}e2e{secrets.token_hex(3)}.",
        "ARENA_DATABASE_URL": database_of_its_own(postgres_url),
        "ARENA_REDIS_URL": redis_url,
        "ARENA_CACHE_PREFIX": f"{redis_prefix}e2e{secrets.token_hex(3)}:",
        "ARENA_PARTITIONS": "2",
        "ARENA_MATCH_RECONNECT_SECONDS": "2",
        "ARENA_MATCH_AI_THINK_MS": "50",
        "ARENA_LOG_LEVEL": "WARNING",
        "ARENA_OTEL_EXPORTER_ENDPOINT": receiver.url,
        "OTEL_BSP_SCHEDULE_DELAY": "200",  # the SDK's batch: export every 0.2 s
    }
    running = Stack(workdir)
    try:
        # All at once, as Kubernetes starts them: each migrates the one database at start-up.
        for number in range(len(SERVICES)):
            running.envs.append(arena_env(workdir / "var", free_port(), **distributed))
            running.start(number)
        for process in running.processes:
            process.wait_until("/readyz", 200)
        yield running
    finally:
        for process in running.processes:
            process.terminate()


@pytest.fixture(scope="module")
def gateways(stack: Stack) -> list[str]:
    return stack.gateways


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


async def test_a_message_repeated_to_the_other_instance_gets_its_earlier_answer(
    gateways: list[str],
) -> None:
    """docs/protocol.md: the same id is the same command, answered again, on any instance. Both
    players are on the first gateway, so the second relays nothing of theirs."""
    host, guest = await signed_in(gateways[0]), await signed_in(gateways[0])
    created = await host.request("create_room", id="room-1")
    await guest.ok("join_room", code=created["result"]["code"])
    snapshot = await host.push("snapshot")
    by_id = {host.player_id: host, guest.player_id: guest}
    mover = by_id[
        next(s["player_id"] for s in snapshot["seats"] if s["seat"] == snapshot["to_move"])
    ]
    kind, fields = message_for(choose_move(Mirror.of(snapshot).state(), "medium", 1))
    moved = await mover.request(kind, id="move-1", **fields)
    assert moved["type"] == "ack" and moved["result"]["events"]
    for player, message_id, kind_, fields_, answer in (
        (host, "room-1", "create_room", {}, created),
        (mover, "move-1", kind, fields, moved),
    ):
        again = Player(gateways[1])  # a new socket of the same session, no reconnect
        again.player_id, again.token = player.player_id, player.token
        await again.connect()
        assert await again.request(kind_, id=message_id, **fields_) == answer
        await again.close()
    for player in (host, guest):
        await player.close()


async def refilled(player: Player) -> dict[str, Any]:
    """The first answer to `pong` that is not a refusal for the spent budget (a few seconds)."""
    for _ in range(50):
        answer = await player.request("pong")
        if answer.get("code") != "rate_limited":
            return answer
        await asyncio.sleep(0.1)
    raise AssertionError("the budget never refilled")


async def test_the_rate_limit_is_one_budget_across_instances(gateways: list[str]) -> None:
    one = await signed_in(gateways[0])
    two = Player(gateways[1])  # the same player, through the other instance
    two.player_id, two.token = one.player_id, one.token
    await two.connect()  # authenticating takes nothing from the budget: it is full
    started = time.monotonic()
    answers = await asyncio.gather(*(p.request("skip") for p in [one, two] * 15))
    elapsed = time.monotonic() - started
    codes = [a.get("code") for a in answers]
    allowed = codes.count("not_in_match")
    assert allowed + codes.count("rate_limited") == len(codes)
    # One budget of ten a second: the ten it holds, and what refilled while the flood lasted
    # (Redis's clock, which no test can hold). Two budgets would let through up to twenty.
    assert 10 <= allowed <= 10 + 10 * elapsed, (allowed, elapsed)
    # The sockets go on: each is answered (refused while the budget is spent) and, once Redis's
    # clock has refilled it, served again.
    for player in (one, two):
        answer = await refilled(player)
        assert answer["type"] == "ack" and answer["result"] == {}, answer
    await one.close()
    await two.close()


async def test_a_matrix_episode_with_a_seat_on_each_gateway_and_a_spectator(
    gateways: list[str],
) -> None:
    """The match service's views relayed by both instances: each person's seat gets its own
    view through its gateway, the spectator (on the first) every beat."""
    from arena_games.contract import Viewer
    from arena_games.matrix_games.bot import MatrixGamesBot

    from tests.e2e.test_relayed_games import EPISODE, final, matrix_room, next_push, play_seat

    host = await signed_in(gateways[0])
    guest = await signed_in(gateways[1], sign_in_at=gateways[0])
    spectator = await signed_in(gateways[0])
    code, match_id, seats = await matrix_room(gateways[0], [host, guest], **EPISODE)
    await spectator.ok("watch_room", code=code)
    assert (await spectator.ok("watch_match", match_id=match_id))["seat"] is False
    shown = await asyncio.gather(
        *(play_seat(seats[n], MatrixGamesBot(Viewer(n)), final) for n in sorted(seats))
    )
    for number, pushes in zip(sorted(seats), shown, strict=True):
        states = [p for p in pushes if p["type"] == "state"]
        assert [s["beat"] for s in states] == [0, 1, 2, 3]
        assert {p["slot"] for p in pushes if p["type"] == "order_accepted"} == {number - 1}
    frames: list[dict[str, Any]] = []
    while not (frames and frames[-1]["done"]):
        frames.append(await next_push(spectator))
    assert set(range(0, 4)) <= {f["beats_played"] for f in frames}
    for player in (host, guest, spectator):
        await player.close()


# The Maze (issue 17): the players on different instances, the observer on either.
COOLDOWN = 50
MAZE = {"width": 7, "height": 7, "cooldown_ms": COOLDOWN, "countdown_ms": 300}


async def maze_players(gateways: list[str]) -> tuple[Player, Player, Player]:
    """The host on the first instance, the guest and an observer on the second."""
    return (
        await signed_in(gateways[0]),
        await signed_in(gateways[1], sign_in_at=gateways[0]),
        await signed_in(gateways[1], sign_in_at=gateways[0]),
    )


async def test_a_maze_win_watched_by_an_observer_on_the_other_instance(
    gateways: list[str],
) -> None:
    host, guest, observer = await maze_players(gateways)
    _, _, seats = await maze_room(host, guest, observer, **MAZE)
    watching = Views(observer)
    first = observed(await watching.next())
    views = {n: Views(seats[n]) for n in (1, 2)}
    for n in (1, 2):
        await views[n].playing()
    await walk(COOLDOWN, seats[1], plan(first, 1))
    for n in (1, 2):
        result = own(await views[n].over()).status.result
        assert result is not None and (result.winner, result.reason) == (1, "exit")
    last = observed(await watching.over())
    assert last.result is not None and last.result.winner == 1
    seqs = [v.state_seq for v in watching.seen]
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    assert all(whole_maze(v) for v in watching.seen)
    for player in (host, guest, observer):
        await player.close()


async def test_a_maze_draw_inside_the_window_across_instances(gateways: list[str]) -> None:
    host, guest, observer = await maze_players(gateways)
    _, _, seats = await maze_room(host, guest, observer, **MAZE, loops_percent=100)
    watching = Views(observer)
    first = observed(await watching.next())
    plans = {n: plan(first, n) for n in (1, 2)}
    assert len(plans[1]) == len(plans[2])
    views = {n: Views(seats[n]) for n in (1, 2)}
    for n in (1, 2):
        await views[n].playing()
    await lockstep(seats, plans, COOLDOWN, len(plans[1]))
    for n in (1, 2):
        result = own(await views[n].over()).status.result
        assert result is not None and (result.winner, result.reason) == (None, "window")
    last = observed(await watching.over())
    assert last.result is not None and last.result.reason == "window"
    for player in (host, guest, observer):
        await player.close()


async def test_a_maze_reconnect_through_the_other_instance(gateways: list[str]) -> None:
    host, guest, observer = await maze_players(gateways)
    code, _, seats = await maze_room(host, guest, observer, **MAZE)
    steps = plan(observed(await Views(observer).next()), 1)
    mover = Views(seats[1])
    await mover.playing()
    await walk(COOLDOWN, seats[1], steps[:3])
    while seats[1].has("maze_view"):
        await mover.next()
    before = mover.seen[-1]
    await seats[1].close()
    # Back inside the reconnect window, through the instance it did not play on.
    other = gateways[1] if seats[1] is host else gateways[0]
    back = await come_back(other, seats[1], code)
    assert (await back.push("maze_match"))["role"] == "1"
    assert await Views(back).next() == before
    await walk(COOLDOWN, back, steps[3:])
    result = own(await Views(back).over()).status.result
    assert result is not None and result.winner == 1
    for player in (back, seats[2], observer):
        await player.close()


async def test_a_maze_match_service_killed_mid_game_loses_no_accepted_move(stack: Stack) -> None:
    gateways = stack.gateways
    host, guest, observer = await maze_players(gateways)
    _, match_id, seats = await maze_room(host, guest, observer, **MAZE)
    first = observed(await Views(observer).next())
    steps = {n: plan(first, n) for n in (1, 2)}
    views = {n: Views(seats[n]) for n in (1, 2)}
    for n in (1, 2):
        await views[n].playing()
    acked = [await move(seats[n], steps[n].pop(0)) for n in (1, 2)]
    match = SERVICES.index("match")
    stack.processes[match].terminate(signal.SIGKILL)
    stack.start(match).wait_until("/readyz", 200)
    # The sockets survived on their instances; what the new match service folds from the log
    # holds every acknowledged move.
    watcher = await signed_in(gateways[0])
    await watcher.ok("watch_match", match_id=match_id)
    now = observed(await Views(watcher).next())
    assert now.state_seq >= acked[-1]["seq"]
    for n in (1, 2):
        walked = plan(first, n)[:1]
        assert now.players[n - 1].cell == plan_end(first, n, walked)
    await walk(COOLDOWN, seats[1], steps[1])
    result = own(await views[1].over()).status.result
    assert result is not None and (result.winner, result.reason) == (1, "exit")
    verified = run_to_exit(["verify", "--strict", match_id], stack.envs[match], timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    for player in (host, guest, observer, watcher):
        await player.close()


def _headers(record: Record) -> dict[str, str]:
    return {name: value.decode() for name, value in record.headers}


async def _traced_records(stack: Stack, trace_id: str) -> dict[str, list[Record]]:
    """The records on the broker, per topic, whose ``traceparent`` header is in the trace."""
    env = stack.envs[0]
    log = KafkaEventLog(env["ARENA_KAFKA_BOOTSTRAP"], topic_prefix=env["ARENA_TOPIC_PREFIX"])
    await log.start()
    try:
        found: dict[str, list[Record]] = {}
        for topic in (topics.MATCH_COMMANDS, topics.MATCH_EVENTS, topics.MATCH_VIEWS):
            for partition, end in (await log.end_offsets(topic)).items():
                offset = 0
                while offset < end:
                    records = await log.read(topic, partition, offset)
                    offset = records[-1].offset + 1
                    found.setdefault(topic, []).extend(
                        r
                        for r in records
                        if _headers(r).get("traceparent", "").split("-")[1:2] == [trace_id]
                    )
        return found
    finally:
        await log.close()


async def test_one_client_message_is_one_trace_through_the_broker(
    stack: Stack, receiver: OtlpReceiver
) -> None:
    """A move sent to one gateway is one trace across the processes and the broker: the match
    service decides it, the projections read its events (matchmaking passes over them by
    their type header and rating by their sequence and batch headers, unread: both act on a
    match's start and end), and both
    gateways push it (each its own player). The records it wrote carry the trace in their W3C
    headers on the broker, beside CloudEvents headers that agree with their envelopes; a record
    no service can read is logged with the trace its headers carry."""
    seats, snapshot, _ = await room_game(stack.gateways[0], stack.gateways[1])
    mirror = Mirror.of(snapshot)
    kind, fields = message_for(choose_move(mirror.state(), "easy", 7))
    await seats[mirror.to_move].ok(kind, id="traced-move", **fields)
    await next_move_push(seats[3 - mirror.to_move])  # pushed by the other gateway

    def roots() -> list[ReceivedSpan]:
        return receiver.find(f"ws {kind}", **{"arena.message.id": "traced-move"})

    await until("the gateway's span of the move", roots)
    (root,) = roots()
    assert root.parent_id == "" and root.service == "arena-gateway"
    wanted = {
        ("arena-gateway", "ws " + kind),
        ("arena-match", "arena.commands.match process"),
        ("arena-match", "arena.match.events publish"),
        ("arena-projections", "arena.match.events process"),
        ("arena-gateway", "arena.match.views process"),
    }

    def pushed_by_both() -> bool:
        spans = receiver.trace(root.trace_id)
        pushes = {s.instance for s in spans if s.name == "arena.match.views process"}
        return wanted <= {(s.service, s.name) for s in spans} and len(pushes) == 2

    try:
        await until("the trace reached every service and both gateways", pushed_by_both)
    except AssertionError:
        spans = receiver.trace(root.trace_id)
        seen = {(s.service, s.name, s.instance) for s in spans}
        missing = wanted - {(s.service, s.name) for s in spans}
        raise AssertionError(f"missing {sorted(missing)}; seen {sorted(seen)}") from None
    await asyncio.sleep(0.5)  # the exporters' next batch: the rest of the trace
    spans = receiver.trace(root.trace_id)
    ids = {s.span_id for s in spans}
    # One root, every other span's parent in the same trace: one connected trace.
    assert [s for s in spans if s.parent_id not in ids] == [root], spans
    (decided,) = [s for s in spans if s.name == "arena.commands.match process"]
    assert decided.parent_id == root.span_id
    assert {s.instance for s in spans if s.service == "arena-gateway"} == {
        s.instance for s in spans if s.name == "arena.match.views process"
    }

    # On the broker: the command and what it caused carry the trace in their own headers.
    records = await _traced_records(stack, root.trace_id)
    (command,) = records[topics.MATCH_COMMANDS]
    headers = _headers(command)
    assert headers["traceparent"].split("-")[2] == root.span_id
    sent = envelope_pb2.CommandEnvelope.FromString(command.value)
    assert headers["traceparent"] == sent.trace.traceparent
    assert (headers["ce_specversion"], headers["ce_id"], headers["ce_type"]) == (
        "1.0",
        sent.command_id,
        sent.type,
    )
    assert (
        headers["ce_source"]
        == "/arena/streams/" + sent.stream
        == "/arena/streams/" + (command.key or b"").decode()
    )
    assert headers["ce_partitionkey"] == sent.stream
    assert headers["ce_time"] == ce_time(sent.time.ToDatetime(tzinfo=UTC))
    assert records[topics.MATCH_EVENTS]
    for record in records[topics.MATCH_EVENTS]:
        headers = _headers(record)
        event = envelope_pb2.Envelope.FromString(record.value)
        assert headers["traceparent"] == event.trace.traceparent
        assert headers["traceparent"].split("-")[2] in {s.span_id for s in spans}
        assert (headers["ce_id"], headers["ce_type"], headers["ce_partitionkey"]) == (
            event.event_id,
            event.type,
            event.stream,
        )
        assert headers["ce_sequence"] == f"{event.sequence:020d}"
    # Each process span of the events hangs from the span named in its record's header.
    parents = {_headers(r)["traceparent"].split("-")[2] for r in records[topics.MATCH_EVENTS]}
    assert all(s.parent_id in parents for s in spans if s.name == "arena.match.events process"), (
        spans
    )

    # A record nobody can decode is logged with the trace of the span that wrote it, which
    # only its headers carry.
    unreadable = "4bf92f3577b34da6a3ce929d0e0e4736"
    env = stack.envs[0]
    log = KafkaEventLog(env["ARENA_KAFKA_BOOTSTRAP"], topic_prefix=env["ARENA_TOPIC_PREFIX"])
    await log.start()
    try:
        await log.append(
            topics.MATCH_COMMANDS,
            [
                OutgoingRecord(
                    value=b"not an envelope",
                    key=sent.stream.encode(),
                    headers=(("traceparent", f"00-{unreadable}-00f067aa0ba902b7-01".encode()),),
                )
            ],
        )
    finally:
        await log.close()
    match = stack.processes[SERVICES.index("match")]

    def logged() -> bool:
        return any(
            "malformed record skipped" in line and unreadable in line
            for line in match.output().splitlines()
        )

    await until("the match service logged the unreadable record with its trace", logged)
    for player in seats.values():
        await player.close()
