"""Matrix Games' module beyond the contract: what each seat observes against the engine, the
fallback, the connect wait, the play deadline, the spectators' frames and the replay bytes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from arena_engine.matrix_games import Order, Sim, scripted_order, write_replay
from arena_engine.matrix_games.constants import ALIASES, OPENING_CELLS
from arena_engine.matrix_games.episode import play_beat
from arena_engine.matrix_games.observation import BeatShared, build_observation
from arena_engine.matrix_games.replay import orders_of_replay, read_replay, settings_of_replay
from arena_games.contract import Inputs, Result, SeatResult, ServiceSettings, SettingsError, Viewer
from arena_games.matrix_games import MODULE, lobby, wire
from arena_games.matrix_games.bot import MatrixGamesBot
from arena_games.matrix_games.ratings import statistics
from arena_games.matrix_games.replay import replay_bytes
from arena_games.matrix_games.rules import Phase
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb
from arena_runtime.streams import Rejection

from tests.games.matrix import RULES, SPECTATOR, START_MS, VIEWS, Match, seats
from tests.games.play import client_message

#: The keys Arena adds to the reference's player messages.
ARENA_KEYS = ("match_id", "deadline_ms", "server_time_ms")
#: No connect wait, no pacing: the tests drive time themselves.
QUICK = {"player_connect_timeout_seconds": 0, "min_beat_seconds": 0}


def _engine_part(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key not in ARENA_KEYS}


def _orders(event: pb.BeatPlayed) -> list[Order]:
    return [wire.engine_order(order) for order in event.orders]


def _send_reply(match: Match, seat: int, reply: dict[str, Any]) -> Any:
    message = client_message(MODULE, reply, f"m{len(match.events)}")
    return match.send(seat, MODULE.client.command(message, f"p_{seat}"))


# -- observations, scripted seats, the fallback -------------------------------------------------


def test_every_seat_observes_what_the_engine_builds_at_every_beat() -> None:
    """Three people (bots through the client messages), five scripted seats of every policy;
    one person misses two beats. At every boundary each seat's observation is the engine's
    for the same episode; scripted and fallback orders are the engine's policies' own."""
    humans = {1: "Ann", 4: "Bo", 6: "Cy"}
    scripted = {2: "always-first", 3: "always-second", 5: "tit-for-tat", 7: "fixed-pick"}
    bot_policy = {1: "counter", 4: "tit-for-tat", 6: "fixed-pick"}
    settings = pb.MatrixGamesSettings(variant="stag-hunt", seed=4242, **QUICK)
    match = Match.open(seats(humans, scripted), settings)
    match.join(*humans)
    bots = {seat: MatrixGamesBot(Viewer(seat), policy) for seat, policy in bot_policy.items()}
    policy = {**{s - 1: p for s, p in scripted.items()}, 7: "counter"}
    policy |= {seat - 1: p for seat, p in bot_policy.items()}
    assert match.state.sim is not None
    engine = Sim(match.state.settings, match.state.sim.policy_names)
    misses = {(6, 3), (6, 7)}
    for beat in range(12):
        shared = BeatShared(engine)
        expected = [build_observation(engine, slot, shared) for slot in range(8)]
        for slot in range(8):
            shown = VIEWS.snapshot(match.table(), match.state, Viewer(slot + 1), match.now)
            assert _engine_part(shown[-1]) == expected[slot], (beat, slot)
        for seat, bot in bots.items():
            pushed = match.shown(Viewer(seat), "state")[-1]
            assert _engine_part(pushed) == expected[seat - 1]
            assert pushed["deadline_ms"] == match.state.deadline_ms
            bot.joined = True
            bot.observe(pushed)
            reply = bot.reply(0)
            if (seat, beat) not in misses:
                assert reply is not None and not isinstance(
                    _send_reply(match, seat, reply), Rejection
                )
        if len(match.of(pb.BeatPlayed)) == beat:  # someone missed it: played at its deadline
            match.fire()
        played = _orders(match.of(pb.BeatPlayed)[beat])
        for slot, order in enumerate(played):
            missed = (slot + 1, beat) in misses
            chosen = scripted_order(expected[slot], "counter" if missed else policy[slot])
            assert (order.intent, order.token, order.target) == (
                chosen.intent,
                chosen.token,
                chosen.target,
            ), (beat, slot)
            source = "fallback" if missed else "player" if slot + 1 in humans else "scripted"
            assert order.source == source
        play_beat(engine, played)
        assert match.state.sim is not None
        assert match.state.sim.state_hash() == engine.state_hash()
        match.now += 1000
    engine.settle_complete()
    assert match.state.phase is Phase.OVER
    for seat in humans:
        settled = match.shown(Viewer(seat), "state")[-1]
        assert _engine_part(settled) == build_observation(engine, seat - 1)
        assert settled["deadline_ms"] is None
        final = match.shown(Viewer(seat), "final")[-1]
        assert final["reason"] == "complete" and "names" not in final["result"]
    # Nobody's views hold what is hidden from them (the contract's check, over mixed seats).
    for viewer in match.viewers:
        text = json.dumps(match.views[viewer])
        for state in match.states:
            for secret in VIEWS.hidden(state, viewer):
                assert secret not in text, (viewer, secret)
    assert '"always-first"' in VIEWS.hidden(match.state, Viewer(1))


def test_a_seat_that_misses_the_deadline_plays_the_fallback_on_its_own_observation() -> None:
    settings = pb.MatrixGamesSettings(
        variant="chicken", decision_timeout_seconds=10, min_beat_seconds=0
    )
    match = Match.open(seats({1: "Ann", 2: "Bo"}), settings)
    match.join(1, 2)
    opened = match.state.opened_ms
    match.now += 1_000
    assert [type(e) for e in match.order(1, "gather", token="DOVE")] == [pb.OrderGiven]
    (timer,) = RULES.timers(match.state)
    assert timer.due_ms == opened + 10_000 and timer.command_id == f"timer:beat-0:{opened + 10_000}"
    before = match.state
    match.now = opened + 10_000
    refused = match.order(2, "hold")
    assert isinstance(refused, Rejection) and refused.code == "deadline_passed"
    assert match.state == before
    match.fire()
    (played,) = match.of(pb.BeatPlayed)
    assert before.sim is not None
    fallback = scripted_order(build_observation(before.sim, 1), "counter")
    ash, birch = _orders(played)[:2]
    assert (ash.intent, ash.token, ash.source, ash.latency_ms) == ("gather", 0, "player", 1_000)
    assert (birch.intent, birch.token, birch.target) == (
        fallback.intent,
        fallback.token,
        fallback.target,
    )
    assert birch.source == "fallback" and birch.say == ""
    late = match.order(2, "hold", beat=0)
    assert isinstance(late, Rejection) and late.code == "past_beat"


def test_an_away_seat_is_not_waited_for_and_a_returning_one_is() -> None:
    match = Match.open(seats({1: "Ann", 2: "Bo"}), pb.MatrixGamesSettings(**QUICK))
    match.join(1, 2)
    match.away(2)
    decided = match.order(1, "hold")
    assert [type(e) for e in decided] == [pb.OrderGiven, pb.BeatPlayed]
    assert _orders(match.of(pb.BeatPlayed)[0])[1].source == "fallback"
    match.back(2)
    assert [type(e) for e in match.order(1, "hold")] == [pb.OrderGiven]
    assert [type(e) for e in match.order(2, "hunt", target="ash")] == [
        pb.OrderGiven,
        pb.BeatPlayed,
    ]
    assert _orders(match.of(pb.BeatPlayed)[1])[1].target == 0


def test_pacing_holds_a_beat_until_its_minimum_and_off_plays_it_at_the_last_order() -> None:
    paced = Match.open(
        seats({1: "Ann"}),
        pb.MatrixGamesSettings(min_beat_seconds=5, player_connect_timeout_seconds=0),
    )
    opened = paced.state.opened_ms
    paced.now += 1_000
    assert [type(e) for e in paced.order(1, "hold")] == [pb.OrderGiven]
    (timer,) = RULES.timers(paced.state)
    assert timer.due_ms == opened + 5_000  # not the decision deadline: everyone has ordered
    paced.fire()
    assert len(paced.of(pb.BeatPlayed)) == 1 and paced.state.opened_ms == opened + 5_000
    unpaced = Match.open(seats({1: "Ann"}), pb.MatrixGamesSettings(**QUICK))
    assert [type(e) for e in unpaced.order(1, "hold")] == [pb.OrderGiven, pb.BeatPlayed]


# -- the connect wait, the play deadline ------------------------------------------------------


def test_nobody_joining_within_the_connect_wait_is_a_forfeit() -> None:
    match = Match.open(seats({1: "Ann", 2: "Bo"}))
    assert match.state.phase is Phase.CONNECTING
    refused = match.order(1, "hold")
    assert isinstance(refused, Rejection) and refused.code == "beat_not_open"
    (timer,) = RULES.timers(match.state)
    assert timer.due_ms == START_MS + 180_000 and timer.command_id.startswith("timer:connect:")
    early = RULES.decide(match.state, 0, timer.payload, Inputs(START_MS + 1))
    assert isinstance(early, Rejection) and early.code == "timer_not_due"
    (ended,) = match.fire()
    assert isinstance(ended, pb.EpisodeEnded)
    assert (ended.reason, ended.ending, ended.beats, ended.ticks) == ("forfeit", "no_seats", 0, 0)
    assert RULES.result(match.state) == Result(
        "forfeit", tuple(SeatResult(seat, 1, 0) for seat in range(1, 9))
    )
    assert match.shown(Viewer(1), "final")[-1]["reason"] == "forfeit"
    assert statistics(match.info, ended) == []


def test_a_seat_that_joined_but_went_away_does_not_count_as_connected() -> None:
    match = Match.open(seats({1: "Ann", 2: "Bo"}))
    match.join(1)
    match.away(1)
    (ended,) = match.fire()
    assert isinstance(ended, pb.EpisodeEnded) and ended.reason == "forfeit"


def test_the_connect_wait_ends_with_whoever_joined_or_when_everyone_has() -> None:
    partial = Match.open(seats({1: "Ann", 2: "Bo"}))
    partial.join(1)
    (ended,) = partial.fire()
    assert isinstance(ended, pb.ConnectWaitEnded) and list(ended.joined) == [1]
    assert partial.state.phase is Phase.PLAYING
    assert partial.shown(Viewer(1), "state") and partial.shown(Viewer(2), "state")
    everyone = Match.open(seats({1: "Ann", 2: "Bo"}))
    everyone.join(1)
    assert everyone.state.phase is Phase.CONNECTING and not everyone.shown(Viewer(1), "state")
    everyone.now += 2_000
    everyone.join(2)
    assert everyone.of(pb.SeatJoined)[-1].opens_first_beat
    assert everyone.state.phase is Phase.PLAYING and everyone.state.opened_ms == START_MS + 2_000
    assert [t.command_id.split(":")[1] for t in RULES.timers(everyone.state)] == ["beat-0"]
    assert everyone.shown(Viewer(1), "state")[-1]["beat"] == 0


def test_the_play_deadline_ends_the_episode_between_beats() -> None:
    """60 % of a 60 s episode is 36 s; beats nobody orders for are played every 10 s."""
    settings = pb.MatrixGamesSettings(
        episode_timeout_seconds=60, decision_timeout_seconds=10, **QUICK
    )
    match = Match.open(seats({1: "Ann"}), settings)
    while match.state.phase is not Phase.OVER:
        match.fire()
    played = match.of(pb.BeatPlayed)
    assert [event.last for event in played] == [False, False, False, True]
    (ended,) = match.of(pb.EpisodeEnded)
    assert (ended.reason, ended.ending, ended.beats, ended.ticks) == (
        "deadline",
        "play_deadline",
        4,
        200,
    )
    assert [e for e, _ in match.events][-2:] == [played[-1], ended]
    states = match.shown(Viewer(1), "state")
    assert [s["beat"] for s in states] == [0, 1, 2, 3, 4] and states[-1]["deadline_ms"] is None
    assert match.shown(Viewer(1), "final")[-1]["reason"] == "deadline"


# -- orders refused ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seat", "order", "code"),
    [
        (1, {"intent": "dance"}, "unknown_intent"),
        (1, {"intent": "gather", "token": "diamonds"}, "unknown_token"),
        (1, {"intent": "gather", "token": "7"}, "token_out_of_range"),
        (1, {"intent": "gather"}, "token_out_of_range"),
        (1, {"intent": "hunt", "target": "Ash"}, "invalid_target"),
        (1, {"intent": "hunt", "target": "Zed"}, "unknown_target"),
        (1, {"intent": "hold", "token": "rock"}, "unexpected_argument"),
        (1, {"intent": "avoid", "target": "2", "token": "0"}, "unexpected_token"),
        (1, {"intent": "hold", "source": "fallback"}, "bad_source"),
        (1, {"intent": "hold", "beat": 1}, "beat_not_open"),
        (3, {"intent": "hold"}, "not_a_player_seat"),
    ],
)
def test_a_refused_order_has_a_typed_code_and_changes_nothing(
    seat: int, order: dict[str, Any], code: str
) -> None:
    match = Match.open(seats({1: "Ann", 2: "Bo"}), pb.MatrixGamesSettings(**QUICK))
    before = copy.deepcopy(match.state)
    refused = match.order(seat, **order)
    assert isinstance(refused, Rejection) and refused.code == code, refused
    assert match.state == before


def test_joining_twice_and_playing_after_the_end_are_refused() -> None:
    match = Match.open(seats({1: "Ann"}), pb.MatrixGamesSettings(beats=1, **QUICK))
    match.join(1)
    again = match.send(1, pb.JoinEpisode())
    assert isinstance(again, Rejection) and again.code == "already_joined"
    assert [type(e) for e in match.order(1, "hold")] == [
        pb.OrderGiven,
        pb.BeatPlayed,
        pb.EpisodeEnded,
    ]
    over = match.order(1, "hold", beat=1)
    assert isinstance(over, Rejection) and over.code == "episode_over"
    resigned = RULES.forfeit(match.state, 1, Inputs(match.now))
    assert isinstance(resigned, Rejection) and resigned.code == "no_forfeit"


# -- values, restarts -------------------------------------------------------------------------


def test_apply_never_changes_the_state_it_is_given() -> None:
    match = Match.open(seats({1: "Ann"}), pb.MatrixGamesSettings(**QUICK))
    match.order(1, "gather", token="rock")
    first = match.states[-3]  # before the order and the beat
    assert first.sim is not None
    hash_before, events_before = first.sim.state_hash(), len(first.sim.events)
    match.order(1, "gather", token="paper")
    assert (first.sim.state_hash(), len(first.sim.events)) == (hash_before, events_before)
    assert match.states[-1].sim is not first.sim


def test_a_restart_folds_the_log_back_to_the_same_state_and_timers() -> None:
    match = Match.open(seats({1: "Ann", 2: "Bo"}, {5: "tit-for-tat"}))
    match.join(1, 2)
    match.order(1, "gather", token="paper", say="hello", notes="mine")
    match.fire()
    match.order(2, "hunt", target="Elm")
    again = RULES.initial(match.info, match.settings, ServiceSettings())
    for event, time_ms in match.events:
        again = RULES.apply(again, event, time_ms)
    assert again == match.state
    assert RULES.timers(again) == RULES.timers(match.state)
    assert again.sim is not None and match.state.sim is not None
    assert again.sim.state_hash() == match.state.sim.state_hash()


# -- the seed, settings -----------------------------------------------------------------------


def test_the_seed_is_drawn_when_none_is_given_and_kept_when_one_is() -> None:
    drawn = Match.open(seats({1: "Ann"}), seed=2**40 + 12345)
    (started,) = drawn.of(pb.EpisodeStarted)
    assert started.settings.seed == (2**40 + 12345) & 0x7FFFFFFF
    assert not RULES.settings(None).HasField("seed")  # type: ignore[union-attr]
    given = Match.open(seats({1: "Ann"}), pb.MatrixGamesSettings(seed=-7), seed=5)
    assert given.of(pb.EpisodeStarted)[0].settings.seed == -7
    assert given.state.settings.seed == -7


def test_settings_are_checked_and_recorded_with_every_default() -> None:
    played = lobby.check(pb.MatrixGamesSettings(variant=" Chicken ", beats=3))
    assert played.variant == "chicken" and played.beats == 3 and played.ticks_per_beat == 50
    assert played.decision_timeout_seconds == 20 and played.min_beat_seconds == 17
    assert not played.HasField("seed")
    form = lobby.SettingsForm(seed=12, view_radius=3)
    assert lobby.to_form(lobby.from_form(form))["seed"] == 12
    with pytest.raises(SettingsError) as refused:
        lobby.from_form(lobby.SettingsForm(decision_timeout_seconds=121))
    assert refused.value.code == "setting_out_of_range"
    assert set(wire.SETTING_FIELDS) == {f.name for f in pb.MatrixGamesSettings.DESCRIPTOR.fields}
    refused_settings = RULES.settings(pb.MatrixGamesSettings(beats=0))
    assert isinstance(refused_settings, Rejection)
    assert refused_settings.code == "setting_out_of_range"


# -- spectators -------------------------------------------------------------------------------

GLOBAL_KEYS = [
    *("t", "mt", "ph", "pl", "sp", "mx", "st", "lp", "sk", "ff", "en", "mm", "bs"),
    *("teams", "roster", "events", "over", "hold", "seats", "beat", "beats_played"),
    *("variant", "indices", "beats", "lulls", "lead"),
    *("type", "game", "protocol", "done", "reason", "ending", "match_id"),
]


def test_spectators_get_a_frame_at_the_start_around_every_beat_and_at_the_end() -> None:
    settings = pb.MatrixGamesSettings(variant="prisoners-dilemma", beats=3, seed=10, **QUICK)
    match = Match.open(seats({2: "Bo"}, {1: "always-first", 5: "tit-for-tat"}), settings)
    for beat in range(3):
        match.order(2, "gather", token="defect", say=f"beat {beat}", notes="secret plan")
    frames = match.views[SPECTATOR]
    assert len(frames) == 1 + 2 * 3 + 1
    assert all(list(frame) == GLOBAL_KEYS for frame in frames)
    assert all(f["protocol"] == "matrix.global.v1" and f["type"] == "state" for f in frames)
    replay = json.loads(replay_bytes(e for e, _ in match.events))
    for beat in range(3):
        installed, after = frames[1 + 2 * beat], frames[2 + 2 * beat]
        assert installed["t"] == 50 * beat and after["t"] == 50 * (beat + 1)
        orders = [e for e in installed["events"] if e["k"] == "order"]
        recorded = [e for e in replay["events"] if e["k"] == "order" and e["beat"] == beat]
        assert [o["seat"] for o in orders] == list(range(8))
        assert all(o["intent"] == "private" and o["token"] == o["target"] == -1 for o in orders)
        assert all("notes" not in o for o in orders)
        assert [(o["source"], o["say"]) for o in orders] == [
            (r["source"], r["say"]) for r in recorded
        ]
        assert [s["say"] for s in installed["seats"]] == [r["say"] for r in recorded]
        # Positions, inventories, scores and tokens are the replay's frame of the same tick.
        frame = replay["frames"][after["t"] - 1]
        assert [
            v for s in after["seats"] for v in (s["x"], s["y"], s["facing"], int(s["frozen"]))
        ] == [*(v if i % 4 != 3 else int(v > 0) for i, v in enumerate(frame["c"]))]
        assert [v for s in after["seats"] for v in s["inv"]] == frame["inv"]
        assert [s["scoreCp"] for s in after["seats"]] == frame["sc"]
        assert sum(t["tokensLeft"] for t in after["teams"].values()) == sum(frame["tok"])
        if beat == 0:
            assert [(s["x"], s["y"]) for s in installed["seats"]] == list(OPENING_CELLS)
    end = frames[-1]
    assert end["done"] and end["ph"] == "gameover" and end["reason"] == "complete"
    assert [e["k"] for e in end["events"]] == ["beatclose", "end"]
    assert [s["name"] for s in end["seats"]][:2] == ["always-first", "Bo"]
    assert [s["kind"] for s in end["seats"]][:2] == ["scripted", "human"]
    snapshot = VIEWS.snapshot(match.table(), match.state, SPECTATOR, match.now)
    assert snapshot == [end]


# -- the replay -------------------------------------------------------------------------------


def test_the_replay_of_an_episode_is_the_engines_byte_for_byte() -> None:
    """Eight people order what the engine's policies choose on the engine's own observation;
    the replay regenerated from the match's events is what the engine writes for them."""
    policies = ["counter", "tit-for-tat", "fixed-pick", "always-first", "always-second"] * 2
    settings = pb.MatrixGamesSettings(variant="running-with-scissors", seed=77, beats=5, **QUICK)
    names = {seat: f"Spieler {seat} – ü" for seat in range(1, 9)}
    match = Match.open(seats(names), settings)
    engine = Sim(match.state.settings, [names[seat] for seat in range(1, 9)])
    for beat in range(5):
        match.now = match.state.opened_ms + 1_500
        chosen = []
        for slot in range(8):
            picked = scripted_order(build_observation(engine, slot), policies[slot])
            order = Order(
                picked.intent,
                picked.token,
                picked.target,
                "player",
                f"{ALIASES[slot]} sagt: ätsch {beat}",
                "\n notes  \n",
                1_500,
            )
            chosen.append(order.cleaned())
            tokens = engine.variant.tokens
            match.order(
                slot + 1,
                order.intent,
                token=tokens[order.token] if order.token >= 0 else "",
                target=ALIASES[order.target] if order.target >= 0 else "",
                say=order.say,
                notes=order.notes,
            )
        play_beat(engine, chosen)
    engine.settle_complete()
    assert match.state.phase is Phase.OVER
    assert replay_bytes(e for e, _ in match.events) == write_replay(engine)
    assert replay_bytes((e for e, _ in match.events), include_notes=False) == write_replay(
        engine, include_notes=False
    )
    # As the log keeps it: the final event inside MatchEnded, which the rules fold the same.
    *before, (final, at) = match.events
    result = RULES.result(match.state)
    assert result is not None
    ended = result.to_proto("m-1", "matrix-games", final)
    assert replay_bytes([*(e for e, _ in before), ended]) == write_replay(engine)
    assert RULES.apply(match.states[-2], ended, at) == match.state


