"""Results of any game: the rating service reads MatchOpened and MatchEnded whatever the game
and however the log was written, and the game's module says whether and how they are rated.

A Matrix Games episode (eight seats, statistics only) goes from its log through the result
reader, the ladder and the projections to the read API: its seats in the match index, its
statistics board (players and scripted policies, mean score, cooperation index) and its replay.
A Maze draw is rated by the Maze's Elo with draws. A Maths Warriors match written as the seam
writes it (MatchOpened, MatchEnded) is rated exactly as its legacy twin (MatchCreated,
GameEnded), so the readers are right before and after the match service moves onto the seam.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_engine import rating as elo
from arena_games.contract import pack
from arena_games.maths_warriors import wire as mw_wire
from arena_games.matrix_games import wire as mx_wire
from arena_games.matrix_games.replay import replay_bytes
from arena_games.maze import lobby as maze_lobby
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mx
from arena_games.registry import READING
from arena_rating import ladder, projections
from arena_rating.projections import rating_projections
from arena_rating.results import ResultReader
from arena_rating.service import ladder_runner
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import CODEC, Event, new_id
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import envelope_pb2, match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import ladder_stream
from arena_runtime.sql import ProjectionRunner, create_engine, session_factory, upgrade_head
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from tests.games.matrix import Match, seats
from tests.services.rating import matches
from tests.services.rating.test_read_api import read_client

QUICK = {"player_connect_timeout_seconds": 0, "min_beat_seconds": 0}


def stream_of(match_id: str, payloads: Sequence[Message]) -> list[Event]:
    return [
        Event(
            event_id=new_id(),
            stream=f"match-{match_id}",
            sequence=number,
            type=READING.schemas.type_of(payload),
            payload=payload,
            time=matches.T0 + timedelta(seconds=number),
            batch_id=new_id(),
        )
        for number, payload in enumerate(payloads, start=1)
    ]


@contextlib.asynccontextmanager
async def read_api(
    tmp_path: Path, log: EventLog, settings: Settings
) -> AsyncIterator[httpx.AsyncClient]:
    """The read API over fresh read models caught up with ``log``, as a signed-in client."""
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'read.sqlite3'}")
    await upgrade_head(engine)
    sessions = session_factory(engine)
    for projection in rating_projections(settings):
        await ProjectionRunner(projection, log, sessions).catch_up()
    async with read_client(sessions) as http:
        yield http
    await engine.dispose()


def matrix_episode() -> tuple[Match, list[Message]]:
    """Ann orders every beat, Bo is away all along (the fallback plays him), six scripts."""
    settings = mx.MatrixGamesSettings(variant="prisoners-dilemma", beats=3, seed=5, **QUICK)
    match = Match.open(seats({1: "Ann", 2: "Bo"}, {3: "tit-for-tat"}), settings)
    match.join(1, 2)
    match.away(2)
    for _ in range(3):
        match.order(1, "gather", token="cooperate")
    (ended,) = match.of(mx.EpisodeEnded)
    opened = match_pb2.MatchOpened(
        match_id="x1",
        game="matrix-games",
        seats=[s.to_proto() for s in match.info.seats],
        mode=match_pb2.MATCH_MODE_CASUAL,
        settings=pack(match.settings),
    )
    game_events = [
        e
        for e, _ in match.events
        if not isinstance(e, mx.EpisodeEnded | match_pb2.PlayerDisconnected)
    ]
    final = mx_wire.result_of(ended).to_proto("x1", "matrix-games", ended)
    return match, [opened, *game_events, final]


async def rate_everything(log: EventLog, events: list[Event]) -> list[Any]:
    """The result reader over these events (decoded as its worker decodes them), then the
    ladder over every command it sent; the ladder's events."""
    reader = ResultReader(log)
    for partition, end in (await log.end_offsets(topics.MATCH_EVENTS)).items():
        for record in await log.read(topics.MATCH_EVENTS, partition, 0, max(end, 1)):
            await reader.handle(READING.decode_event(record.value), record)
    runner = ladder_runner(log)
    out = []
    for partition, end in (await log.end_offsets(topics.RATING_COMMANDS)).items():
        for record in await log.read(topics.RATING_COMMANDS, partition, 0, max(end, 1)):
            answer = await runner.handle(CODEC.decode_command(record.value))
            assert answer.rejection is None, answer.rejection
            out.extend(answer.events)
    return out


