"""The match service publishes what each viewer is shown on ``arena.match.views``.

Whole matches of Matrix Games, the Maze and Maths Warriors are played through the service; then
every ViewBatch on the topic is compared with what the game's views make from the log (each
event's pushes on the state after it, for each person's seat and the spectators), and every push
is checked against what the game hides from its viewer then (``views.hidden``). Snapshots asked
for with ViewRequest, and the ack of a command retried after a restart (from the log: the
runner keeps only ids) are answered on the topic too.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from arena_games.contract import EncodedPush, GameModule, Viewer, pack
from arena_games.maths_warriors import MODULE as MW
from arena_games.matrix_games import MODULE as MATRIX
from arena_games.maze import MODULE as MAZE
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mx
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as mz
from arena_games.registry import STANDARD
from arena_match import views
from arena_match.state import MatchState, apply, stream_of
from arena_runtime import topics
from arena_runtime.envelope import Event
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import views_pb2 as vpb
from arena_runtime.streams import REJECTED_TYPE, Answer

from tests.services.match.harness import (
    ALICE,
    BOB,
    MatchClient,
    ServiceUnderTest,
    create,
    scripted_move,
)
from tests.services.match.test_games import Table, human, scripted

SPECTATOR = Viewer(0, "spectator")


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[ServiceUnderTest]:
    async with ServiceUnderTest(tmp_path) as running:
        yield running


async def batches(log: EventLog, match_id: str) -> list[vpb.ViewBatch]:
    """Every ViewBatch of the match on arena.match.views, in order."""
    stream = stream_of(match_id)
    ends = await log.end_offsets(topics.MATCH_VIEWS)
    partition = partition_for(stream.encode(), len(ends))
    found, offset = [], 0
    while offset < ends[partition]:
        records = await log.read(topics.MATCH_VIEWS, partition, offset, 1000)
        for record in records:
            offset = record.offset + 1
            if record.key == stream.encode():
                assert record.header("arena-type") == b"arena.v1.ViewBatch"
                found.append(vpb.ViewBatch.FromString(record.value))
    return found


async def until(log: EventLog, match_id: str, found: Any, within: float = 20.0) -> Any:
    deadline = time.monotonic() + within
    while True:
        for batch in await batches(log, match_id):
            if found(batch):
                return batch
        if time.monotonic() > deadline:
            raise TimeoutError(f"{match_id}: no such view batch")
        await asyncio.sleep(0.02)


def relayed(batch: vpb.ViewBatch) -> dict[Viewer, list[bytes]]:
    """What each viewer is pushed by one batch, in order."""
    shown: dict[Viewer, list[bytes]] = {}
    for push in batch.pushes:
        for viewer in push.viewers:
            shown.setdefault(Viewer(viewer.seat, viewer.role), []).extend(push.messages)
    return shown


def compact(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def check_hidden(module: GameModule[Any], state: MatchState, viewer: Viewer, text: bytes) -> int:
    """No secret of ``viewer`` in ``text``, written compact or with json's default spacing."""
    secrets = module.views.hidden(state.game, viewer)
    forms = (text.decode(), json.dumps(json.loads(text)))
    for secret in secrets:
        for form in forms:
            assert secret not in form, (viewer, secret, form[:300])
    return len(secrets)


async def watch(log: EventLog, match_id: str) -> int:
    """A spectator asks for the match (as a gateway does for ``watch_match``): its pushes are
    made from then on, for the lease. Returns the sequence the spectators' snapshot shows."""
    request = vpb.ViewRequest(
        match_id=match_id, request_id=f"watch-{match_id}", viewers=[vpb.Viewer(role="x")]
    )
    await MatchClient(log).send(match_id, request)
    answered = await until(log, match_id, lambda b: b.request_id == request.request_id)
    assert set(relayed(answered)) == {SPECTATOR}
    return int(answered.sequence)


async def watching(log: EventLog, match_id: str, into: list[int]) -> None:
    into.append(await watch(log, match_id))


