"""The match service on the embedded log, driven by commands as the gateway would send them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_match.clock import ms_of
from arena_match.state import stream_of
from arena_match.verify import verify_log
from arena_runtime import metrics, topics
from arena_runtime.envelope import CODEC, new_command
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import REJECTED_TYPE

from tests.services.match.harness import (
    ALICE,
    BOB,
    MatchClient,
    ServiceUnderTest,
    ai,
    create,
    ended,
    final,
    human,
    scripted_move,
)


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[ServiceUnderTest]:
    async with ServiceUnderTest(tmp_path, ARENA_MATCH_AI_THINK_MS="20") as running:
        yield running


@pytest.fixture
def client(service: ServiceUnderTest) -> MatchClient:
    return MatchClient(service.log)


async def assert_verified(service: ServiceUnderTest) -> None:
    report = await verify_log(service.log)
    assert report.problems == []
    assert report.unanswered == []
    assert report.events > 0


async def play_to_the_end(client: MatchClient, match_id: str, max_moves: int = 400) -> pb.GameEnded:
    """Scripted humans move when on move; the service moves the AI seat itself."""
    for move_number in range(max_moves):
        state = await client.state(match_id)
        if state.over:
            break
        if state.seat(state.game.to_move).is_ai:
            await asyncio.sleep(0.02)
            continue
        reply = await client.command(match_id, scripted_move(state, seed=move_number))
        assert reply.code is None, reply.code
    events = await client.events(match_id)
    assert ended(events[-1])
    return final(events[-1])


async def test_a_game_between_two_humans_is_played_to_the_end_and_verifies(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    reply = await client.command("hh", create("hh"))
    created, started = reply.payloads
    assert isinstance(created, match_pb2.MatchOpened) and isinstance(started, pb.GameStarted)
    assert [seat.player_id for seat in created.seats] == [ALICE, BOB]
    assert created.service.reconnect_ms == 30_000 and started.seed != 0
    # The envelope time is the time the engine decided with.
    assert started.started_at_ms == ms_of(reply.events[1].time)

    end = await play_to_the_end(client, "hh")
    assert end.reason == "all_captured"
    assert end.winner_player_id == (ALICE, BOB)[end.winner - 1]
    await assert_verified(service)


async def test_the_ai_plays_its_own_turns_with_recorded_seeds(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("ai", create("ai", (human(ALICE), ai(match_pb2.AI_LEVEL_HARD))))
    await play_to_the_end(client, "ai")
    ai_moves = [
        e.payload
        for e in await client.events("ai")
        if isinstance(e.payload, (pb.StrengthAttacked, pb.MindAttacked)) and e.payload.player == 2
    ]
    assert ai_moves and all(move.HasField("ai_seed") for move in ai_moves)
    await assert_verified(service)


async def test_move_clock_expiry_skips_the_turn_with_reason_timeout(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("mc", create("mc", move_seconds=5))
    before = await client.state("mc")
    service.advance(5.5)
    skipped = await client.wait_for("mc", lambda e: isinstance(e.payload, pb.TurnSkipped))
    assert skipped.payload.reason == "timeout"
    assert skipped.payload.player == before.game.to_move
    assert skipped.causation_id == f"timer:move:{before.game.move_deadline_ms}"
    after = await client.state("mc")
    assert after.game.to_move != before.game.to_move
    assert after.game.move_deadline_ms > before.game.move_deadline_ms
    await assert_verified(service)


async def test_game_clock_expiry_ends_the_game_by_timeout(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("gc", create("gc", game_seconds=60))
    service.advance(61)
    end = await client.wait_for("gc", ended)
    assert final(end).reason == "timeout"
    assert end.causation_id.startswith("timer:game:")
    # The rules: equal dice left, so the player who did not move first wins.
    state = await client.state("gc")
    assert final(end).winner == 3 - state.game.first
    await assert_verified(service)


async def test_reconnect_window_expiry_forfeits_even_when_both_are_gone(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("rw", create("rw"))
    gone = await client.command("rw", match_pb2.PlayerDisconnected(player_id=BOB))
    event = gone.payloads[0]
    assert isinstance(event, match_pb2.PlayerDisconnected) and event.seat == 2
    assert event.reconnect_deadline_ms == ms_of(gone.events[0].time) + 30_000
    service.advance(1)
    await client.command("rw", match_pb2.PlayerDisconnected(player_id=ALICE))
    service.advance(30)
    end = await client.wait_for("rw", ended)
    assert (final(end).winner, final(end).reason) == (1, "forfeit")
    assert final(end).winner_player_id == ALICE
    await assert_verified(service)


async def test_a_reconnect_inside_the_window_keeps_the_game_going(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("rc", create("rc"))
    await client.command("rc", match_pb2.PlayerDisconnected(player_id=BOB))
    back = await client.command("rc", match_pb2.PlayerReconnected(player_id=BOB))
    assert back.payloads == [match_pb2.PlayerReconnected(player_id=BOB, seat=2)]
    service.advance(31)
    # A command after the window shows the service went on without a forfeit.
    probe = await client.command("rc", match_pb2.PlayerReconnected(player_id=BOB))
    assert probe.code == "not_disconnected"
    state = await client.state("rc")
    assert not state.over and state.reconnect_deadlines == (None, None)
    await assert_verified(service)


async def test_rejected_commands_get_typed_codes_and_change_nothing(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    assert (await client.command("rj", pb.Skip(player_id=ALICE))).code == "unknown_match"
    await client.command("rj", create("rj"))
    state = await client.state("rj")
    waiting = state.seat(3 - state.game.to_move).player_id
    mover = state.seat(state.game.to_move).player_id
    cases = [
        (pb.Skip(player_id=waiting), "not_your_turn"),
        (pb.Strength(player_id=mover, attacker="D7", target="D4"), "unknown_die"),
        (pb.Mind(player_id=mover, target="D4", tokens=[pb.MindToken(number=3)]), None),
        (pb.Skip(player_id="p_mallory"), "not_a_player"),
        (pb.Skip(player_id=""), "not_a_player"),
        (create("rj"), "match_exists"),
        (pb.MoveClockTimeout(deadline_ms=1), "stale_timer"),
        (match_pb2.PlayerReconnected(player_id=ALICE), "not_disconnected"),
    ]
    for payload, code in cases:
        reply = await client.command("rj", payload)
        assert reply.code is not None
        if code is not None:
            assert reply.code == code, payload
        assert len(reply.events) == 1 and reply.events[0].type == REJECTED_TYPE
    assert await client.state("rj") == state
    assert (await client.command("rj-bad", create("other-id"))).code == "invalid_match"
    await assert_verified(service)


async def test_a_repeated_command_id_is_answered_once(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("dup", create("dup"))
    state = await client.state("dup")
    move = scripted_move(state, seed=1)
    first = await client.command("dup", move, command_id="session-1:msg-1")
    repeats = metrics.sample(
        "arena_commands_total", {"topic": topics.MATCH_EVENTS, "outcome": "repeated"}
    )
    await client.send("dup", move, command_id="session-1:msg-1")
    # A later, different command: once it is answered, so is the repeat sent before it.
    await client.command("dup", match_pb2.PlayerDisconnected(player_id=ALICE))
    events = await client.events("dup")
    answers = [e.event_id for e in events if e.causation_id == "session-1:msg-1"]
    assert answers == [e.event_id for e in first.events]  # the first answer, appended once
    assert (
        metrics.sample(
            "arena_commands_total", {"topic": topics.MATCH_EVENTS, "outcome": "repeated"}
        )
        == repeats + 1
    )  # and the repeat was taken for one, not dropped
    await assert_verified(service)


async def test_the_sender_must_be_the_seated_player(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("snd", create("snd", (human(ALICE), ai())))
    for player_id in ("ai", "p_eve", BOB):
        reply = await client.command("snd", match_pb2.Resign(player_id=player_id))
        assert reply.code == "not_a_player"
    resigned = await client.command("snd", match_pb2.Resign(player_id=ALICE))
    assert final(resigned.events[0]).reason == "forfeit" and final(resigned.events[0]).winner == 2
    assert (await client.command("snd", pb.Skip(player_id=ALICE))).code == "game_over"
    await assert_verified(service)


async def test_timers_are_rearmed_from_the_log_after_a_restart(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("rs", create("rs", move_seconds=5))
    await client.command("rs", match_pb2.PlayerDisconnected(player_id=ALICE))
    await service.stop()
    service.advance(6)
    await service.start()
    skipped = await client.wait_for("rs", lambda e: isinstance(e.payload, pb.TurnSkipped))
    assert skipped.payload.reason == "timeout"
    service.advance(30)
    end = await client.wait_for("rs", ended)
    assert final(end).reason == "forfeit" and final(end).winner == 2
    await assert_verified(service)


async def test_a_finished_match_is_evicted_and_still_refuses_commands(tmp_path: Path) -> None:
    async with ServiceUnderTest(tmp_path, ARENA_MATCH_EVICT_SECONDS="0") as service:
        client = MatchClient(service.log)
        await client.command("ev", create("ev"))
        await client.command("ev", match_pb2.Resign(player_id=BOB))
        assert service.worker is not None
        probe = await client.command("other", create("other"))  # a sweep runs meanwhile
        assert probe.code is None
        view = service.worker.runner.view("match-ev")
        assert view is not None and view.state.evicted and view.answers == {}
        assert (await client.command("ev", pb.Skip(player_id=ALICE))).code == "game_over"
        assert (await client.command("ev", create("ev"))).code == "match_exists"
        await assert_verified(service)


async def test_commands_of_one_poll_are_written_together_and_verify(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("many", create("many"))
    state = await client.state("many")
    payloads = [
        scripted_move(state, seed=1),
        match_pb2.Resign(player_id="p_eve"),  # refused: not a player
        match_pb2.Resign(player_id=ALICE),
    ]
    commands = [
        new_command(stream_of("many"), payload, command_id=f"many:{n}")
        for n, payload in enumerate(payloads)
    ]
    # One append: the service reads them in one poll and writes their events in one append.
    await service.log.append(topics.MATCH_COMMANDS, [CODEC.command_record(c) for c in commands])
    replies = [await client.answer("many", c.command_id) for c in commands]
    assert replies[0].code is None and replies[1].code == "not_a_player"
    assert isinstance(final(replies[2].events[-1]), pb.GameEnded)
    batches = {e.batch_id for reply in replies for e in reply.events}
    assert len(batches) == 1  # one write for the three commands of the stream
    await assert_verified(service)


async def test_a_live_match_keeps_its_answers_without_their_events(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    await client.command("lean", create("lean"))
    for seed in range(6):
        state = await client.state("lean")
        if state.over:
            break
        await client.command("lean", scripted_move(state, seed=seed))
    view = service.worker.runner.view(stream_of("lean"))
    assert view is not None and len(view.answers) >= 2
    # Only the ids (and refusals) stay, to answer repeats; the events are in the log. The worker
    # compacts right after its append, which the client may see first: give it that moment.
    for _ in range(500):
        if all(answer.events == () for answer in view.answers.values()):
            break
        await asyncio.sleep(0.01)
    assert all(answer.events == () for answer in view.answers.values())


def away(event: object) -> bool:
    return isinstance(getattr(event, "payload", None), match_pb2.PlayerDisconnected)


async def test_after_a_restart_every_present_player_is_away_and_forfeits_if_not_back(
    service: ServiceUnderTest, client: MatchClient
) -> None:
    """Issue 12, item 2: nobody is connected to a match a service has just recovered, so its
    present human seats are recorded as gone, their reconnect window starting at recovery."""
    await client.command("pr", create("pr"))
    await client.command("pr-ai", create("pr-ai", (human(ALICE), ai())))
    await service.stop()
    service.advance(100)  # the process was down a while: the window counts from recovery
    await service.start()
    await client.wait_for("pr", lambda e: away(e) and e.payload.seat == 2)
    gone = [e for e in await client.events("pr") if away(e)]
    assert sorted(e.payload.seat for e in gone) == [1, 2]
    for event in gone:
        assert event.payload.reconnect_deadline_ms == ms_of(event.time) + 30_000
        assert event.causation_id.startswith("recovered:")
    solo = await client.wait_for("pr-ai", away)
    assert solo.payload.seat == 1  # the AI seat is never away
    # Recovering the same state again (a crash right after) records nobody twice.
    await service.stop()
    await service.start()
    back = await client.command("pr", match_pb2.PlayerReconnected(player_id=BOB))
    assert back.code is None
    assert len([e for e in await client.events("pr") if away(e)]) == 2
    # Bob came back in time; Alice did not: she forfeits when her window closes.
    service.advance(31)
    end = await client.wait_for("pr", ended)
    assert (final(end).winner, final(end).reason) == (2, "forfeit")
    end_ai = await client.wait_for("pr-ai", ended)
    assert (final(end_ai).winner, final(end_ai).reason) == (2, "forfeit")
    await assert_verified(service)