async def test_a_matrix_episode_has_eight_seats_a_statistics_board_and_its_replay(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path)
    match, payloads = matrix_episode()
    (ended,) = match.of(mx.EpisodeEnded)
    events = stream_of("x1", payloads)
    async with open_event_log(settings) as log:
        await topics.ensure_topics(log, 2)
        await log.append(topics.MATCH_EVENTS, [READING.event_record(e) for e in events])
        (recorded,) = await rate_everything(log, events)
        assert isinstance(recorded.payload, pb.MatchRecorded)
        assert recorded.payload.unrated_reason == "casual" and len(recorded.payload.seats) == 8
        assert recorded.stream == ladder_stream("matrix-games")

        async with read_api(tmp_path, log, settings) as http:
            log_page = (await http.get("/v1/matches/x1/events")).json()
            ranks = {s.seat: s.rank for s in payloads[-1].seats}
            assert [(s["seat"], s["kind"], s["rank"]) for s in log_page["seats"]] == [
                (n, "human" if n <= 2 else "scripted", ranks[n]) for n in range(1, 9)
            ]
            assert log_page["status"] == "over"

            board = (await http.get("/v1/statistics/matrix-games/prisoners-dilemma")).json()
            by_key = {(e["kind"], e["key"]): e for e in board["entries"]}
            # Bo gave no order: his seat says nothing about him. Five counter seats, summed.
            assert set(by_key) == {
                ("player", "p_1"),
                ("policy", "tit-for-tat"),
                ("policy", "counter"),
            }
            seat = {s.seat: s for s in ended.seats}
            ann = by_key[("player", "p_1")]
            assert (ann["name"], ann["episodes"]) == ("Ann", 1)
            assert ann["mean_score"] == seat[1].score_cp
            assert ann["indices"]["cooperation_index"] == (
                seat[1].coop_mass / seat[1].mass if seat[1].mass else None
            )
            counter = by_key[("policy", "counter")]
            assert counter["episodes"] == 5
            assert counter["mean_score"] == sum(seat[n].score_cp for n in range(4, 9)) / 5
            means = [e["mean_score"] for e in board["entries"]]
            assert means == sorted(means, reverse=True) and board["total"] == 3
            paged, cursor = [], None
            while True:
                params = {"limit": 1} | ({"cursor": cursor} if cursor else {})
                page = (
                    await http.get("/v1/statistics/matrix-games/prisoners-dilemma", params=params)
                ).json()
                paged += [(e["rank"], e["kind"], e["key"]) for e in page["entries"]]
                if (cursor := page["next_cursor"]) is None:
                    break
            assert paged == [(e["rank"], e["kind"], e["key"]) for e in board["entries"]]
            assert (await http.get("/v1/leaderboards/matrix-games")).status_code == 404

            replay = await http.get("/v1/matches/x1/replay")
            assert replay.status_code == 200
            assert replay.content == replay_bytes(payloads)


async def test_a_maze_match_has_its_events_and_says_it_keeps_no_replay(tmp_path: Path) -> None:
    """The Maze keeps no replay: its match is found (its events are served), and the replay is
    refused ``no_replay``, not ``match_not_found``, which would say there is no such match."""
    opened = match_pb2.MatchOpened(
        match_id="z1",
        game="maze",
        seats=[
            match_pb2.MatchSeat(player_id=f"p_{n}", kind=match_pb2.SEAT_KIND_HUMAN) for n in (1, 2)
        ],
        mode=match_pb2.MATCH_MODE_CASUAL,
        settings=pack(maze_lobby.defaults()),
    )
    settings = Settings(data_dir=tmp_path)
    async with open_event_log(settings) as log:
        await topics.ensure_topics(log, 2)
        events = stream_of("z1", [opened])
        await log.append(topics.MATCH_EVENTS, [READING.event_record(e) for e in events])
        async with read_api(tmp_path, log, settings) as http:
            assert (await http.get("/v1/matches/z1/events")).status_code == 200
            for partial in ("false", "true"):
                replay = await http.get(f"/v1/matches/z1/replay?partial={partial}")
                assert replay.status_code == 404
                assert replay.json()["detail"]["code"] == "no_replay"
            missing = await http.get("/v1/matches/nope/replay")
            assert missing.json()["detail"]["code"] == "match_not_found"


def rate_request(game: str, ranks: dict[int, int], reason: str, mode: str = "ranked") -> Any:
    return pb.RateMatch(
        match_id="m1",
        game=game,
        mode=mode,
        reason=reason,
        seats=[
            pb.LadderPlayer(player_id=f"p_{n}", seat=n, kind=match_pb2.SEAT_KIND_HUMAN, rank=rank)
            for n, rank in ranks.items()
        ],
    )


def test_a_maze_draw_moves_two_ratings_towards_each_other_by_the_mazes_elo() -> None:
    state = ladder.initial(ladder_stream("maze"))
    state.ratings.update({"p_1": 1100, "p_2": 900})
    decided = ladder.record(state, rate_request("maze", {1: 1, 2: 1}, "time_limit"))
    assert isinstance(decided, pb.MatchRated)
    expected = elo.elo_maze(1100, 900, 0.5)
    assert [(s.before, s.after) for s in decided.seats] == [
        (1100, expected.first_after),
        (900, expected.second_after),
    ]
    assert decided.seats[0].after < 1100 and decided.seats[1].after > 900


