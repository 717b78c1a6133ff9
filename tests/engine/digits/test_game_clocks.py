"""The game's clocks: midnight, a duel's deadline, a room's rounds and shop clock, late joins,
expiry after 7 idle days, and games voided for answers faster than a person."""

from __future__ import annotations

import json

from arena_engine.digits import game as g
from arena_engine.digits import paris
from arena_engine.digits.codec import command_from_dict, event_from_dict, to_dict
from arena_engine.digits.settings import DEFAULT_SETTINGS
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.digits.test_game import STRONG, WEAK, Game

DAY = paris.DAY_MS
HOUR = paris.HOUR_MS
# 2024-03-30 22:30 in Paris (winter time): the night before the change to summer time.
EVENING = 1_711_834_200_000


def unchanged(game: Game, command: g.Command, opponent: object = None) -> None:
    """A stale or early timer: no events, and the very same state."""
    before = game.state
    assert game.do(command, opponent=opponent) == []
    assert game.state is before


def to_faceoff(game: Game, arrangement: int | None = None) -> None:
    game.focus(6)
    game.do(g.Buy(0))
    game.do(g.EndShop(), opponent=WEAK)
    if arrangement is not None:
        game.do(g.Arrange(arrangement))
    assert game.s.phase == g.FACEOFF


# -- the daily challenge at midnight ---------------------------------------------------------


def daily() -> Game:
    game = Game.__new__(Game)
    game.now, game.state, game.events = EVENING, None, []
    game.do(g.StartGame("daily", player_seed=7, shop_seed=11))
    return game


def test_daily_records_the_next_paris_midnight() -> None:
    game = daily()
    assert game.s.ends_ms == paris.next_midnight_ms(EVENING) == EVENING + 90 * 60_000
    started = game.events[0]
    assert isinstance(started, g.GameStarted) and started.ends_ms == game.s.ends_ms


def test_a_faceoff_open_at_midnight_is_fought_in_the_end_of_shop_order() -> None:
    game = daily()
    to_faceoff(game)
    assert game.s.ends_ms is not None
    game.now = game.s.ends_ms - 1
    unchanged(game, g.Stop("midnight"))  # early: not midnight yet
    game.now = game.s.ends_ms
    decided = game.do(g.Stop("midnight"))
    assert isinstance(decided, list)
    fought, ended = decided
    assert isinstance(fought, g.CombatFought) and fought.arrangement == 0
    assert ended == g.GameEnded("closed", "midnight")
    assert game.s.rounds_played == 1 and game.s.phase == g.OVER
    assert g.replay(game.events) == game.state


def test_an_order_accepted_before_midnight_is_the_one_fought() -> None:
    game = daily()
    to_faceoff(game, arrangement=23)
    assert game.s.ends_ms is not None
    game.now = game.s.ends_ms + 5
    decided = game.do(g.Stop("midnight"))
    assert isinstance(decided, list) and isinstance(decided[0], g.CombatFought)
    assert decided[0].arrangement == 23


def test_midnight_in_the_shop_stops_with_the_record_and_no_combat() -> None:
    game = daily()
    game.focus(3)
    assert game.s.ends_ms is not None
    game.now = game.s.ends_ms
    assert game.do(g.Stop("midnight")) == [g.GameEnded("closed", "midnight")]
    assert game.s.rounds_played == 0


def test_midnight_and_deadline_only_for_their_modes() -> None:
    game = Game()
    game.now += 10 * DAY
    assert game.do(g.Stop("midnight")) == g.Rejection("stop_not_for_mode")
    assert game.do(g.Stop("deadline")) == g.Rejection("stop_not_for_mode")


# -- the duel's deadline ----------------------------------------------------------------------


def test_a_duel_needs_a_deadline_and_fights_its_open_faceoff_there() -> None:
    assert g.decide(None, g.StartGame("duel", 1, 2), g.Context(0)) == g.Rejection("bad_deadline")
    assert g.decide(None, g.StartGame("duel", 1, 2, ends_ms=5), g.Context(5)) == g.Rejection(
        "bad_deadline"
    )
    assert g.decide(None, g.StartGame("ranked", 1, 2, ends_ms=9), g.Context(5)) == g.Rejection(
        "bad_deadline"
    )
    game = Game("duel", ends_ms=1_000_000 + DAY)
    to_faceoff(game, arrangement=5)
    game.now = 1_000_000 + DAY - 1
    unchanged(game, g.Stop("deadline"))
    game.now += 1
    decided = game.do(g.Stop("deadline"))
    assert isinstance(decided, list) and isinstance(decided[0], g.CombatFought)
    assert decided[0].arrangement == 5 and decided[-1] == g.GameEnded("closed", "deadline")


