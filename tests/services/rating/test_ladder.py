"""The ladder's decide and apply: who is rated, by how much, and never twice."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from arena_engine import rating as elo
from arena_rating import ladder
from arena_rating.service import ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import Command, Event, new_command
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import ladder_stream, rate_command_id
from arena_runtime.streams import Rejection, fold

from tests.services.rating.matches import sides

LADDER = ladder_stream("maths-warriors")
T0 = datetime(2026, 11, 30, tzinfo=UTC)


def request(
    match_id: str,
    winner: str = "p_a",
    loser: str = "p_b",
    *,
    mode: str = "ranked",
    reason: str = "all_captured",
    loser_ai: bool = False,
    game: str = "maths-warriors",
) -> pb.RateMatch:
    return pb.RateMatch(
        match_id=match_id,
        game=game,
        mode=mode,
        winner=pb.LadderPlayer(player_id=winner, display_name=winner.upper(), seat=1),
        loser=pb.LadderPlayer(player_id=loser, display_name=loser.upper(), seat=2, ai=loser_ai),
        reason=reason,
        ended_at_ms=1_700_000_000_000,
    )


def command(rate: pb.RateMatch) -> Command:
    return new_command(LADDER, rate, command_id=rate_command_id(rate.match_id))


def event(payload: object, sequence: int) -> Event:
    return Event(f"e{sequence}", LADDER, sequence, type(payload).DESCRIPTOR.full_name, payload, T0)


def play(state: ladder.Ladder, *requests: pb.RateMatch) -> list[object]:
    """Decide and apply each request in turn; the events (or rejections) in order."""
    out: list[object] = []
    for number, rate in enumerate(requests, start=1):
        decided = ladder.decide(state, command(rate))
        if isinstance(decided, Rejection):
            out.append(decided)
            continue
        for payload in decided:
            ladder.apply(state, event(payload, number))
            out.append(payload)
    return out


def test_a_ranked_win_moves_both_ratings_by_the_engines_elo() -> None:
    state = ladder.initial(LADDER)
    (rated,) = play(state, request("m1"))
    assert isinstance(rated, pb.MatchRated)
    rated = sides(rated)
    assert (rated.winner_before, rated.loser_before, rated.delta) == (1000, 1000, 12)
    assert (rated.winner_after, rated.loser_after) == (1012, 988)
    assert state.ratings == {"p_a": 1012, "p_b": 988}
    (second,) = play(state, request("m2", "p_b", "p_a"))
    second = sides(second)
    expected = elo.elo_maths_warriors(988, 1012)
    assert (second.delta, second.winner_after, second.loser_after) == (
        expected.delta,
        expected.winner_after,
        expected.loser_after,
    )


@pytest.mark.parametrize("reason", ["timeout", "forfeit", "all_captured"])
def test_forfeits_and_timeouts_are_rated_like_any_win(reason: str) -> None:
    (rated,) = play(ladder.initial(LADDER), request("m1", reason=reason))
    assert isinstance(rated, pb.MatchRated)
    assert (sides(rated).delta, rated.reason) == (12, reason)


def test_the_loser_never_drops_below_the_floor() -> None:
    state = ladder.initial(LADDER)
    state.ratings.update({"p_a": 300, "p_b": 105})
    (rated,) = play(state, request("m1", "p_a", "p_b"))
    rated = sides(rated)
    assert rated.loser_after == elo.MW_FLOOR
    assert rated.winner_after == 300 + rated.delta
    assert state.rating("p_b") == 100


def test_casual_games_and_ranked_games_against_the_ai_are_recorded_unrated() -> None:
    state = ladder.initial(LADDER)
    casual, against_ai = play(
        state, request("m1", mode="casual"), request("m2", "p_a", "ai-hard", loser_ai=True)
    )
    assert isinstance(casual, pb.MatchRecorded) and casual.unrated_reason == "casual"
    assert isinstance(against_ai, pb.MatchRecorded) and against_ai.unrated_reason == "ai_seat"
    assert state.ratings == {}
    assert state.recorded.keys() == {"m1", "m2"}


def test_a_match_is_never_recorded_twice() -> None:
    state = ladder.initial(LADDER)
    first, again = play(state, request("m1"), request("m1", "p_b", "p_a"))
    assert isinstance(first, pb.MatchRated)
    assert again == Rejection(ladder.ALREADY_RECORDED, "match m1 is already on the ladder")
    assert state.ratings == {"p_a": 1012, "p_b": 988}


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (request("m1", "p_a", "p_a"), ladder.SAME_PLAYER),
        (request(""), ladder.INVALID_MATCH),
        (request("m1", mode="tournament"), ladder.INVALID_MODE),
        (request("m1", reason="draw"), ladder.INVALID_REASON),
        (request("m1", game="digits"), ladder.WRONG_LADDER),
        (request("m1", ""), ladder.INVALID_PLAYERS),
        (
            pb.RateMatch(match_id="m1", game="maths-warriors", mode="ranked", reason="timeout"),
            ladder.INVALID_PLAYERS,
        ),
    ],
)
def test_bad_requests_are_refused_with_a_code_and_change_nothing(
    bad: pb.RateMatch, code: str
) -> None:
    state = ladder.initial(LADDER)
    (refused,) = play(state, bad)
    assert isinstance(refused, Rejection) and refused.code == code
    assert state.ratings == {} and state.recorded == {}


async def test_the_runner_rates_a_command_once_and_the_fold_of_the_log_is_the_live_ladder(
    tmp_path: Path,
) -> None:
    async with open_event_log(Settings(data_dir=tmp_path)) as log:
        await topics.ensure_topics(log, partitions=2)
        runner = ladder_runner(log)
        first = await runner.handle(command(request("m1")))
        again = await runner.handle(command(request("m1")))
        assert first.accepted and not first.repeated
        assert again.repeated and again.events == first.events
        # The same match under another command id: refused by the ladder itself.
        other = new_command(LADDER, request("m1", "p_b", "p_a"), command_id="other")
        refused = await runner.handle(other)
        assert refused.rejection is not None
        assert refused.rejection.code == ladder.ALREADY_RECORDED
        await runner.handle(command(request("m2", "p_b", "p_a", reason="forfeit")))
        live = (await runner.load(LADDER)).state

        restarted = ladder_runner(log)  # a new process folds the same ladder from the log
        assert (await restarted.load(LADDER)).state == live
        partition = await restarted.partition_of(LADDER)
        records = await log.read(topics.RATING_EVENTS, partition, 0, 100)
        events = [runner.codec.decode_event(r.value) for r in records]
        folded, sequence = fold(ladder.initial(LADDER), ladder.apply, events)
        assert folded == live and sequence == 3
        assert live.ratings["p_a"] == 1012 - elo.elo_maths_warriors(988, 1012).delta
