"""Player streams and queues, pure: room requests and codes, AI games, settings, pairing order."""

from __future__ import annotations

import pytest
from arena_games.maths_warriors.lobby import room, settings_in
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_matchmaking.context import LobbyContext, Player
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.ids import CODE_ALPHABET, is_room_code, match_id, room_code
from arena_matchmaking.players import (
    KEPT_REQUESTS,
    PlayerLobby,
    apply_player,
    decide_player,
    initial_player,
)
from arena_matchmaking.queues import Queue, apply_queue, decide_queue, initial_queue
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message
from hypothesis import given
from hypothesis import strategies as st

ALICE = Player("p_alice", "Alice")
BOB = Player("p_bob", "Bob")
CAROL = Player("p_carol", "Carol")
CTX = LobbyContext(now_ms=1_000, room_cap=3)
QUEUE = "queue-maths-warriors-casual"


def player_decide(
    lobby: PlayerLobby, command: Message, cid: str = "create-1", ctx: LobbyContext = CTX
) -> list[Message] | Rejection:
    return decide_player(lobby, command, ctx, stream=f"player-{lobby.player_id}", command_id=cid)


def create(settings: pb.RoomSettings | None = None, host: Player = ALICE) -> pb.CreateRoom:
    return pb.CreateRoom(request_id="r1", host=host.to_proto(), settings=settings)


# -- codes ----------------------------------------------------------------------------------


@given(st.text(min_size=1, max_size=40), st.integers(0, 1000))
def test_codes_are_five_symbols_of_the_alphabet_and_repeatable(
    command_id: str, attempt: int
) -> None:
    code = room_code(command_id, attempt)
    assert is_room_code(code) and len(code) == 5
    assert set(code) <= set(CODE_ALPHABET)
    assert room_code(command_id, attempt) == code


def test_attempts_pick_different_codes() -> None:
    codes = {room_code("create-1", attempt) for attempt in range(50)}
    assert len(codes) == 50
    assert not set("01IOL") & set(CODE_ALPHABET)


def test_match_ids_depend_on_stream_and_command() -> None:
    assert match_id("room-A", "c") == match_id("room-A", "c")
    assert len({match_id("room-A", "c"), match_id("room-B", "c"), match_id("room-A", "d")}) == 3


# -- room requests -----------------------------------------------------------------------------


def test_create_room_picks_the_first_attempts_code_with_defaults_filled() -> None:
    events = player_decide(initial_player(ALICE.player_id), create())
    assert not isinstance(events, Rejection)
    (requested,) = events
    assert isinstance(requested, pb.RoomRequested)
    assert requested.code == room_code("create-1", 0) and requested.attempt == 0
    assert requested.create_command_id == "create-1" and requested.request_id == "r1"
    game = settings_in(requested.settings)
    assert game is not None and game.game_seconds == 720 and game.move_seconds == 30
    assert game.ruleset.timeout_winner == "fewer_own_dice"
    assert requested.settings.mode == match_pb2.MATCH_MODE_CASUAL


@pytest.mark.parametrize(
    ("settings", "code"),
    [
        (room(game_seconds=59), Code.INVALID_GAME_CLOCK),
        (room(game_seconds=3601), Code.INVALID_GAME_CLOCK),
        (room(move_seconds=121), Code.INVALID_MOVE_CLOCK),
        (
            pb.RoomSettings(mode=match_pb2.MATCH_MODE_RANKED),
            Code.RANKED_REQUIRES_ACCOUNTS,
        ),  # a guest
        (pb.RoomSettings(mode=77), Code.MODE_NOT_AVAILABLE),
        (
            room(ruleset=mw.MatchRuleset(timeout_winner="most_dice")),
            Code.INVALID_RULESET,
        ),
    ],
)
def test_bad_settings_are_refused(settings: pb.RoomSettings, code: Code) -> None:
    decided = player_decide(initial_player(ALICE.player_id), create(settings))
    assert isinstance(decided, Rejection) and decided.code == code


@pytest.mark.parametrize(
    "settings",
    [
        room(game_seconds=60, move_seconds=0),
        room(game_seconds=3600, move_seconds=120, preview=True),
        room(
            ruleset=mw.MatchRuleset(
                first_player_penalty="strength_and_mind",
                timeout_winner="fewer_opponent_dice",
                first_player_compare="by_die_type",
                all_equal_start="rolloff",
            )
        ),
    ],
)
def test_settings_at_the_limits_are_kept(settings: pb.RoomSettings) -> None:
    decided = player_decide(initial_player(ALICE.player_id), create(settings))
    assert not isinstance(decided, Rejection)
    kept = settings_in(decided[0].settings)  # type: ignore[attr-defined]
    chosen = settings_in(settings)
    assert kept is not None and chosen is not None
    for name in ("game_seconds", "move_seconds"):
        if chosen.HasField(name):
            assert getattr(kept, name) == getattr(chosen, name)
    assert kept.preview == chosen.preview
    for name, value in chosen.ruleset.ListFields():
        assert getattr(kept.ruleset, name.name) == value