def test_a_fight_at_the_deadline_that_ends_the_game_keeps_its_status() -> None:
    game = Game("duel", ends_ms=1_000_000 + DAY)
    game.round(6, STRONG)
    game.round(6, STRONG)
    game.focus(6)
    game.do(g.EndShop(), opponent=STRONG)
    game.now = 1_000_000 + DAY
    decided = game.do(g.Stop("deadline"))
    assert isinstance(decided, list) and decided[-1] == g.GameEnded("lost", "deadline")


# -- rooms ------------------------------------------------------------------------------------


def test_a_room_defaults_to_8_rounds_and_waits_for_its_clock() -> None:
    started = g.decide(None, g.StartGame("room", 1, 2), g.Context(0))
    assert isinstance(started, list) and isinstance(started[0], g.GameStarted)
    assert started[0].room_rounds == 8
    assert g.decide(None, g.StartGame("room", 1, 2, room_rounds=7), g.Context(0)) == g.Rejection(
        "bad_room_rounds"
    )
    assert g.decide(None, g.StartGame("ranked", 1, 2, room_rounds=8), g.Context(0)) == g.Rejection(
        "bad_room_rounds"
    )
    state = g.replay(started)
    assert state.phase == g.WAITING and state.round_no == 0
    assert g.decide(state, g.StartFocus(), g.Context(0)) == g.Rejection("not_in_focus")


def test_the_shop_clock_runs_from_the_opening_focus_included() -> None:
    game = Game("room")  # opens round 1 now
    opened = game.now
    assert game.s.shop_deadline_ms == opened + DEFAULT_SETTINGS.room_shop_seconds * 1000
    game.focus(6)
    game.now = opened + 120_000
    assert game.do(g.Buy(0)) != g.Rejection("shop_over")  # at the deadline: still in time
    game.now += 1
    assert game.do(g.Buy(1)) == g.Rejection("shop_over")
    assert game.do(g.EndShop(), opponent=WEAK) == g.Rejection("shop_over")
    unchanged(game, g.ShopTimeout(2), opponent=WEAK)  # another round's timer
    assert game.do(g.ShopTimeout(1)) == g.Rejection("no_opponent")
    decided = game.do(g.ShopTimeout(1), opponent=WEAK)
    assert isinstance(decided, list) and isinstance(decided[-1], g.ShopEnded)
    assert game.s.phase == g.FACEOFF
    unchanged(game, g.ShopTimeout(1), opponent=WEAK)  # a stale copy


def test_a_focus_not_started_in_time_scores_zero() -> None:
    game = Game("room")
    opened = game.now
    game.now = opened + 120_000 - 1
    unchanged(game, g.ShopTimeout(1), opponent=WEAK)  # early
    game.now += 1
    decided = game.do(g.ShopTimeout(1), opponent=WEAK)
    assert isinstance(decided, list)
    answered = [e for e in decided if isinstance(e, g.FocusAnswered)]
    assert len(answered) == 6 and not any(e.right for e in answered)
    opened_shop = next(e for e in decided if isinstance(e, g.ShopOpened))
    assert opened_shop.right == 0 and opened_shop.gold == 3
    assert game.s.phase == g.FACEOFF and game.s.carried == 3


def test_a_focus_cut_by_the_shop_clock_keeps_its_right_answers() -> None:
    game = Game("room")
    opened = game.now
    game.do(g.StartFocus())
    for _ in range(2):
        assert game.s.question is not None
        game.now += 1000
        game.do(g.AnswerFocus(game.s.question.answer))
    game.now = opened + 120_000
    game.do(g.ShopTimeout(1), opponent=WEAK)
    assert game.s.focus_right_total == 2 and game.s.carried == 5  # 3 + 2 gold, all kept


def test_an_open_training_at_the_shop_clock_is_wrong() -> None:
    game = Game("room")
    opened = game.now
    cell = game.open_training()
    game.now = opened + 120_000
    decided = game.do(g.ShopTimeout(1), opponent=WEAK)
    assert isinstance(decided, list) and isinstance(decided[0], g.TrainingAnswered)
    assert decided[0].right is False and game.s.saved is not None
    assert game.s.saved[cell - 1] is not None and game.s.saved[cell - 1].level == 1