async def check_topic(
    log: EventLog, match_id: str, events: list[Event], watched_from: int
) -> dict[str, int]:
    """Every event batch on the topic is what the game's views make of the log, the spectators'
    pushes in those after ``watched_from`` (the sequence a spectator started watching at); nothing
    hidden from a viewer is in its pushes. Returns counts of what was checked."""
    states: dict[int, tuple[Event, MatchState]] = {}
    state = MatchState()
    for event in events:
        if event.type != REJECTED_TYPE:
            state = apply(state, event)
        states[event.sequence] = (event, state)
    module = state.module
    assert module is not None
    counts = {"pushes": 0, "secrets": 0, "answers": 0}
    # The views of a batch of commands are written after their events: the last may still be
    # on its way when the events are read.
    last = events[-1].sequence
    await until(log, match_id, lambda b: b.kind == vpb.VIEW_KIND_EVENTS and b.sequence >= last)
    covered = 0
    for batch in await batches(log, match_id):
        if batch.kind != vpb.VIEW_KIND_EVENTS:
            continue
        assert batch.match_id == match_id and batch.game == module.name
        counts["answers"] += len(batch.answers)
        if batch.sequence == batch.after_sequence:
            continue  # repeats and nothing new
        assert batch.after_sequence == covered, "a batch missing, or one shown twice"
        covered = batch.sequence
        expected: dict[Viewer, list[bytes]] = {}
        for sequence in range(batch.after_sequence + 1, batch.sequence + 1):
            event, after = states[sequence]
            if event.type == REJECTED_TYPE:
                continue
            viewers = [Viewer(s.number) for s in after.seats if s.human]
            if sequence > watched_from:
                viewers.append(SPECTATOR)
            table = after.table(sequence)
            for viewer in viewers:
                made = module.views.push(table, after.game, event.payload, viewer, batch.time_ms)
                for message in made:
                    text = compact(message)
                    expected.setdefault(viewer, []).append(text)
                    counts["secrets"] += check_hidden(module, after, viewer, text)
                    counts["pushes"] += 1
        assert relayed(batch) == expected, batch.sequence
    assert covered == events[-1].sequence, "the last events were never shown"
    return counts


async def test_a_matrix_episode_shows_each_seat_its_own_and_the_spectators_theirs(
    service: ServiceUnderTest,
) -> None:
    settings = mx.MatrixGamesSettings(
        beats=3, ticks_per_beat=10, min_beat_seconds=0, player_connect_timeout_seconds=60
    )
    seats = [human(1), human(2), *(scripted(n, "counter") for n in range(3, 9))]
    start = match_pb2.StartMatch(
        match_id="mxv", game="matrix-games", seats=seats, settings=pack(settings)
    )
    table = Table(service, MATRIX, "mxv")
    watched: list[int] = []
    events = await table.play(start, lambda: watching(service.log, "mxv", watched))
    counts = await check_topic(service.log, "mxv", await table.client.events("mxv"), watched[0])
    assert counts["pushes"] > 20 and counts["secrets"] > 0
    shown = [relayed(b) for b in await batches(service.log, "mxv")]
    # Each seat was shown its own observations; the spectators the global frames.
    kinds = {
        viewer: {json.loads(m)["type"] for s in shown for m in s.get(viewer, [])}
        for viewer in (Viewer(1), Viewer(2), SPECTATOR)
    }
    assert {"welcome", "state", "order_accepted", "final"} <= kinds[Viewer(1)] == kinds[Viewer(2)]
    assert kinds[SPECTATOR] == {"state"}
    frames = [json.loads(m) for s in shown for m in s.get(SPECTATOR, [])]
    assert {frame["protocol"] for frame in frames} == {"matrix.global.v1"}
    # Every order was answered on the topic with its seat's ack.
    answers = {a.command_id: a for b in await batches(service.log, "mxv") for a in b.answers}
    orders = [e for e in events if isinstance(e.payload, mx.OrderGiven)]
    assert orders and all(not answers[e.causation_id].code for e in orders)
    ack = json.loads(answers[orders[0].causation_id].ack)
    assert ack["match_id"] == "mxv" and ack["events"][0]["type"] == "order_accepted"


async def test_a_maze_match_keeps_each_player_in_their_fog(service: ServiceUnderTest) -> None:
    settings = mz.MazeSettings(width=7, height=7, cooldown_ms=0, countdown_ms=1000)
    start = match_pb2.StartMatch(
        match_id="mzv", game="maze", seats=[human(1), human(2)], settings=pack(settings)
    )
    table = Table(service, MAZE, "mzv")
    watched: list[int] = []
    await table.play(start, lambda: watching(service.log, "mzv", watched))
    counts = await check_topic(service.log, "mzv", await table.client.events("mzv"), watched[0])
    assert counts["pushes"] > 10 and counts["secrets"] > 0


