"""Complete games through real WebSockets against Arena in this process, on the embedded log:
human against human, against the AI, the move clock, forfeit after a disconnect, reconnecting in
the window, rematch, and every limit refused without disturbing the game."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from arena_engine.maths_warriors import Ruleset
from arena_engine.maths_warriors.rules import timeout_winner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, new_command
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import lobby_pb2, match_pb2
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.e2e.client import Player, signed_in
from tests.e2e.games import Mirror, next_move_push, play_move, play_to_the_end
from tests.e2e.servers import CacheClock, arena, settings_for
from tests.services.matchmaking.harness import LobbyClient, eventually

#: The clock of the served cache, where the rate limit's buckets live.
CLOCK = CacheClock()


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return settings_for(
        Path(tmp_path_factory.mktemp("e2e")),
        match_reconnect_seconds=2,
        match_ai_think_ms=50,
        ws_time_sync_seconds=0.5,
    )


@pytest.fixture(scope="module")
async def url(settings: Settings) -> AsyncIterator[str]:
    async with arena(settings, cache_clock=CLOCK) as base:
        yield base


async def room_game(
    url: str, **settings: object
) -> tuple[dict[int, Player], dict[str, object], str]:
    """Two players in a room: (players by seat, the snapshot, the room code)."""
    host, guest = await signed_in(url), await signed_in(url)
    code = (await host.ok("create_room", settings=settings))["code"]
    assert len(code) == 5 and set(code) <= set("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    await guest.ok("join_room", code=code)
    snapshot = await host.push("snapshot")
    assert (await guest.push("snapshot"))["match_id"] == snapshot["match_id"]
    by_id = {host.player_id: host, guest.player_id: guest}
    seats = {s["seat"]: by_id[s["player_id"]] for s in snapshot["seats"]}
    return seats, snapshot, code


async def test_human_against_human_to_the_end(url: str) -> None:
    seats, snapshot, _ = await room_game(url)
    assert snapshot["status"] == "playing" and snapshot["clocks"]["game_seconds"] == 720
    mirror = Mirror.of(snapshot)
    over = await play_to_the_end(seats, mirror)
    assert over["reason"] == "all_captured"
    # The opponent of each move saw it pushed, in order, ending with the same game_over.
    for seat, player in seats.items():
        pushed = [m for m in player.pushes if m["type"] != "time_sync"]
        theirs = [e for e in mirror.seen if e.get("player", 3 - seat) != seat]
        assert [m["sequence"] for m in pushed if "sequence" in m][-1] == over["sequence"]
        assert len(pushed) >= len(theirs)
    for player in seats.values():
        await player.close()


async def test_a_refused_move_is_a_typed_error_and_changes_nothing(url: str) -> None:
    seats, snapshot, _ = await room_game(url)
    waiting = seats[3 - snapshot["to_move"]]
    assert (await waiting.request("skip"))["code"] == "not_your_turn"
    mover = seats[snapshot["to_move"]]
    error = await mover.request("mind", target="D20", tokens=[{"die": "D4", "value": 99}])
    assert error["code"] == "invalid_token"
    await mover.ok("skip")  # the game goes on
    for player in seats.values():
        await player.close()


async def test_a_retried_message_is_answered_again_not_applied_twice(url: str) -> None:
    seats, snapshot, _ = await room_game(url)
    mover = seats[snapshot["to_move"]]
    first = await mover.ok("skip", id="again")
    second = await mover.ok("skip", id="again")

    def facts(result: dict[str, object]) -> list[tuple[object, ...]]:
        return [(e["type"], e["sequence"], e["player"]) for e in result["events"]]  # type: ignore[attr-defined,index]

    assert facts(first) == facts(second) and len(first["events"]) == 1
    mirror = Mirror.of(snapshot)
    for event in first["events"]:
        mirror.apply(event)
    await play_move(seats[mirror.to_move], mirror)  # the other seat is on move: one skip only
    for player in seats.values():
        await player.close()


async def test_a_message_repeated_from_a_new_socket_of_the_session_gets_the_earlier_answer(
    url: str,
) -> None:
    """Issue 12, item 4: idempotency is the session's, not the socket's."""
    seats, snapshot, _ = await room_game(url)
    mover = seats[snapshot["to_move"]]
    first = await mover.ok("skip", id="once")
    again = Player(url)
    again.player_id, again.token = mover.player_id, mover.token
    await again.connect()  # the same session, a new socket, no reconnect
    second = await again.ok("skip", id="once")

    def facts(result: dict[str, object]) -> list[tuple[object, ...]]:
        return [(e["type"], e["sequence"], e["player"]) for e in result["events"]]  # type: ignore[attr-defined,index]

    # The earlier answer (its clocks read now), not not_in_match, and not applied twice.
    assert second["match_id"] == first["match_id"] and facts(second) == facts(first)
    # A new message from that socket still needs a reconnect first.
    assert (await again.request("skip", id="new"))["code"] == "not_in_match"
    for player in (*seats.values(), again):
        await player.close()


async def test_the_reconnect_ack_comes_before_its_snapshot(url: str) -> None:
    """Issue 12, item 12: as docs/protocol.md says, so what follows the ack is current."""
    seats, _, code = await room_game(url)
    leaving = seats[1]
    async with connect(leaving.ws_url) as ws:
        reconnect = {
            "type": "reconnect",
            "id": "r1",
            "code": code,
            "player_id": leaving.player_id,
            "token": leaving.token,
        }
        await ws.send(json.dumps(reconnect))
        kinds = []
        while "snapshot" not in kinds:
            message = json.loads(await asyncio.wait_for(ws.recv(), 15))
            kinds.append(message["type"])
    assert [k for k in kinds if k in ("ack", "snapshot")] == ["ack", "snapshot"]
    for player in seats.values():
        await player.close()


async def test_against_the_ai(url: str) -> None:
    human = await signed_in(url)
    match_id = (await human.ok("play_ai", level="easy"))["match_id"]
    snapshot = await human.push("snapshot")
    assert snapshot["match_id"] == match_id
    seat = next(s["seat"] for s in snapshot["seats"] if s["player_id"] == human.player_id)
    assert {s["kind"] for s in snapshot["seats"]} == {"human", "ai"}
    mirror = Mirror.of(snapshot)
    for _ in range(400):
        if mirror.over is not None:
            break
        if mirror.to_move == seat:
            await play_move(human, mirror)
        else:
            mirror.apply(await next_move_push(human))
    assert mirror.over is not None and mirror.over["reason"] == "all_captured"
    await human.close()


async def test_the_move_clock_skips_a_turn(url: str) -> None:
    seats, snapshot, _ = await room_game(url, move_seconds=1)
    skipped = await seats[1].push("turn_skipped", reason="timeout")
    assert skipped["player"] == snapshot["to_move"]
    await seats[2].push("turn_skipped", reason="timeout")
    time_sync = await seats[1].push("time_sync")
    assert time_sync["match_id"] == snapshot["match_id"]
    for player in seats.values():
        await player.close()


@pytest.mark.slow
async def test_the_game_clock_ends_the_game_with_reason_timeout(url: str) -> None:
    """A minute-long game (the online minimum): a capture, then nobody moves. The game ends when
    its clock does, and the winner is the engine's timeout rule applied to the dice left."""
    seats, snapshot, _ = await room_game(url, game_seconds=60, move_seconds=0)
    assert snapshot["clocks"]["move_remaining_ms"] is None
    mirror = Mirror.of(snapshot)
    while not any(e["type"] != "turn_skipped" for e in mirror.seen):
        await play_move(seats[mirror.to_move], mirror, level="hard")
        pushed = await next_move_push(seats[3 - mirror.to_move])
        assert pushed["sequence"] == mirror.seen[-1]["sequence"]
    left = {seat: sum(v is not None for v in dice.values()) for seat, dice in mirror.dice.items()}
    assert left[1] != left[2]
    over = {seat: await player.push("game_over", wait=75) for seat, player in seats.items()}
    assert over[1] == over[2]
    rules = Ruleset.from_dict(dict(snapshot["rules"]))
    expected = timeout_winner(left[1], left[2], mirror.first, rules)
    assert (over[1]["reason"], over[1]["winner"]) == ("timeout", expected)
    assert over[1]["remaining"] == {"1": left[1], "2": left[2]}
    for player in seats.values():
        await player.close()