def test_cap_already_in_room_and_wrong_sender() -> None:
    lobby = initial_player(ALICE.player_id)
    full = LobbyContext(now_ms=0, room_cap=3, open_rooms=3)
    assert player_decide(lobby, create(), ctx=full) == Rejection(
        Code.ROOM_CAP_REACHED, "3 rooms are open"
    )
    seated = LobbyContext(now_ms=0, player_rooms={ALICE.player_id: "ABCDE"})
    decided = player_decide(lobby, create(), ctx=seated)
    assert isinstance(decided, Rejection) and decided.code == Code.ALREADY_IN_ROOM
    decided = player_decide(lobby, create(host=BOB))
    assert isinstance(decided, Rejection) and decided.code == Code.INVALID_PLAYER


def requested(lobby: PlayerLobby, command: Message, cid: str = "x") -> PlayerLobby:
    events = player_decide(lobby, command, cid)
    assert not isinstance(events, Rejection), events
    for event in events:
        lobby = apply_player(lobby, event)
    return lobby


def test_a_taken_code_is_retried_with_the_next_attempt_until_they_run_out() -> None:
    lobby = requested(initial_player(ALICE.player_id), create(), "create-1")
    retry = pb.RetryRoomCode(create_command_id="create-1", attempt=1)
    events = player_decide(lobby, retry, "create-1:retry:1")
    assert not isinstance(events, Rejection)
    assert events[0].code == room_code("create-1", 1)  # type: ignore[attr-defined]
    after = requested(lobby, retry)
    # A repeat of an attempt already made, or one out of order, changes nothing.
    assert player_decide(after, retry) == []
    assert player_decide(after, pb.RetryRoomCode(create_command_id="create-1", attempt=5)) == []
    unknown = player_decide(after, pb.RetryRoomCode(create_command_id="nope", attempt=1))
    assert isinstance(unknown, Rejection) and unknown.code == Code.UNKNOWN_REQUEST
    # Out of attempts.
    ctx = LobbyContext(now_ms=0, max_code_attempts=2)
    last = pb.RetryRoomCode(create_command_id="create-1", attempt=2)
    events = decide_player(after, last, ctx, stream="player-p_alice", command_id="r")
    assert events == [
        pb.RoomRequestFailed(request_id="r1", create_command_id="create-1", reason="no_free_code")
    ]
    failed = apply_player(after, events[0])  # type: ignore[index]
    assert decide_player(failed, last, ctx, stream="player-p_alice", command_id="r") == []


def test_a_player_stream_remembers_only_its_latest_requests() -> None:
    lobby = initial_player(ALICE.player_id)
    made = [f"create-{n}" for n in range(KEPT_REQUESTS + 5)]
    for command_id in made:
        # Each room was opened and left before the next; the context says the player is free.
        lobby = requested(lobby, create(), command_id)
    assert list(lobby.requests) == made[-KEPT_REQUESTS:]
    newest, oldest = made[-1], made[0]
    events = player_decide(lobby, pb.RetryRoomCode(create_command_id=newest, attempt=1))
    assert not isinstance(events, Rejection) and events[0].code == room_code(newest, 1)  # type: ignore[attr-defined]
    # A retry rewrites its request in place: the order of the rest is kept.
    retried = apply_player(lobby, events[0])  # type: ignore[index]
    assert list(retried.requests) == made[-KEPT_REQUESTS:]
    forgotten = player_decide(lobby, pb.RetryRoomCode(create_command_id=oldest, attempt=1))
    assert isinstance(forgotten, Rejection) and forgotten.code == Code.UNKNOWN_REQUEST


def test_play_ai() -> None:
    lobby = initial_player(ALICE.player_id)
    command = pb.PlayAi(request_id="r", player=ALICE.to_proto(), level=match_pb2.AI_LEVEL_HARD)
    events = player_decide(lobby, command, "ai-1")
    assert not isinstance(events, Rejection)
    (started,) = events
    assert isinstance(started, pb.AiMatchRequested)
    assert started.match_id == match_id("player-p_alice", "ai-1")
    assert started.level == match_pb2.AI_LEVEL_HARD and started.policy == "hard"
    assert settings_in(started.settings).game_seconds == 720  # type: ignore[union-attr]
    bad = player_decide(lobby, pb.PlayAi(player=ALICE.to_proto()))
    assert isinstance(bad, Rejection) and bad.code == Code.INVALID_AI_LEVEL
    clock = pb.PlayAi(player=ALICE.to_proto(), level=1, settings=room(move_seconds=500))
    bad = player_decide(lobby, clock)
    assert isinstance(bad, Rejection) and bad.code == Code.INVALID_MOVE_CLOCK