async def test_a_maths_warriors_match_shows_everyone_the_same(service: ServiceUnderTest) -> None:
    client = MatchClient(service.log)
    assert (await client.command("mwv", create("mwv"))).code is None
    watched = await watch(service.log, "mwv")
    for seed in range(6):
        state = await client.state("mwv")
        await client.command("mwv", scripted_move(state, seed))
    await client.command("mwv", match_pb2.PlayerDisconnected(player_id=BOB))
    await client.command("mwv", match_pb2.Resign(player_id=ALICE))
    events = await client.events("mwv")
    counts = await check_topic(service.log, "mwv", events, watched)
    assert counts["pushes"] > 6 * 3
    for batch in await batches(service.log, "mwv"):
        if batch.kind != vpb.VIEW_KIND_EVENTS:
            continue  # the spectator's snapshot
        groups = [p for p in batch.pushes if len(p.viewers) == 3]
        # Both seats and the spectators share one push, but a player's own disconnect.
        assert groups or any(len(p.viewers) == 2 for p in batch.pushes), batch


async def test_an_accepted_command_that_appends_nothing_gets_the_game_s_ack(
    service: ServiceUnderTest,
) -> None:
    """docs/protocol.md: an accepted move that changed nothing is acked ``{match_id, events:
    []}`` (the game's ack with nothing pushed), never ``{}``."""
    client = MatchClient(service.log)
    assert (await client.command("mwn", create("mwn"))).code is None
    state = MatchState()
    for event in await client.events("mwn"):
        state = apply(state, event)
    nothing = Answer("c:nothing", "match-mwn")
    answer = views.answer_of(nothing, state, [], state.seat_of(ALICE) or 0)
    assert json.loads(answer.ack) == {"match_id": "mwn", "events": []}


async def test_a_snapshot_is_asked_of_the_owner_and_answered_to_the_request(
    service: ServiceUnderTest,
) -> None:
    client = MatchClient(service.log)
    assert (await client.command("snap", create("snap"))).code is None
    asked = vpb.ViewRequest(
        match_id="snap",
        request_id="r1",
        viewers=[vpb.Viewer(player_id=ALICE), vpb.Viewer(player_id="p_stranger")],
    )
    await client.send("snap", asked)
    batch = await until(service.log, "snap", lambda b: b.request_id == "r1")
    assert batch.kind == vpb.VIEW_KIND_SNAPSHOT and batch.sequence == 2
    shown = relayed(batch)
    assert set(shown) == {Viewer(1), SPECTATOR}  # the stranger is a spectator
    snapshot = json.loads(shown[Viewer(1)][0])
    assert snapshot["type"] == "snapshot" and snapshot["sequence"] == 2
    assert [s.player_id for s in batch.seats] == [ALICE, BOB]
    # Nothing was written to the match for it, and an unknown match is answered empty.
    assert [e.sequence for e in await client.events("snap")] == [1, 2]
    await client.send("none", vpb.ViewRequest(match_id="none", request_id="r2"))
    empty = await until(service.log, "none", lambda b: b.request_id == "r2")
    assert (empty.sequence, list(empty.pushes)) == (0, [])


async def test_a_retry_after_a_restart_gets_the_earlier_ack_and_a_redraw(
    service: ServiceUnderTest,
) -> None:
    client = MatchClient(service.log)
    assert (await client.command("rt", create("rt"))).code is None
    state = await client.state("rt")
    move = scripted_move(state, 3)
    first = await client.command("rt", move, command_id="once")
    assert first.code is None
    answered = await until(
        service.log, "rt", lambda b: any(a.command_id == "once" for a in b.answers)
    )
    (before,) = [a for a in answered.answers if a.command_id == "once"]
    await service.stop()
    await service.start()
    await client.send("rt", move, command_id="once")
    again = await until(
        service.log,
        "rt",
        lambda b: any(a.command_id == "once" and a.repeated for a in b.answers),
    )
    (after,) = [a for a in again.answers if a.command_id == "once"]
    earlier, now = json.loads(before.ack), json.loads(after.ack)
    assert now["match_id"] == earlier["match_id"] == "rt"

    def facts(ack: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(e["type"], e["sequence"], e["player"]) for e in ack["events"]]

    assert facts(now) == facts(earlier) and len(facts(now)) == 1
    # Not applied twice; and everyone is sent a snapshot, in case the views were lost.
    events = await client.events("rt")
    assert [e.sequence for e in events if e.causation_id == "once"] == [3]
    redraw = await until(
        service.log, "rt", lambda b: b.kind == vpb.VIEW_KIND_SNAPSHOT and not b.request_id
    )
    assert redraw.sequence >= 3 and len(relayed(redraw)) == 3


