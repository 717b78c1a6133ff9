"""The gateway's pure parts: the token whitelist, origins, identity, the match fold and the
push shapes, and the hub answering a command only once its whole batch is folded."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from arena_engine.maths_warriors import RULES_TAG
from arena_gateway.hub import Hub, match_push, short_type
from arena_gateway.identity import PrincipalKind, SessionStore, is_guest_name
from arena_gateway.limits import DieToken, check_tokens, origin_allowed, parse_origins
from arena_gateway.matches import MatchView
from arena_gateway.protocol import GatewayError
from arena_runtime import topics
from arena_runtime.cache import MemoryCache
from arena_runtime.envelope import Event, new_command
from arena_runtime.eventlog.embedded import EmbeddedEventLog
from arena_runtime.proto_gen.arena.v1 import envelope_pb2
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_runtime.schemas import maths_warriors as mws

D6 = {"die": "D6", "value": 3}


def test_tokens_are_whitelisted_and_normalised() -> None:
    assert check_tokens([D6, "×", "(", {"die": "D4", "value": 1}, ")"]) == [
        DieToken("D6", 3),
        "*",
        "(",
        DieToken("D4", 1),
        ")",
    ]


@pytest.mark.parametrize(
    "tokens",
    [
        [D6, "^", D6],
        [D6, "+", 3],
        [{"die": "D6", "value": 0}],
        [{"die": "D6", "value": True}],
        [{"die": "D6", "value": 3, "extra": 1}],
        [{"die": "d6", "value": 3}],
        ["++"],
        [None],
    ],
)
def test_anything_else_voids_the_expression(tokens: list[Any]) -> None:
    with pytest.raises(GatewayError) as refused:
        check_tokens(tokens)
    assert refused.value.code == "invalid_token"


def test_at_most_64_tokens() -> None:
    assert len(check_tokens(["("] * 64)) == 64
    with pytest.raises(GatewayError) as refused:
        check_tokens(["("] * 65)
    assert refused.value.code == "expression_too_long"


def test_origins() -> None:
    allowed = parse_origins(" https://a.example/ , https://b.example")
    assert origin_allowed("https://a.example", allowed)
    assert not origin_allowed("https://c.example", allowed)
    assert origin_allowed(None, allowed)  # not a browser
    assert not origin_allowed("https://a.example", parse_origins(""))
    assert origin_allowed("https://any.example", parse_origins("*"))


async def test_sessions_resolve_renew_and_revoke() -> None:
    now = [0.0]
    store = SessionStore(MemoryCache(clock=lambda: now[0]), ttl_seconds=10)
    principal, token = await store.new_guest()
    assert is_guest_name(principal.name) and principal.kind is PrincipalKind.GUEST
    now[0] = 9
    assert await store.resolve(token) == principal  # and renewed for 10 s more
    now[0] = 18
    assert await store.resolve(token) == principal
    assert await store.resolve(token + "x") is None
    assert await store.revoke(token)
    assert await store.resolve(token) is None
    now[0] = 100
    other, token2 = await store.new_guest()
    now[0] = 111
    assert await store.resolve(token2) is None  # expired
    assert other.session_id != principal.session_id


def test_guest_names() -> None:
    assert is_guest_name("Guest_AB23")
    for name in ("Guest_AB2O", "Guest_AB2", "AB23", "Guest_AB234"):
        assert not is_guest_name(name)


def _event(sequence: int, payload: Any, cause: str = "", batch: str = "", index: int = 0) -> Event:
    return Event(
        event_id=f"e{sequence}",
        stream="match-m1",
        sequence=sequence,
        type=mws.type_name(type(payload)),
        payload=payload,
        time=datetime.now(UTC),
        causation_id=cause,
        batch_id=batch,
        batch_index=index,
    )


def _created() -> pb.MatchCreated:
    seats = [
        pb.MatchSeat(player_id="p_a", display_name="A", kind=pb.SEAT_KIND_HUMAN),
        pb.MatchSeat(
            player_id="ai", display_name="AI", kind=pb.SEAT_KIND_AI, ai_level=pb.AI_LEVEL_HARD
        ),
    ]
    return pb.MatchCreated(match_id="m1", seats=seats, preview=True, room_code="ABCDE")


def _started() -> pb.GameStarted:
    return pb.GameStarted(
        seed=1,
        dice1=[1, 2, 3, 4, 5, 6],
        dice2=[2, 3, 4, 5, 6, 7],
        first=1,
        game_seconds=720,
        move_seconds=30,
        started_at_ms=1000,
        game_deadline_ms=721_000,
        move_deadline_ms=31_000,
        rules_tag=RULES_TAG,
    )


def test_the_fold_gives_the_snapshot_and_ignores_what_is_not_next() -> None:
    view = MatchView("m1")
    assert view.observe(_event(1, _created(), "c1", "b1", 0))
    assert view.observe(_event(2, _started(), "c1", "b1", 1))
    assert not view.observe(_event(2, _started()))  # a duplicate
    assert not view.observe(_event(5, pb.TurnSkipped(player=1, reason="skip")))  # a gap
    strength = pb.StrengthAttacked(
        player=1, attacker="D20", target="D4", seed=3, rerolls=[pb.Reroll(die="D20", value=9)]
    )
    assert view.observe(_event(3, strength, "c2"))
    view.observe(_event(4, pb.PlayerDisconnected(seat=2, reconnect_deadline_ms=50_000), "c3"))
    snap = view.snapshot(now_ms=11_000)
    assert snap["dice"]["1"]["D20"] == 9 and snap["dice"]["2"]["D4"] is None
    assert snap["to_move"] == 2 and snap["move_count"] == 1
    assert snap["seats"][1] == {
        "seat": 2,
        "player_id": "ai",
        "name": "AI",
        "kind": "ai",
        "connected": False,
        "reconnect_deadline_ms": 50_000,
    }
    assert snap["clocks"]["game_remaining_ms"] == 710_000
    assert snap["room_code"] == "ABCDE" and snap["preview"] is True
    assert [e.sequence for e in view.answers["c1"]] == [1, 2]
    ended = pb.GameEnded(winner=1, reason="timeout", remaining1=6, remaining2=5)
    view.observe(_event(5, ended, "timer:game:721000"))
    assert view.snapshot(0)["win_reason"] == "timeout" and view.snapshot(0)["status"] == "over"
    push = match_push(view, _event(5, ended))
    assert push is not None
    assert (push["type"], push["winner_player_id"], push["reason"]) == (
        "game_over",
        "p_a",
        "timeout",
    )


def test_short_type() -> None:
    assert short_type("arena.v1.RoomMatchStarted") == "room_match_started"


async def test_a_command_is_answered_with_every_event_of_its_batch(tmp_path: Any) -> None:
    log = EmbeddedEventLog(tmp_path / "events.sqlite3")
    await log.start()
    try:
        await topics.ensure_topics(log, 1)
        hub = Hub(log, command_timeout=5)

        class Client:
            player_id = "p_a"
            match_id: str | None = None

            def __init__(self) -> None:
                self.watching: set[str] = set()
                self.pushed: list[dict[str, Any]] = []

            def push(self, message: dict[str, Any]) -> None:
                self.pushed.append(message)

        client = Client()
        hub.add(client)
        for event in (_event(1, _created(), "x", "b", 0), _event(2, _started(), "x", "b", 1)):
            await hub.deliver(event)
        hub.settle()
        assert client.match_id == "m1" and client.pushed[0]["type"] == "snapshot"
        assert hub.watchers("match-m1") == [client]
        skip = new_command("match-m1", pb.Skip(player_id="p_a"), command_id="s:1")
        answer = asyncio.create_task(hub.send(topics.MATCH_COMMANDS, skip))
        await asyncio.sleep(0.05)
        await hub.deliver(_event(3, pb.TurnSkipped(player=1, reason="skip"), "s:1", "b3", 0))
        end = pb.GameEnded(winner=2, reason="all_captured", remaining1=0, remaining2=6)
        await hub.deliver(_event(4, end, "s:1", "b3", 1))
        assert not answer.done()
        hub.settle()
        outcome = await answer
        assert [e.sequence for e in outcome.events] == [3, 4]
        rejected = envelope_pb2.CommandRejected(command_id="s:2", code="not_your_turn")
        again = asyncio.create_task(
            hub.send(topics.MATCH_COMMANDS, new_command("match-m1", pb.Skip(), command_id="s:2"))
        )
        await asyncio.sleep(0.05)
        await hub.deliver(_event(5, rejected, "s:2", "b5", 0))
        hub.settle()
        assert (await again).rejection_code == "not_your_turn"
        # A retried message is answered from the fold, without waiting for the log.
        assert [e.sequence for e in (await hub.send(topics.MATCH_COMMANDS, skip)).events] == [3, 4]
        hub.remove(client)
        assert hub.watchers("match-m1") == []
        hub.forget("m1")
        assert "m1" not in hub.views
    finally:
        await log.close()
