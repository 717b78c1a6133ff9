"""The gateway's pure parts: the token whitelist (Maths Warriors' client), origins, identity, the
match fold the views are made on and the push shapes, and the hub relaying a match's views and
answering a command from the ViewBatch that carries its answer."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from arena_engine.maths_warriors import RULES_TAG
from arena_games.contract import ClientError, Viewer, pack
from arena_games.maths_warriors import MODULE as MW
from arena_games.maths_warriors import wire as mws
from arena_games.maths_warriors.client import DieToken, check_tokens
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_gateway.hub import Hub, short_type
from arena_gateway.identity import PrincipalKind, SessionStore, is_guest_name
from arena_gateway.limits import origin_allowed, parse_origins
from arena_gateway.protocol import CLIENT_TYPES
from arena_match.state import MatchState, apply
from arena_runtime import topics
from arena_runtime.cache import MemoryCache
from arena_runtime.envelope import Event, new_command
from arena_runtime.eventlog import Record
from arena_runtime.eventlog.embedded import EmbeddedEventLog
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import views_pb2 as vpb
from arena_runtime.streams import REJECTED_TYPE, is_next
from hypothesis import given, settings
from hypothesis import strategies as st

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
    with pytest.raises(ClientError) as refused:
        check_tokens(tokens)
    assert refused.value.code == "invalid_token"


def test_at_most_64_tokens() -> None:
    assert len(check_tokens(["("] * 64)) == 64
    with pytest.raises(ClientError) as refused:
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


def _created() -> match_pb2.MatchOpened:
    seats = [
        match_pb2.MatchSeat(player_id="p_a", display_name="A", kind=match_pb2.SEAT_KIND_HUMAN),
        match_pb2.MatchSeat(
            player_id="ai",
            display_name="AI",
            kind=match_pb2.SEAT_KIND_AI,
            policy="hard",
        ),
    ]
    return match_pb2.MatchOpened(
        match_id="m1",
        game=mws.GAME,
        seats=seats,
        settings=pack(pb.MathsWarriorsSettings(preview=True)),
        room_code="ABCDE",
    )


def _ended(ended: pb.GameEnded) -> match_pb2.MatchEnded:
    """The MatchEnded the match service writes around a GameEnded."""
    return mws.ended_of_game_ended(ended, "match-m1")


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


class Fold:
    """A match folded by the reading rule, as the match service folds it (what its views are
    made on): the state, and the events each command caused."""

    def __init__(self) -> None:
        self.state = MatchState()
        self.sequence, self.batch_id = 0, ""
        self.answers: dict[str, list[Event]] = {}

    def observe(self, event: Event) -> bool:
        if not is_next(event, self.sequence, self.batch_id):
            return False
        self.sequence, self.batch_id = event.sequence, event.batch_id
        if event.causation_id:
            self.answers.setdefault(event.causation_id, []).append(event)
        if event.type != REJECTED_TYPE:
            self.state = apply(self.state, event)
        return True

    def snapshot(self, now_ms: int) -> dict[str, Any]:
        table = self.state.table(self.sequence)
        (shown,) = MW.views.snapshot(table, self.state.game, Viewer(1), now_ms)
        return {k: v for k, v in shown.items() if k != "type"}


def match_push(view: Fold, event: Event) -> dict[str, Any] | None:
    table = view.state.table(event.sequence)
    shown = MW.views.push(table, view.state.game, event.payload, Viewer(0, "spectator"), 0)
    return shown[0] if shown else None


def test_the_fold_gives_the_snapshot_and_ignores_what_is_not_next() -> None:
    view = Fold()
    assert view.observe(_event(1, _created(), "c1", "b1", 0))
    assert view.observe(_event(2, _started(), "c1", "b1", 1))
    assert not view.observe(_event(2, _started()))  # a duplicate
    assert not view.observe(_event(5, pb.TurnSkipped(player=1, reason="skip")))  # a gap
    strength = pb.StrengthAttacked(
        player=1, attacker="D20", target="D4", seed=3, rerolls=[pb.Reroll(die="D20", value=9)]
    )
    assert view.observe(_event(3, strength, "c2"))
    view.observe(
        _event(4, match_pb2.PlayerDisconnected(seat=2, reconnect_deadline_ms=50_000), "c3")
    )
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
    ended = _ended(pb.GameEnded(winner=1, reason="timeout", remaining1=6, remaining2=5))
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


async def appended(log: EmbeddedEventLog, commands: int) -> None:
    """Wait until the match command topic holds ``commands`` records."""
    while True:
        if sum((await log.end_offsets(topics.MATCH_COMMANDS)).values()) >= commands:
            return
        await asyncio.sleep(0.005)


class RelayedSocket:
    """A socket as the hub sees it, keeping what it was pushed."""

    match_id: str | None = None

    def __init__(self, player_id: str = "p_a") -> None:
        self.player_id = player_id
        self.watching: set[str] = set()
        self.pushed: list[str] = []

    def push(self, message: dict[str, Any]) -> None:
        raise AssertionError("a match's pushes are relayed as written")

    def push_text(self, text: str) -> None:
        self.pushed.append(text)


def views_record(batch: vpb.ViewBatch, offset: int = 0) -> Record:
    return Record(topics.MATCH_VIEWS, 0, offset, b"match-m1", batch.SerializeToString())


async def test_a_command_is_answered_from_its_view_batch(tmp_path: Any) -> None:
    log = EmbeddedEventLog(tmp_path / "events.sqlite3")
    await log.start()
    try:
        await topics.ensure_topics(log, 1)
        hub = Hub(log, command_timeout=5)

        client = RelayedSocket()
        hub.add(client)
        seat = vpb.Viewer(seat=1, player_id="p_a")
        opened = vpb.ViewBatch(
            match_id="m1",
            game="maths-warriors",
            kind=vpb.VIEW_KIND_EVENTS,
            after_sequence=0,
            sequence=2,
            seats=[seat],
            pushes=[vpb.ViewPush(viewers=[seat], messages=[b'{"type":"snapshot"}'])],
        )
        await hub.deliver_views(views_record(opened))
        assert client.match_id == "m1" and client.pushed == ['{"type":"snapshot"}']
        assert hub.watchers("match-m1") == [client]
        skip = new_command("match-m1", pb.Skip(player_id="p_a"), command_id="s:1")
        answer = asyncio.create_task(hub.send(topics.MATCH_COMMANDS, skip))
        await appended(log, 1)  # the hub waits for its answer from here on
        acked = b'{"match_id":"m1","events":[{"type":"turn_skipped"},{"type":"game_over"}]}'
        moved = vpb.ViewBatch(
            match_id="m1",
            game="maths-warriors",
            kind=vpb.VIEW_KIND_EVENTS,
            after_sequence=2,
            sequence=4,
            answers=[vpb.CommandAnswer(command_id="s:1", ack=acked)],
        )
        await hub.deliver_views(views_record(moved, 1))
        outcome = await answer
        assert [e["type"] for e in (outcome.ack or {})["events"]] == ["turn_skipped", "game_over"]
        again = asyncio.create_task(
            hub.send(topics.MATCH_COMMANDS, new_command("match-m1", pb.Skip(), command_id="s:2"))
        )
        await appended(log, 2)
        refused = vpb.ViewBatch(
            match_id="m1",
            game="maths-warriors",
            kind=vpb.VIEW_KIND_EVENTS,
            after_sequence=4,
            sequence=5,
            answers=[vpb.CommandAnswer(command_id="s:2", code="not_your_turn")],
        )
        await hub.deliver_views(views_record(refused, 2))
        assert (await again).rejection_code == "not_your_turn"
        # A retried message is answered from what was relayed, without waiting for the log.
        assert (await hub.send(topics.MATCH_COMMANDS, skip)).ack == outcome.ack
        # A batch relayed before is not relayed again.
        await hub.deliver_views(views_record(opened))
        assert client.pushed == ['{"type":"snapshot"}']
        hub.remove(client)
        assert hub.watchers("match-m1") == []
        hub.forget("m1")
        assert "m1" not in hub.relays
    finally:
        await log.close()


def test_lobby_pushes_speak_the_snapshots_words_not_protobufs() -> None:
    """Issue 12, item 12: one vocabulary on the wire (``name``, ``guest``, ``casual``)."""
    from arena_gateway.hub import payload_dict
    from arena_runtime.proto_gen.arena.v1 import lobby_pb2

    host = lobby_pb2.LobbyPlayer(
        player_id="p_1", display_name="Guest_ABCD", kind=lobby_pb2.PLAYER_KIND_GUEST
    )
    opened = lobby_pb2.RoomOpened(
        code="ABCDE",
        host=host,
        settings=lobby_pb2.RoomSettings(mode=match_pb2.MATCH_MODE_CASUAL, game="maths-warriors"),
    )
    paired = lobby_pb2.PlayersPaired(match_id="m1", players=[host, host])
    ai = lobby_pb2.AiMatchRequested(match_id="m2", player=host, level=match_pb2.AI_LEVEL_HARD)
    datas = [payload_dict(event_of(p)) for p in (opened, paired, ai)]
    player = {"player_id": "p_1", "name": "Guest_ABCD", "kind": "guest", "policy": ""}
    assert datas[0]["host"] == player and datas[0]["settings"]["mode"] == "casual"
    assert datas[1]["players"] == [player, player]
    assert datas[2]["level"] == "hard"
    text = repr(datas)
    assert "PLAYER_KIND" not in text and "MATCH_MODE" not in text and "display_name" not in text


def test_lobby_pushes_carry_every_field_their_defaults_too() -> None:
    """A player gone (``connected`` false) and a draw (``winner`` 0, no winner's id) are said,
    not left out as protobuf's JSON does with default values."""
    from arena_gateway.hub import payload_dict
    from arena_runtime.proto_gen.arena.v1 import lobby_pb2

    gone = payload_dict(event_of(lobby_pb2.RoomPresenceChanged(player_id="p_1")))
    assert gone == {"player_id": "p_1", "connected": False}
    draw = payload_dict(event_of(lobby_pb2.RoomMatchFinished(match_id="m1", reason="time_limit")))
    assert draw == {
        "match_id": "m1",
        "winner": 0,
        "reason": "time_limit",
        "winner_player_id": "",
        "seats": [],
    }


def event_of(payload: Any) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(payload=payload)


async def test_a_gap_in_the_views_has_the_local_viewers_redrawn(tmp_path: Any) -> None:
    """Views lost on the way (their maker crashed after the append): the next batch starts past
    what was relayed, and the hub asks the match's owner for its viewers' snapshots."""
    from arena_runtime.envelope import CODEC

    log = EmbeddedEventLog(tmp_path / "events.sqlite3")
    await log.start()
    try:
        await topics.ensure_topics(log, 1)
        hub = Hub(log, command_timeout=5)

        client = RelayedSocket()
        hub.add(client)
        seat = vpb.Viewer(seat=1, player_id="p_a")

        def batch(after: int, sequence: int, text: bytes, **fields: Any) -> vpb.ViewBatch:
            push = vpb.ViewPush(viewers=[seat], messages=[text])
            return vpb.ViewBatch(
                match_id="m1",
                game="maze",
                after_sequence=after,
                sequence=sequence,
                seats=[seat],
                pushes=[push],
                **fields,
            )

        await hub.deliver_views(views_record(batch(0, 2, b"1", kind=vpb.VIEW_KIND_EVENTS)))
        await hub.deliver_views(views_record(batch(4, 5, b"5", kind=vpb.VIEW_KIND_EVENTS)))
        assert client.pushed == ["1", "5"]
        async with asyncio.timeout(5):
            await appended(log, 1)
        (record,) = await log.read(topics.MATCH_COMMANDS, 0, 0, 10)
        asked = CODEC.decode_command(record.value).payload
        assert isinstance(asked, vpb.ViewRequest) and asked.match_id == "m1"
        assert [v.player_id for v in asked.viewers] == ["p_a"]
        answer = batch(5, 5, b"snapshot", kind=vpb.VIEW_KIND_SNAPSHOT)
        answer.request_id = asked.request_id
        await hub.deliver_views(views_record(answer))
        for _ in range(100):
            if client.pushed[-1] == "snapshot":
                break
            await asyncio.sleep(0.01)
        assert client.pushed == ["1", "5", "snapshot"]
    finally:
        await log.close()


def test_a_games_ack_goes_out_as_the_match_service_wrote_it() -> None:
    """The ack's result is relayed as its text, and the whole ack is the text writing the read
    result again would give; the shared cache keeps the same answer as before."""
    from arena_gateway.hub import answer_outcome, decode_outcome, encode_outcome
    from arena_gateway.protocol import COMPACT, ack_text

    written = COMPACT.encode(
        {"match_id": "m1", "events": [{"type": "t", "to_move": 2, "x": 1.5e-07, "n": 'é\n"'}]}
    )
    outcome = answer_outcome(vpb.CommandAnswer(command_id="s:1", ack=written.encode()))
    assert outcome.ack_result == written
    result = outcome.ack_result
    assert result is not None
    for message_id in ("7", 'a "quoted" ïd'):
        read = {"type": "ack", "id": message_id, "result": json.loads(written)}
        assert ack_text(message_id, result) == COMPACT.encode(read)
    kept = encode_outcome(outcome)
    assert (
        kept
        == COMPACT.encode(
            {"events": [], "code": "", "message": "", "ack": json.loads(written)}
        ).encode()
    )
    assert decode_outcome(kept) == outcome

    # An empty ack (the socket's ack then names the match), a refusal (no ack at all).
    empty = answer_outcome(vpb.CommandAnswer(command_id="s:2"))
    assert (empty.ack, empty.ack_result) == ({}, None)
    refused = answer_outcome(vpb.CommandAnswer(command_id="s:3", code="not_your_turn"))
    assert (refused.ack, refused.ack_result) == (None, None)
    assert json.loads(encode_outcome(refused))["ack"] is None
    assert decode_outcome(encode_outcome(empty)) == empty


def test_each_message_is_the_root_of_a_trace_of_its_own() -> None:
    """Its span is current while it is answered (the commands sent carry it on), whatever span
    the socket's task runs in; unexported, it is unsampled, as the SDK would make it."""
    from arena_gateway.gateway import message_span
    from arena_gateway.protocol import CLIENT_MESSAGES
    from arena_runtime import telemetry
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext

    message = CLIENT_MESSAGES.validate_python({"type": "skip", "id": "1"})
    outer = NonRecordingSpan(SpanContext(trace_id=7, span_id=7, is_remote=True))
    traces = set()
    with telemetry.within(trace.set_span_in_context(outer)):
        for _ in range(2):
            span, current = message_span(message, "p_1")
            with current:
                assert trace.get_current_span() is span
                carried, _ = telemetry.current_trace()
            ids = span.get_span_context()
            assert ids.is_valid and not ids.is_remote and ids.trace_id != 7
            head, flags = carried.rsplit("-", 1)
            assert head == f"00-{ids.trace_id:032x}-{ids.span_id:016x}"
            # Sampled while exporting (the SDK may set the random-id bit, 0x02, beside it).
            assert int(flags, 16) & 1 == telemetry.exporting()
            traces.add(ids.trace_id)
        assert trace.get_current_span() is outer
    assert len(traces) == 2


async def test_a_senders_wait_for_its_answer_leaves_the_answer_to_the_others() -> None:
    """As wait_for(shield(answer)): a sender that times out or is cancelled gives up its own
    wait only; the same command's other senders still get the answer."""
    from arena_gateway.hub import Answer, Outcome, answer_of

    answer = Answer()
    with pytest.raises(TimeoutError):
        await answer_of(answer, 0.01)
    patient = asyncio.create_task(answer_of(answer, 5))
    cancelled = asyncio.create_task(answer_of(answer, 5))
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert not answer.done()
    outcome = Outcome(())
    answer.set_result(outcome)
    assert await patient is outcome
    assert await answer_of(answer, 5) is outcome  # answered already


async def test_an_answer_wakes_its_senders_on_the_turn_that_sets_it() -> None:
    """Each sender's task runs on the loop's next turn after the answer is set, not the turn
    after that (a done callback's)."""
    from arena_gateway.hub import Answer, Outcome, answer_of

    answer = Answer()
    senders = [asyncio.create_task(answer_of(answer, 5)) for _ in range(2)]
    await asyncio.sleep(0)
    outcome = Outcome(())
    answer.set_result(outcome)
    await asyncio.sleep(0)  # the senders' turn, scheduled before this task's own
    assert [sender.done() for sender in senders] == [True, True]
    assert [sender.result() for sender in senders] == [outcome, outcome]
    assert answer.waiters == []


def _parsed_as_before(text: str) -> Any:
    """What the gateway made of a frame before it read good ones in one call (json.loads, then
    the models): the message, or its refusal's (code, words)."""
    from arena_gateway.connection import parse
    from arena_gateway.protocol import CLIENT_MESSAGES, GatewayError
    from pydantic import ValidationError

    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        with pytest.raises(GatewayError) as refused:
            parse(text, 1 << 20)
        return ("bad_message", refused.value.message)
    try:
        return CLIENT_MESSAGES.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        return ("bad_message", ".".join(str(p) for p in first["loc"]) + f": {first['msg']}")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
#: Good messages, which the test changes a field or two of (or none).
_GOOD: list[dict[str, Any]] = [
    {"type": "pong", "id": "p1"},
    {"type": "auth", "id": "a", "token": "t"},
    {"type": "skip", "id": "7"},
    {"type": "strength", "id": "8", "attacker": "D6", "target": "D8"},
    {"type": "fill_seat", "id": "f", "seat": 2, "policy": "easy"},
    {"type": "create_room", "id": "c", "settings": {}},
    {"type": "queue", "id": "q", "mode": "ranked"},
    {"type": "join_room", "id": "j", "code": "ABCDE"},
    {"type": "reconnect", "id": "r", "player_id": "p_1", "match_id": "m"},
    {"type": "play_ai", "id": "ai", "level": "hard"},
]
_fields = sorted({name for message in _GOOD for name in message} | {"extra"})
_types = st.sampled_from(sorted(CLIENT_TYPES))


@settings(max_examples=400, deadline=None)
@given(
    good=st.sampled_from(_GOOD),
    changed=st.dictionaries(st.sampled_from(_fields), st.text(max_size=70) | _json | _types),
    raw=st.sampled_from(["", " ", "\t", " x", "]", "\ufeff"]),
)
def test_frames_are_read_as_before(good: dict[str, Any], changed: dict[str, Any], raw: str) -> None:
    """Messages, good and bad, and text that is not quite JSON: the same message or the same
    refusal as reading the JSON first and the models after."""
    from arena_gateway.connection import parse
    from arena_gateway.protocol import GatewayError

    message = {**good, **changed}
    for text in (json.dumps(message), json.dumps(message) + raw, raw + json.dumps(message)):
        before = _parsed_as_before(text)
        try:
            now: Any = parse(text, 1 << 20)
        except GatewayError as exc:
            now = (exc.code, exc.message)
        assert now == before


async def test_a_lobby_push_is_written_once_for_its_sockets_and_not_for_nobody(
    tmp_path: Any,
) -> None:
    from datetime import UTC, datetime

    from arena_gateway.protocol import COMPACT
    from arena_runtime.proto_gen.arena.v1 import lobby_pb2

    log = EmbeddedEventLog(tmp_path / "events.sqlite3")
    hub = Hub(log, command_timeout=5)

    class Socket:
        match_id: str | None = None

        def __init__(self, player_id: str) -> None:
            self.player_id = player_id
            self.watching: set[str] = {"room-ABCDE"}
            self.pushed: list[str] = []

        def push(self, message: dict[str, Any]) -> None:
            raise AssertionError("a lobby push goes out as its text")

        def push_text(self, text: str) -> None:
            self.pushed.append(text)

    host, guest = Socket("p_1"), Socket("p_2")
    hub.add(host)
    hub.add(guest)
    player = lobby_pb2.LobbyPlayer(player_id="p_2", display_name="Guest_EFGH")

    def joined(stream: str) -> Event:
        payload = lobby_pb2.RoomJoined(player=player)
        return Event("e1", stream, 2, "arena.v1.RoomJoined", payload, datetime.now(UTC))

    await hub.deliver(joined("room-ABCDE"))
    seated = {"player_id": "p_2", "name": "Guest_EFGH"}
    written = COMPACT.encode(
        {
            "type": "lobby",
            "event": "room_joined",
            "stream": "room-ABCDE",
            "data": {"player": {**seated, "kind": "unspecified", "policy": ""}},
        }
    )
    assert host.pushed == guest.pushed == [written]
    await hub.deliver(joined("room-OTHER"))  # watched by no socket here
    assert host.pushed == guest.pushed == [written]


async def test_a_socket_is_written_through_the_send_the_app_was_handed() -> None:
    """Beneath DirectSocket no layer sees a socket's pushes (the accept and the close still go
    through Starlette's WebSocket); what the server gets is the same messages."""
    from arena_gateway.connection import Connection, DirectSocket
    from arena_gateway.identity import Principal
    from arena_gateway.protocol import JsonText
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import WebSocketRoute
    from starlette.types import ASGIApp, Receive, Scope, Send
    from starlette.websockets import WebSocket

    beneath: list[str] = []

    class Beneath:
        def __init__(self, app: ASGIApp) -> None:
            self.app = app

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            async def seen(message: Any) -> None:
                beneath.append(message["type"])
                await send(message)

            await self.app(scope, receive, seen)

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        connection = Connection(websocket, Principal("p_1", "Guest_ABCD", PrincipalKind.GUEST, "s"))
        connection.start_writer()
        connection.push("pushed")
        connection.ack("1", JsonText('{"match_id":"m1"}'))
        connection.error("2", "bad_message", "no")
        await connection.close()

    app = Starlette(
        routes=[WebSocketRoute("/v1/ws", endpoint)],
        middleware=[Middleware(DirectSocket), Middleware(Beneath)],
    )
    scope = {"type": "websocket", "path": "/v1/ws", "headers": [], "query_string": b""}
    received: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    received.put_nowait({"type": "websocket.connect"})
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    await app(scope, received.get, send)
    assert sent == [
        {"type": "websocket.accept", "subprotocol": None, "headers": []},
        {"type": "websocket.send", "text": "pushed"},
        {"type": "websocket.send", "text": '{"type":"ack","id":"1","result":{"match_id":"m1"}}'},
        {
            "type": "websocket.send",
            "text": '{"type":"error","id":"2","code":"bad_message","message":"no"}',
        },
        {"type": "websocket.close", "code": 1000, "reason": ""},
    ]
    assert beneath == ["websocket.accept", "websocket.close"]


async def test_a_push_to_an_idle_socket_is_written_on_the_callers_turn() -> None:
    """Where the server writes a text message synchronously (the host's FramedProtocol), a push
    to a socket whose writer is idle is written by the push itself; one the server will not
    write now, and every push queued behind it, goes through its writer, in order."""
    from arena_gateway.connection import DIRECT_SEND, Connection
    from arena_gateway.identity import Principal

    written: list[str] = []

    class Server:
        open_for_writes = True

        def write_text(self, text: str) -> bool:
            if self.open_for_writes:
                written.append(f"now {text}")
            return self.open_for_writes

        async def send(self, message: Any) -> None:
            written.append(f"sent {message.get('text', message['type'])}")

    server = Server()

    class Socket:
        def __init__(self) -> None:
            self.scope = {DIRECT_SEND: server.send}

        async def close(self, code: int, reason: str | None = None) -> None:
            written.append(f"closed {code}")

    principal = Principal("p_1", "Guest_ABCD", PrincipalKind.GUEST, "s")
    connection = Connection(Socket(), principal)  # type: ignore[arg-type]
    connection.start_writer()
    await asyncio.sleep(0)  # the writer waits for pushes
    connection.push("one")
    connection.push({"type": "two"})
    assert written == ["now one", 'now {"type":"two"}']
    server.open_for_writes = False
    connection.push("three")
    server.open_for_writes = True
    connection.push("four")  # behind "three": not before it
    assert written == ["now one", 'now {"type":"two"}']
    await connection.close()
    assert written == ["now one", 'now {"type":"two"}', "sent three", "sent four", "closed 1000"]


async def test_spectators_leases_are_renewed_and_a_resumed_snapshot_redraws_them(
    tmp_path: Any,
) -> None:
    """The match service makes spectators' pushes only while a gateway says someone watches:
    the hub renews for each match its sockets watch as spectators, and relays a snapshot marked
    ``resumed`` (their pushes had lapsed) to them even at a sequence already relayed."""
    from arena_runtime.envelope import CODEC

    log = EmbeddedEventLog(tmp_path / "events.sqlite3")
    await log.start()
    try:
        await topics.ensure_topics(log, 1)
        hub = Hub(log, command_timeout=5)
        await hub.renew_spectators()
        assert await log.end_offsets(topics.MATCH_COMMANDS) == {0: 0}  # nobody watches
        spectator = RelayedSocket("p_s")
        hub.add(spectator)
        hub.spectate(spectator, "match-m1")
        watcher = vpb.Viewer(role="spectator")

        def snapshot(text: bytes, **fields: Any) -> vpb.ViewBatch:
            return vpb.ViewBatch(
                match_id="m1",
                game="maze",
                kind=vpb.VIEW_KIND_SNAPSHOT,
                after_sequence=5,
                sequence=5,
                pushes=[vpb.ViewPush(viewers=[watcher], messages=[text])],
                **fields,
            )

        hub.relayed(snapshot(b"first"))  # the watch's own snapshot, as the gateway handles it
        await hub.renew_spectators()
        (record,) = await log.read(topics.MATCH_COMMANDS, 0, 0, 10)
        renewal = CODEC.decode_command(record.value)
        assert renewal.stream == "match-m1" and renewal.payload.renew
        assert renewal.payload.match_id == "m1" and not renewal.payload.request_id
        assert [v.role for v in renewal.payload.viewers] == ["spectator"]
        await hub.deliver_views(views_record(snapshot(b"same")))
        assert spectator.pushed == []  # a snapshot at a sequence relayed before
        await hub.deliver_views(views_record(snapshot(b"redrawn", resumed=True)))
        assert spectator.pushed == ["redrawn"]
        hub.remove(spectator)
        await hub.renew_spectators()
        assert await log.end_offsets(topics.MATCH_COMMANDS) == {0: 1}
    finally:
        await log.close()
