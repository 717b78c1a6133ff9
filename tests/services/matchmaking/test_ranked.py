"""Ranked play in the lobby, pure (issue 5): two players signed in with two different accounts;
guests, the same account twice and the AI are refused with ``ranked_requires_accounts``."""

from __future__ import annotations

from arena_matchmaking.context import LobbyContext, Player
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.players import decide_player, initial_player
from arena_matchmaking.queues import apply_queue, decide_queue, initial_queue
from arena_matchmaking.ranked import MESSAGE
from arena_matchmaking.reactions import follow_ups
from arena_matchmaking.room_settings import checked_settings
from arena_matchmaking.rooms import apply_all, decide_room, initial_room
from arena_runtime.envelope import Command, new_command
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Answer, Rejection
from google.protobuf.message import Message

ANN = Player("p_ann", "ann", pb.PLAYER_KIND_ACCOUNT)
BEN = Player("p_ben", "ben", pb.PLAYER_KIND_ACCOUNT)
GUEST = Player("p_guest", "Guest_ABCD", pb.PLAYER_KIND_GUEST)
OLD = Player("p_old", "Old")  # written before issue 5: no kind, so a guest
CTX = LobbyContext(now_ms=1_000, room_cap=10)
RANKED = pb.RoomSettings(mode=match_pb2.MATCH_MODE_RANKED)
RANKED_QUEUE = "queue-maths-warriors-ranked"
REFUSED = Rejection(Code.RANKED_REQUIRES_ACCOUNTS, MESSAGE)


def create(host: Player) -> list[Message] | Rejection:
    command = pb.CreateRoom(request_id="r", host=host.to_proto(), settings=RANKED)
    return decide_player(
        initial_player(host.player_id),
        command,
        CTX,
        stream=f"player-{host.player_id}",
        command_id="c",
    )


def ranked_room(host: Player = ANN):
    opened = pb.OpenRoom(
        request_id="r",
        host=host.to_proto(),
        settings=checked_settings(RANKED),
        create_command_id="c",
    )
    events = decide_room(initial_room("K7PQ2"), opened, CTX, stream="room-K7PQ2", command_id="o")
    assert not isinstance(events, Rejection)
    return apply_all(initial_room("K7PQ2"), events)


def join(room, player: Player) -> list[Message] | Rejection:
    command = pb.JoinRoom(player=player.to_proto())
    return decide_room(room, command, CTX, stream="room-K7PQ2", command_id="j")


def test_the_message_is_the_one_players_see() -> None:
    assert MESSAGE == "Ranked matches require two different accounts"


def test_only_an_account_opens_a_ranked_room() -> None:
    assert create(GUEST) == REFUSED
    assert create(OLD) == REFUSED
    requested = create(ANN)
    assert not isinstance(requested, Rejection)
    assert requested[0].settings.mode == match_pb2.MATCH_MODE_RANKED


def test_a_ranked_room_takes_a_second_different_account_only() -> None:
    room = ranked_room()
    assert join(room, GUEST) == REFUSED
    same_account = Player(ANN.player_id, "ann", pb.PLAYER_KIND_ACCOUNT)  # signed in twice
    assert join(room, same_account) == REFUSED
    joined = join(room, BEN)
    assert not isinstance(joined, Rejection)
    started = joined[-1]
    assert isinstance(started, pb.RoomMatchStarted)
    assert started.settings.mode == match_pb2.MATCH_MODE_RANKED
    (create_match,) = follow_ups(
        new_command("room-K7PQ2", pb.JoinRoom(player=BEN.to_proto()), command_id="j"),
        Answer("j", "room-K7PQ2", events=(_event(started),)),
    )
    assert create_match.payload.mode == match_pb2.MATCH_MODE_RANKED


def test_the_ranked_queue_pairs_accounts_into_a_ranked_match() -> None:
    queue = initial_queue(RANKED_QUEUE)

    def enqueue(player: Player, cid: str) -> list[Message] | Rejection:
        command = pb.Enqueue(
            player=player.to_proto(), game="maths-warriors", mode=match_pb2.MATCH_MODE_RANKED
        )
        return decide_queue(queue, command, CTX, command_id=cid)

    assert enqueue(GUEST, "g") == REFUSED
    first = enqueue(ANN, "a")
    assert not isinstance(first, Rejection)
    for event in first:
        queue = apply_queue(queue, event)
    paired = enqueue(BEN, "b")
    assert not isinstance(paired, Rejection) and isinstance(paired[-1], pb.PlayersPaired)
    command: Command = new_command(RANKED_QUEUE, pb.Enqueue(player=BEN.to_proto()), command_id="b")
    (create_match,) = follow_ups(command, Answer("b", RANKED_QUEUE, events=(_event(paired[-1]),)))
    assert create_match.payload.mode == match_pb2.MATCH_MODE_RANKED


def test_casual_stays_open_to_guests_and_the_ai_is_never_ranked() -> None:
    casual = pb.CreateRoom(request_id="r", host=GUEST.to_proto(), settings=pb.RoomSettings())
    decided = decide_player(
        initial_player(GUEST.player_id), casual, CTX, stream="player-p_guest", command_id="c"
    )
    assert not isinstance(decided, Rejection)
    ai = pb.PlayAi(
        request_id="r", player=ANN.to_proto(), level=match_pb2.AI_LEVEL_EASY, settings=RANKED
    )
    assert (
        decide_player(initial_player(ANN.player_id), ai, CTX, stream="player-p_ann", command_id="c")
        == REFUSED
    )


def _event(payload: Message):  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from arena_runtime.envelope import Event

    return Event(
        event_id="e",
        stream="s",
        sequence=1,
        type=payload.DESCRIPTOR.full_name,
        payload=payload,
        time=datetime.now(UTC),
        causation_id="c",
        correlation_id="c",
        batch_id="b",
        batch_index=0,
    )