@pytest.mark.parametrize(
    ("game", "ranks", "reason", "code"),
    [
        ("maths-warriors", {1: 1, 2: 2, 3: 3}, "all_captured", ladder.INVALID_PLAYERS),
        ("maths-warriors", {1: 1, 2: 0}, "all_captured", ladder.INVALID_PLAYERS),
        ("maths-warriors", {1: 1, 2: 2}, "draw", ladder.INVALID_REASON),
        ("maze", {1: 1, 2: 2}, "all_captured", ladder.INVALID_REASON),
        ("chess", {1: 1, 2: 2}, "mate", ladder.WRONG_LADDER),
    ],
)
def test_a_result_its_game_would_not_give_is_refused_and_changes_nothing(
    game: str, ranks: dict[int, int], reason: str, code: str
) -> None:
    state = ladder.initial(ladder_stream(game))
    refused = ladder.record(state, rate_request(game, ranks, reason))
    assert isinstance(refused, Rejection) and refused.code == code
    assert state.ratings == {} and state.recorded == {}


def legacy_and_seam_streams(seed: int) -> tuple[list[Event], list[Event]]:
    """One Maths Warriors game logged twice: as today's match service writes it, and as it
    writes it on the seam (what the legacy upcasters make of the same records)."""
    seats_ = (matches.seat("p_a"), matches.seat("p_b"))
    game = matches.play(random.Random(seed))
    legacy = matches.match_events("old", seats_, match_pb2.MATCH_MODE_RANKED, game)
    payloads: list[Message] = []
    for event in legacy:
        payload = event.payload
        if isinstance(payload, mw_wire.pb.MatchCreated):
            created = type(payload)()
            created.CopyFrom(payload)
            created.match_id = "new"
            payload = mw_wire.opened_of_created(created, "match-new")
        elif isinstance(payload, mw_wire.pb.GameEnded):
            payload = mw_wire.ended_of_game_ended(payload, "match-new")
        payloads.append(payload)
    return legacy, stream_of("new", payloads)


async def test_a_match_written_on_the_seam_is_rated_as_its_legacy_twin(tmp_path: Path) -> None:
    legacy, seam = legacy_and_seam_streams(11)
    rated = {}
    # Each on a log of its own, so that each is the first game of its ladder.
    for name, events, codec in (("old", legacy, matches.LEGACY), ("new", seam, READING)):
        async with open_event_log(Settings(data_dir=tmp_path / name)) as log:
            await topics.ensure_topics(log, 2)
            await log.append(topics.MATCH_EVENTS, [codec.event_record(e) for e in events])
            (event,) = await rate_everything(log, events)
            rated[name] = event.payload
    old, new = rated["old"], rated["new"]
    assert isinstance(old, pb.MatchRated) and isinstance(new, pb.MatchRated)
    old.match_id = "new"
    old.ended_at_ms = new.ended_at_ms
    assert old == new
    (winner,) = [s for s in new.seats if s.player.rank == 1]
    assert winner.player.player_id == legacy[-1].payload.winner_player_id
    assert winner.after - winner.before == elo.elo_maths_warriors(1000, 1000).delta


def test_a_ladder_folded_from_version_one_records_is_the_same_ladder() -> None:
    """Rating events written before the seam (winner and loser) read as version 2."""
    v1 = pb.MatchRated(
        match_id="m1",
        game="maths-warriors",
        winner=pb.LadderPlayer(player_id="p_b", display_name="B", seat=2),
        loser=pb.LadderPlayer(player_id="p_a", display_name="A", seat=1),
        winner_before=1000,
        winner_after=1012,
        loser_before=1000,
        loser_after=988,
        delta=12,
        reason="timeout",
    )
    written = Event("e1", ladder_stream("maths-warriors"), 1, "arena.v1.MatchRated", v1, matches.T0)
    # Written as version 1 (the shape of records before the seam): the same bytes, version 1.
    envelope = envelope_pb2.Envelope.FromString(CODEC.encode_event(written))
    envelope.schema_version = 1
    envelope.payload = v1.SerializeToString()
    read = CODEC.decode_event(envelope.SerializeToString())
    assert read.schema_version == 1
    assert [(s.player.player_id, s.player.rank, s.before, s.after) for s in read.payload.seats] == [
        ("p_a", 2, 1000, 988),
        ("p_b", 1, 1000, 1012),
    ]
    assert not read.payload.HasField("winner") and read.payload.delta == 0
    state = ladder.apply(ladder.initial(ladder_stream("maths-warriors")), read)
    assert state.ratings == {"p_a": 988, "p_b": 1012} and state.recorded.keys() == {"m1"}


def test_a_ranked_digits_game_is_recorded_not_rated_as_a_whole() -> None:
    """Digits rates its ranked combats one by one, never the game: its MatchEnded is recorded
    (history and counts) with no rating change."""
    state = ladder.initial(ladder_stream("digits"))
    decided = ladder.record(state, rate_request("digits", {1: 1}, "lost"))
    assert isinstance(decided, pb.MatchRecorded) and decided.unrated_reason == "per_combat"
    assert projections.seat_results(decided.seats) == {1: "solo"}