async def test_forfeit_when_the_reconnect_window_closes(url: str) -> None:
    seats, _, _ = await room_game(url)
    await seats[1].close()
    away = await seats[2].push("opponent_disconnected")
    assert away["seat"] == 1
    over = await seats[2].push("game_over")
    assert (over["reason"], over["winner"]) == ("forfeit", 2)
    await seats[2].close()


async def test_reconnect_inside_the_window_gets_the_snapshot(url: str) -> None:
    seats, snapshot, code = await room_game(url)
    leaving = seats[1]
    await leaving.close()
    window_ends = (await seats[2].push("opponent_disconnected"))["reconnect_deadline_ms"]
    back = Player(url)
    back.player_id, back.token = leaving.player_id, leaving.token
    await back.connect(auth=False)
    result = await back.ok("reconnect", code=code, player_id=back.player_id, token=back.token)
    assert result["match_id"] == snapshot["match_id"]
    again = await back.push("snapshot")
    assert again["match_id"] == snapshot["match_id"] and again["status"] == "playing"
    await seats[2].push("opponent_reconnected")
    # Until the server's clock is past the window: no forfeit.
    while (await seats[2].push("time_sync"))["server_time_ms"] <= window_ends:
        pass
    assert not seats[2].has("game_over")
    seats[1] = back
    over = await play_to_the_end(seats, Mirror.of(again))
    assert over["reason"] == "all_captured"
    for player in seats.values():
        await player.close()