def test_rounds_open_on_the_rooms_clock_and_stale_copies_change_nothing() -> None:
    game = Game("room", room_rounds=6)
    unchanged(game, g.OpenRound(1, game.now))  # round 1 is open already
    game.focus(0)
    assert game.do(g.OpenRound(2, game.now)) == g.Rejection("round_open")
    game.do(g.EndShop(), opponent=STRONG)
    game.do(g.Fight())
    assert game.s.phase == g.WAITING and game.s.round_no == 1
    assert game.do(g.OpenRound(3, game.now)) == g.Rejection("bad_round")
    assert game.do(g.OpenRound(2, game.now + 1)) == g.Rejection("bad_open_time")
    game.now += 30_000
    game.do(g.OpenRound(2, game.now - 500))  # the room opened it half a second ago
    assert game.s.round_no == 2 and game.s.phase == g.FOCUS
    assert game.s.shop_deadline_ms == game.now - 500 + 120_000
    unchanged(game, g.OpenRound(2, game.now))
    assert g.replay(game.events) == game.state


def test_opening_the_next_round_fights_a_faceoff_left_open() -> None:
    game = Game("room")
    to_faceoff(game, arrangement=9)
    game.now += 200_000
    decided = game.do(g.OpenRound(2, game.now))
    assert isinstance(decided, list) and [type(e) for e in decided] == [
        g.CombatFought,
        g.RoundStarted,
    ]
    assert decided[0].arrangement == 9
    assert game.s.round_no == 2 and game.s.rounds_played == 1


def test_a_late_joiner_counts_the_missed_rounds_as_losses() -> None:
    game = Game("room", room_rounds=8, missed_rounds=3)
    assert game.s.losses == 3 and game.s.round_no == 4 and game.s.phase == g.FOCUS
    assert [type(e) for e in game.events][:2] == [g.GameStarted, g.RoundsMissed]
    for _ in range(5):
        game.round(6, WEAK)
    fought = [e for e in game.events if isinstance(e, g.CombatFought)]
    assert len(fought) == 5 and game.s.status == "closed" and game.s.rounds_played == 8
    assert game.s.losses == 3 + sum(e.result == "loss" for e in fought)
    assert game.s.margin == sum(e.margin for e in fought)  # the missed rounds add no margin
    for bad in (-1, 8, 12):
        refused = g.decide(None, g.StartGame("room", 1, 2, missed_rounds=bad), g.Context(0))
        assert refused == g.Rejection("bad_missed_rounds")
    refused = g.decide(None, g.StartGame("casual", 1, 2, missed_rounds=1), g.Context(0))
    assert refused == g.Rejection("bad_missed_rounds")


# -- expiry -----------------------------------------------------------------------------------


def test_a_game_with_no_action_for_7_days_expires_with_its_record() -> None:
    game = Game()
    start = game.now
    week = DEFAULT_SETTINGS.expiry_days * DAY
    assert game.s.expires_ms == start + week + HOUR
    game.round(6, WEAK)
    game.now = start + 30 * 60_000
    events_before = len(game.events)
    game.do(g.StartFocus())
    assert len(game.events) == events_before + 1  # within the hour: the expiry stays put
    game.now = start + 2 * HOUR
    game.do(g.AnswerFocus(1))
    assert isinstance(game.events[-1], g.ExpiryMoved)
    assert game.s.expires_ms == game.now + week + HOUR
    last_action = game.now
    game.now += 6_000  # the question's clock runs out: a timer, not an action
    game.do(g.QuestionTimeout(2, 1))
    assert game.s.expires_ms == last_action + week + HOUR
    game.now = last_action + week
    unchanged(game, g.Stop("expired"))  # 7 days, but the hour's step is not over
    game.now = last_action + week + HOUR
    assert game.do(g.Stop("expired")) == [g.GameEnded("closed", "expired")]
    assert game.s.rounds_played == 1 and game.s.status == "closed"  # its record is kept
    assert g.replay(game.events) == game.state


def test_an_expired_faceoff_is_not_fought() -> None:
    game = Game("casual")  # no Face-off clock
    to_faceoff(game)
    assert game.s.expires_ms is not None
    game.now = game.s.expires_ms
    assert game.do(g.Stop("expired")) == [g.GameEnded("closed", "expired")]
    assert game.s.rounds_played == 0


# -- integrity --------------------------------------------------------------------------------