def test_the_reference_golden_replay_fed_as_orders_comes_back_byte_for_byte(
    shared_dir: Path,
) -> None:
    golden = (shared_dir / "vectors" / "matrix-games" / "worst_case_text.replay").read_bytes()
    doc = read_replay(golden)
    reference = settings_of_replay(doc)
    settings = pb.MatrixGamesSettings(
        variant=reference.matrix, seed=reference.seed, beats=reference.beats, **QUICK
    )
    names = {seat: doc["policyNames"][seat - 1] for seat in range(1, 9)}
    match = Match.open(seats(names), settings)
    for beat, orders in enumerate(orders_of_replay(doc)):
        match.now = match.state.opened_ms + 1_234
        for slot, order in enumerate(orders):
            reply = {
                "type": "matrix_order",
                "beat": beat,
                "intent": order.intent,
                "token": order.token if order.token >= 0 else None,
                "target": order.target if order.target >= 0 else None,
                "say": order.say,
                "notes": order.notes,
                "source": order.source,
            }
            assert not isinstance(_send_reply(match, slot + 1, reply), Rejection)
    assert match.state.phase is Phase.OVER
    written = replay_bytes(e for e, _ in match.events)
    assert len(written) == 141_486
    assert written == golden


def test_a_replay_needs_a_started_episode() -> None:
    with pytest.raises(Exception) as refused:
        replay_bytes([])
    assert getattr(refused.value, "code", "") == "not_started"