async def test_a_player_still_connected_when_recorded_away_is_recorded_back(
    url: str, settings: Settings
) -> None:
    """Issue 12, item 2: a match service that recovers a partition (another instance's, after a
    rebalance) records everyone away; the gateway still holding the player's socket in that
    match records them back at once, so nobody connected forfeits."""
    seats, snapshot, _ = await room_game(url)
    stream = f"match-{snapshot['match_id']}"
    gone = match_pb2.PlayerDisconnected(player_id=seats[1].player_id)
    command = new_command(stream, gone, command_id="recovered:test:1")
    async with open_event_log(settings) as log:  # as the recovering owner sends it
        await log.append(topics.MATCH_COMMANDS, [CODEC.command_record(command)])
    window_ends = (await seats[2].push("opponent_disconnected"))["reconnect_deadline_ms"]
    await seats[2].push("opponent_reconnected")
    while (await seats[2].push("time_sync"))["server_time_ms"] <= window_ends:
        pass
    assert not seats[2].has("game_over") and not seats[1].has("game_over")
    over = await play_to_the_end(seats, Mirror.of(snapshot))
    assert over["reason"] == "all_captured"
    for player in seats.values():
        await player.close()


async def test_rematch_after_a_resignation(url: str) -> None:
    seats, snapshot, _ = await room_game(url)
    result = await seats[1].ok("resign")
    assert result["events"][-1]["type"] == "game_over"
    await seats[2].push("game_over")
    await seats[1].push("lobby", event="room_match_finished")  # matchmaking knows it is over
    await seats[1].ok("rematch_request")
    await seats[2].push("lobby", event="rematch_requested")
    await seats[2].ok("rematch_accept")
    second = await seats[1].push("snapshot")
    assert second["match_id"] != snapshot["match_id"]
    # Players swap seats in a rematch.
    assert second["seats"][0]["player_id"] == seats[2].player_id
    for player in seats.values():
        await player.close()


async def test_rematch_declined(url: str) -> None:
    seats, _, _ = await room_game(url)
    await seats[2].ok("resign")
    await seats[2].push("lobby", event="room_match_finished")
    await seats[2].ok("rematch_request")
    await seats[1].push("lobby", event="rematch_requested")
    await seats[1].ok("rematch_decline")
    await seats[2].push("lobby", event="rematch_declined")
    for player in seats.values():
        await player.close()