def test_a_right_answer_faster_than_a_person_voids_the_game_once() -> None:
    game = Game()
    game.do(g.StartFocus())
    assert game.s.question is not None
    game.now += 200
    decided = game.do(g.AnswerFocus(game.s.question.answer % 16 + 1))  # fast but wrong
    assert isinstance(decided, list) and not any(isinstance(e, g.GameVoided) for e in decided)
    game.now += DEFAULT_SETTINGS.human_answer_ms  # exactly the threshold: a person can
    decided = game.do(g.AnswerFocus(game.s.question.answer))
    assert not game.s.voided
    game.now += 299
    decided = game.do(g.AnswerFocus(game.s.question.answer))
    assert isinstance(decided, list)
    voided = [e for e in decided if isinstance(e, g.GameVoided)]
    assert voided == [g.GameVoided("too_fast", "engine", voided[0].note)]
    assert "299 ms" in voided[0].note and game.s.voided
    game.now += 100
    decided = game.do(g.AnswerFocus(game.s.question.answer))
    assert isinstance(decided, list) and not any(isinstance(e, g.GameVoided) for e in decided)
    assert game.s.phase == g.FOCUS  # the game goes on; the services leave it out


def test_a_training_answered_too_fast_voids_the_game() -> None:
    game = Game()
    game.open_training()
    assert game.s.training_question is not None
    game.now += 100
    decided = game.do(g.AnswerTraining(game.s.training_question.answer))
    assert isinstance(decided, list) and isinstance(decided[-1], g.GameVoided)
    assert game.s.voided


def test_an_operator_voids_a_finished_game_with_who_and_why() -> None:
    game = Game()
    for _ in range(3):
        game.round(6, STRONG)
    assert game.s.phase == g.OVER
    assert game.do(g.Void("", "cheating")) == g.Rejection("bad_void")
    assert game.do(g.Void("ops-alice", "x" * 501)) == g.Rejection("bad_void")
    assert game.do(g.Void("ops-alice", "bot pattern")) == [
        g.GameVoided("operator", "ops-alice", "bot pattern")
    ]
    assert game.s.voided
    unchanged(game, g.Void("ops-bob", "again"))
    assert g.replay(game.events) == game.state


# -- any command sequence in a room -----------------------------------------------------------

room_commands = st.one_of(
    st.builds(g.OpenRound, st.integers(0, 4), st.integers(0, 1_000_000)),
    st.builds(g.StartFocus),
    st.builds(g.AnswerFocus, st.integers(1, 16)),
    st.builds(g.QuestionTimeout, st.integers(1, 3), st.integers(0, 6)),
    st.builds(g.ShopTimeout, st.integers(1, 3)),
    st.builds(g.Buy, st.integers(0, 4)),
    st.builds(g.Reroll),
    st.builds(g.EndShop),
    st.builds(g.Arrange, st.integers(0, 383)),
    st.builds(g.Fight),
    st.builds(g.Stop, st.sampled_from(["expired", "forfeit"])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(room_commands, st.integers(0, 90_000)), max_size=60))
def test_any_room_sequence_keeps_the_invariants(steps: list[tuple[g.Command, int]]) -> None:
    game = Game("room", room_rounds=6)
    for command, wait in steps:
        game.now += wait
        if isinstance(command, g.OpenRound):
            command = g.OpenRound(command.round_no, game.now - command.opened_ms % 1000)
        game.do(command, opponent=WEAK)
        s = game.s
        assert s.gold >= 0 and s.status in ("playing", "closed")
        assert s.rounds_played <= 6 and s.round_no <= 6
        if s.phase in (g.FOCUS, g.SHOP):
            assert s.shop_deadline_ms is not None
    assert g.replay(game.events) == game.state


def test_the_new_events_round_trip_through_json() -> None:
    game = Game("room", room_rounds=6, missed_rounds=1)
    game.do(g.StartFocus())
    assert game.s.question is not None
    game.now += 50
    game.do(g.AnswerFocus(game.s.question.answer))  # too fast: GameVoided
    game.now += 120_000
    game.do(g.ShopTimeout(2), opponent=WEAK)
    game.do(g.Fight())
    game.now += 2 * HOUR
    game.do(g.OpenRound(3, game.now))
    game.do(g.StartFocus())  # an action two hours on: ExpiryMoved
    names = {type(e).__name__ for e in game.events}
    assert names >= {"RoundsMissed", "ExpiryMoved", "GameVoided", "RoundStarted", "ShopEnded"}
    decoded = [event_from_dict(json.loads(json.dumps(to_dict(e)))) for e in game.events]
    assert decoded == game.events and g.replay(decoded) == game.state
    for command in (g.OpenRound(3, 5), g.ShopTimeout(2), g.Void("ops", "why"), g.Stop("expired")):
        assert command_from_dict(json.loads(json.dumps(to_dict(command)))) == command