# -- results and statistics -------------------------------------------------------------------


def test_seats_rank_by_score_in_centipoints_and_equal_scores_share_a_rank() -> None:
    ended = pb.EpisodeEnded(reason="complete")
    for seat, score in enumerate([300, -20, 300, 0, 0, 0, 150, -20], start=1):
        ended.seats.add(seat=seat, score_cp=score)
    ranks = [(s.rank, s.score) for s in wire.result_of(ended).seats]
    assert ranks == [(1, 300), (7, -20), (1, 300), (4, 0), (4, 0), (4, 0), (3, 150), (7, -20)]


def test_an_episode_adds_statistics_rows_for_players_who_ordered_and_for_policies() -> None:
    settings = pb.MatrixGamesSettings(variant="prisoners-dilemma", beats=2, seed=3, **QUICK)
    match = Match.open(seats({1: "Ann", 2: "Bo"}, {3: "tit-for-tat"}), settings)
    match.join(1, 2)
    match.away(2)  # Bo never orders: the fallback plays his seat
    for _ in range(2):
        match.order(1, "gather", token="cooperate")
    (ended,) = match.of(pb.EpisodeEnded)
    rows = statistics(match.info, ended)
    assert [(r.kind, r.key) for r in rows] == [("player", "p_1"), ("policy", "tit-for-tat")] + [
        ("policy", "counter")
    ] * 5
    assert all(r.variant == "prisoners-dilemma" and r.episodes == 1 for r in rows)
    by_seat = {s.seat: s for s in ended.seats}
    assert by_seat[1].orders_given == 2 and by_seat[2].orders_given == 0
    assert match.state.sim is not None
    carried = sum(sum(i.row_inv) + sum(i.col_inv) for i in match.state.sim.interacts)
    assert sum(s.mass for s in ended.seats) == carried
    assert ended.HasField("coop_rate") == (ended.interactions > 0)
    assert MODULE.ratings.ladder == "matrix-games" and not MODULE.ratings.elo
    assert MODULE.ratings.unrated(match.info) == ""


def test_the_module_is_eight_seats_one_to_eight_people_the_rest_scripted() -> None:
    plan = MODULE.seats
    assert (plan.seats, plan.min_humans, plan.max_humans) == (8, 1, 8)
    assert plan.default_fill == "counter"
    assert set(plan.scripted_policies) == {
        "counter",
        "tit-for-tat",
        "fixed-pick",
        "always-first",
        "always-second",
    }
    assert plan.problem(seats({1: "Ann"}, {2: "tit-for-tat"})) == ""
    assert "policy" in plan.problem(seats({1: "Ann"}, {2: "random"}))
    assert "people" in plan.problem(seats({}))