async def test_quick_match_pairs_two_waiting_players(url: str) -> None:
    a, b = await signed_in(url), await signed_in(url)
    await a.ok("queue")
    await b.ok("queue")
    snapshot = await a.push("snapshot")
    assert (await b.push("snapshot"))["match_id"] == snapshot["match_id"]
    assert await a.ok("resign")
    await a.close()
    await b.close()


async def test_leaving_a_waiting_room_closes_it(url: str, settings: Settings) -> None:
    host = await signed_in(url)
    code = (await host.ok("create_room"))["code"]
    await host.close()
    async with open_event_log(settings) as log:  # the served log, read beside the server
        lobby = LobbyClient(log)

        async def closed() -> bool:
            events = await lobby.events(f"room-{code}")
            return any(isinstance(e.payload, lobby_pb2.RoomClosed) for e in events)

        await eventually(closed, f"room {code} closed after its host left")
    guest = await signed_in(url)
    assert (await guest.request("join_room", code=code))["type"] == "error"
    await guest.close()


async def test_preview_reaches_the_opponent_only_when_on(url: str) -> None:
    seats, snapshot, _ = await room_game(url, preview=True)
    mover = seats[snapshot["to_move"]]
    dice = snapshot["dice"][str(snapshot["to_move"])]
    tokens = [{"die": "D4", "value": dice["D4"]}, "+", {"die": "D6", "value": dice["D6"]}]
    result = await mover.ok("preview", tokens=tokens)
    assert result == {"value": dice["D4"] + dice["D6"], "error": None, "delivered": True}
    seen = await seats[3 - snapshot["to_move"]].push("preview")
    assert seen["value"] == dice["D4"] + dice["D6"]
    assert (await mover.ok("preview", tokens=tokens[:2]))["error"] == "malformed_expression"
    off, off_snapshot, _ = await room_game(url)
    answer = await off[off_snapshot["to_move"]].request("preview", tokens=tokens)
    assert answer["code"] == "preview_off"
    for player in [*seats.values(), *off.values()]:
        await player.close()


async def test_a_preview_naming_no_die_is_refused_and_not_relayed(url: str) -> None:
    seats, snapshot, _ = await room_game(url, preview=True)
    mover, opponent = seats[snapshot["to_move"]], seats[3 - snapshot["to_move"]]
    dice = snapshot["dice"][str(snapshot["to_move"])]
    tokens = [{"die": "D4", "value": dice["D4"]}]
    refused = await mover.request("preview", tokens=tokens, target="<img>")
    assert (refused["type"], refused["code"]) == ("error", "invalid_token")
    await mover.ok("preview", tokens=tokens, target="D6")
    relayed = await opponent.push("preview")
    assert relayed["target"] == "D6"  # the one with a die, the refused one never came
    for player in seats.values():
        await player.close()


async def test_every_limit_is_refused_mid_game_and_the_game_goes_on(url: str) -> None:
    seats, snapshot, _ = await room_game(url)
    mover, waiting = seats[snapshot["to_move"]], seats[3 - snapshot["to_move"]]
    assert (await mover.request("fly"))["code"] == "bad_message"
    die = {"die": "D4", "value": snapshot["dice"][str(snapshot["to_move"])]["D4"]}
    assert (await mover.request("mind", target="D6", tokens=[die, "^", die]))["code"] == (
        "invalid_token"
    )
    long = await mover.request("mind", target="D6", tokens=["("] * 65)
    assert long["code"] == "expression_too_long"
    with CLOCK.stopped():
        CLOCK.advance(1.0)  # a full bucket: ten messages, then refusals
        flood = await asyncio.gather(*(waiting.request("skip") for _ in range(15)))
    assert [a["code"] for a in flood] == ["not_your_turn"] * 10 + ["rate_limited"] * 5
    with pytest.raises(InvalidStatus):
        await Player(url).connect(auth=False, origin="https://elsewhere.example")
    result = await mover.ok("skip")  # nothing above changed the game
    skipped = result["events"][0]
    assert (skipped["type"], skipped["player"]) == ("turn_skipped", snapshot["to_move"])
    for player in seats.values():
        await player.close()
