"""Maths Warriors' module beyond the contract: its result, its legacy shapes, its pushes."""

from __future__ import annotations

from arena_games.contract import Result, SeatResult, unpack
from arena_games.maths_warriors import MODULE, lobby, wire
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_runtime.proto_gen.arena.v1 import lobby_pb2, match_pb2


def test_the_winner_ranks_first_and_each_seat_scores_the_dice_it_captured() -> None:
    ended = mw.GameEnded(winner=2, reason="timeout", remaining1=2, remaining2=5)
    assert wire.result_of(ended) == Result(
        "timeout", (SeatResult(1, rank=2, score=1), SeatResult(2, rank=1, score=4))
    )
    upcast = wire.ended_of_game_ended(ended, "match-abc")
    assert (upcast.match_id, upcast.game, upcast.reason) == ("abc", "maths-warriors", "timeout")
    assert [(s.seat, s.rank, s.score) for s in upcast.seats] == [(1, 2, 1), (2, 1, 4)]
    assert unpack(upcast.detail, mw.GameEnded) == ended


def test_a_legacy_create_match_reads_as_the_start_match_new_code_sends() -> None:
    ai = match_pb2.MatchSeat(
        player_id="ai-hard", kind=match_pb2.SEAT_KIND_AI, ai_level=match_pb2.AI_LEVEL_HARD
    )
    human = match_pb2.MatchSeat(player_id="p_1", kind=match_pb2.SEAT_KIND_HUMAN)
    create = mw.CreateMatch(match_id="m", seats=[human, ai], move_seconds=10, preview=True)
    start = wire.start_of_create(create, "match-m")
    assert start.game == "maths-warriors" and start.match_id == "m"
    assert [s.policy for s in start.seats] == ["", "hard"]
    assert not start.seats[1].ai_level  # the legacy enum is not written any more
    settings = unpack(start.settings, mw.MathsWarriorsSettings)
    assert not settings.HasField("game_seconds") and settings.move_seconds == 10
    assert settings.preview


def test_lobby_settings_of_version_one_move_into_typed_bytes() -> None:
    old = mw.MathsWarriorsSettings(game_seconds=300, move_seconds=0, preview=True)
    # A version-1 RoomSettings: the game's fields 1-4 beside the lobby's mode (field 5).
    raw = old.SerializeToString() + lobby_pb2.RoomSettings(mode=2).SerializeToString()
    play_ai = lobby_pb2.PlayAi(level=match_pb2.AI_LEVEL_EASY)
    play_ai.settings.MergeFromString(raw)
    upcast = wire._lobby_v2(play_ai, "player-p_1")
    assert isinstance(upcast, lobby_pb2.PlayAi) and upcast.policy == "easy"
    settings = upcast.settings
    assert (settings.game, settings.seats, settings.mode) == ("maths-warriors", 2, 2)
    assert lobby.settings_in(settings) == old
    assert (
        lobby.checked_room_settings(settings).settings
        == lobby.checked_room_settings(
            lobby.room(2, game_seconds=300, move_seconds=0, preview=True)
        ).settings
    )


def test_the_module_is_two_seats_casual_or_ranked_and_exclusive() -> None:
    assert MODULE.name == "maths-warriors" and MODULE.seats.seats == 2
    assert MODULE.modes == {"casual", "ranked"} and MODULE.exclusive
    assert MODULE.seats.ai_levels == ("easy", "medium", "hard", "impossible")
    assert MODULE.ratings.ladder == "maths-warriors" and MODULE.ratings.elo