def test_a_player_stream_takes_no_room_commands() -> None:
    decided = player_decide(initial_player(ALICE.player_id), pb.JoinRoom())
    assert isinstance(decided, Rejection) and decided.code == Code.UNKNOWN_COMMAND


# -- queues ---------------------------------------------------------------------------------


def enqueue(player: Player, mode: int = match_pb2.MATCH_MODE_CASUAL) -> pb.Enqueue:
    return pb.Enqueue(player=player.to_proto(), game="maths-warriors", mode=mode)


def queue_step(queue: Queue, command: Message, cid: str, ctx: LobbyContext = CTX) -> Queue:
    events = decide_queue(queue, command, ctx, command_id=cid)
    assert not isinstance(events, Rejection), events
    for event in events:
        queue = apply_queue(queue, event)
    return queue


def queue_refusal(queue: Queue, command: Message, ctx: LobbyContext = CTX) -> str:
    decided = decide_queue(queue, command, ctx, command_id="q")
    assert isinstance(decided, Rejection), decided
    return decided.code


def test_queue_pairs_the_longest_waiting_player_first() -> None:
    queue = queue_step(initial_queue(QUEUE), enqueue(ALICE), "q1")
    assert queue.waiting == (ALICE,)
    events = decide_queue(queue, enqueue(BOB), CTX, command_id="q2")
    assert not isinstance(events, Rejection)
    queued, paired = events
    assert isinstance(queued, pb.PlayerQueued)
    assert isinstance(paired, pb.PlayersPaired)
    assert [p.player_id for p in paired.players] == [ALICE.player_id, BOB.player_id]
    assert paired.match_id == match_id(QUEUE, "q2")
    assert queue_step(queue, enqueue(BOB), "q2").waiting == ()


def test_arrival_order_survives_a_dequeue() -> None:
    # Alice waits, leaves; Bob waits; Alice comes back: Bob has waited longest and gets seat 1.
    queue = queue_step(initial_queue(QUEUE), enqueue(ALICE), "q1")
    queue = queue_step(queue, pb.Dequeue(player_id=ALICE.player_id), "q2")
    queue = queue_step(queue, enqueue(BOB), "q3")
    events = decide_queue(queue, enqueue(ALICE), CTX, command_id="q4")
    assert not isinstance(events, Rejection)
    assert [p.player_id for p in events[1].players] == [BOB.player_id, ALICE.player_id]  # type: ignore[attr-defined]


def test_queue_refusals() -> None:
    queue = queue_step(initial_queue(QUEUE), enqueue(ALICE), "q1")
    assert queue_refusal(queue, enqueue(ALICE)) == Code.ALREADY_QUEUED
    assert queue_refusal(queue, pb.Dequeue(player_id=BOB.player_id)) == Code.NOT_QUEUED
    assert queue_refusal(queue, enqueue(BOB, match_pb2.MATCH_MODE_RANKED)) == Code.UNKNOWN_QUEUE
    other_game = pb.Enqueue(player=BOB.to_proto(), game="digits")
    assert queue_refusal(queue, other_game) == Code.UNKNOWN_QUEUE
    assert queue_refusal(initial_queue("queue-x"), enqueue(BOB)) == Code.UNKNOWN_QUEUE
    assert queue_refusal(queue, enqueue(Player(""))) == Code.INVALID_PLAYER
    seated = LobbyContext(now_ms=0, player_rooms={CAROL.player_id: "ABCDE"})
    assert queue_refusal(queue, enqueue(CAROL), seated) == Code.ALREADY_IN_ROOM
    assert queue_refusal(queue, pb.JoinRoom()) == Code.UNKNOWN_COMMAND


def test_a_queued_player_cannot_open_or_join_a_room() -> None:
    queued = LobbyContext(now_ms=0, player_queues={ALICE.player_id: QUEUE})
    decided = player_decide(initial_player(ALICE.player_id), create(), ctx=queued)
    assert isinstance(decided, Rejection) and decided.code == Code.ALREADY_QUEUED


def test_a_player_waits_in_one_queue_at_a_time() -> None:
    elsewhere = LobbyContext(now_ms=0, player_queues={BOB.player_id: "queue-maths-warriors-ranked"})
    assert queue_refusal(initial_queue(QUEUE), enqueue(BOB), elsewhere) == Code.ALREADY_QUEUED