async def test_live_matches_tick(service: ServiceUnderTest) -> None:
    client = MatchClient(service.log)
    assert (await client.command("tk", create("tk"))).code is None
    worker = service.worker
    assert worker is not None
    await worker.tick()
    tick = await until(service.log, "tk", lambda b: b.kind == vpb.VIEW_KIND_TICK)
    (push,) = tick.pushes
    # Opened after the partition was gained, and nobody asked to watch: the seats alone.
    assert json.loads(push.messages[0])["type"] == "time_sync" and len(push.viewers) == 2
    await watch(service.log, "tk")
    await worker.tick()
    # Watched: the spectators too, in the same push.
    tick = await until(
        service.log,
        "tk",
        lambda b: b.kind == vpb.VIEW_KIND_TICK and len(b.pushes[0].viewers) == 3,
    )
    assert json.loads(tick.pushes[0].messages[0])["type"] == "time_sync"


def test_every_game_is_viewed() -> None:
    """The tests above cover games of every shape the registry holds but Digits (one seat,
    no spectators of note), whose views the contract suite runs."""
    assert {"maths-warriors", "matrix-games", "maze"} <= {m.name for m in STANDARD}
    assert MW.name == "maths-warriors"


def test_a_push_its_game_wrote_as_text_is_sent_as_that_text() -> None:
    """The Maze hands over its records with their text (EncodedPush): the service sends those
    bytes rather than writing the object again (it parsed and rewrote every record before)."""
    text = '{"type": "maze_view", "seq": 3}'  # not how the service would write the object
    assert views.compact(EncodedPush({"type": "maze_view", "seq": 3}, text)) == text.encode()
    assert views.compact({"type": "maze_view", "seq": 3}) == b'{"type":"maze_view","seq":3}'


async def test_spectators_are_shown_a_match_only_while_someone_watches(tmp_path: Path) -> None:
    """Spectators' pushes are made for a lease (ARENA_SPECTATOR_LEASE_SECONDS) after a request
    naming them, and after the partition of a live match is gained (a match opened since had no
    other owner its spectators could have asked); a renewal after it lapsed redraws the
    spectators with a snapshot marked ``resumed``, one while it holds is not answered."""
    async with ServiceUnderTest(tmp_path, ARENA_SPECTATOR_LEASE_SECONDS="10") as service:
        client = MatchClient(service.log)
        assert (await client.command("lease", create("lease"))).code is None

        async def move(number: int) -> dict[Viewer, list[bytes]]:
            state = await client.state("lease")
            sent = f"move-{number}"
            assert (await client.command("lease", scripted_move(state, number), sent)).code is None
            found = await until(
                service.log, "lease", lambda b: any(a.command_id == sent for a in b.answers)
            )
            return relayed(found)

        # Opened after the partition was gained: nobody can be watching it yet.
        assert set(await move(1)) == {Viewer(1), Viewer(2)}
        # Taken over (a restart): anyone may be watching, through the instance before.
        await service.stop()
        await service.start()
        assert SPECTATOR in await move(2)
        service.advance(11)
        assert set(await move(8)) == {Viewer(1), Viewer(2)}
        # A spectator asks for the snapshot: their pushes are made again, for the lease.
        await client.send(
            "lease",
            vpb.ViewRequest(match_id="lease", request_id="w1", viewers=[vpb.Viewer(role="x")]),
        )
        asked = await until(service.log, "lease", lambda b: b.request_id == "w1")
        assert set(relayed(asked)) == {SPECTATOR}
        assert SPECTATOR in await move(3)
        # A renewal extends the lease, and is not answered while it holds.
        renew = vpb.ViewRequest(match_id="lease", viewers=[vpb.Viewer(role="x")], renew=True)
        service.advance(6)
        await client.send("lease", renew, command_id="renew-1")
        assert SPECTATOR in await move(4)
        service.advance(6)  # the request's lease is over, the renewal's is not
        assert SPECTATOR in await move(5)
        service.advance(5)
        assert set(await move(6)) == {Viewer(1), Viewer(2)}
        assert not [b for b in await batches(service.log, "lease") if b.resumed]
        # A renewal after the lease lapsed: the spectators' snapshot, to redraw them.
        await client.send("lease", renew, command_id="renew-2")
        resumed = await until(service.log, "lease", lambda b: b.resumed)
        assert resumed.kind == vpb.VIEW_KIND_SNAPSHOT and not resumed.request_id
        assert set(relayed(resumed)) == {SPECTATOR}
        assert resumed.sequence == (await client.events("lease"))[-1].sequence
        assert SPECTATOR in await move(7)
