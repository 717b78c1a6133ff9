"""The game aggregate: decide/apply over whole rounds, timers, rejections and replay."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from arena_engine.digits import game as g
from arena_engine.digits.questions import focus_questions
from arena_engine.digits.settings import DEFAULT_SETTINGS
from arena_engine.digits.slate import Digit, make_slate
from hypothesis import given, settings
from hypothesis import strategies as st

WEAK = make_slate({1: Digit("plus")})
STRONG = make_slate({i: Digit("delta", 3) for i in range(1, 9)})


class Game:
    """A game driven command by command, keeping every event for replay checks."""

    def __init__(self, mode: str = "ranked", room_rounds: int | None = None, **start: Any) -> None:
        self.now = 1_000_000
        self.state: g.GameState | None = None
        self.events: list[g.Event] = []
        started = self.do(
            g.StartGame(mode, player_seed=7, shop_seed=11, room_rounds=room_rounds, **start)
        )
        assert isinstance(started, list), started
        if mode == "room":
            self.open_round()

    def open_round(self) -> None:
        """A room's clock opens the next round now."""
        self.do(g.OpenRound(self.s.round_no + 1, self.now))

    def do(self, command: g.Command, opponent: object = None) -> list[g.Event] | g.Rejection:
        ctx = g.Context(self.now, opponent=opponent)  # type: ignore[arg-type]
        before = self.state
        self.state, decided = g.execute(self.state, command, ctx)
        if isinstance(decided, g.Rejection):
            assert self.state is before
        else:
            self.events.extend(decided)
        return decided

    @property
    def s(self) -> g.GameState:
        assert self.state is not None
        return self.state

    def focus(self, right: int) -> None:
        self.do(g.StartFocus())
        for i in range(6):
            assert self.s.question is not None
            answer = self.s.question.answer if i < right else self.s.question.answer % 16 + 1
            self.now += 1000
            self.do(g.AnswerFocus(answer))

    def open_training(self) -> int:
        """A perfect Focus, the first offer bought, and Training on it: its cell."""
        self.focus(6)
        self.do(g.Buy(0))
        cell = next(i + 1 for i, d in enumerate(self.s.slate) if d is not None)
        self.do(g.Train(cell))
        assert self.s.training_question is not None
        return cell

    def round(self, right: int, opponent: tuple[Digit | None, ...]) -> None:
        self.focus(right)
        self.do(g.EndShop(), opponent=opponent)
        self.do(g.Fight())
        if self.s.phase == g.WAITING:
            self.open_round()


def test_focus_income_and_questions_from_the_player_seed() -> None:
    game = Game()
    game.do(g.StartFocus())
    stage = DEFAULT_SETTINGS.stage_for(1)
    assert game.s.question == focus_questions(7, 1, stage)[0]
    assert game.s.question_deadline_ms == game.now + 6000
    game = Game()
    game.focus(6)
    assert game.s.phase == g.SHOP and game.s.gold == 10 and game.s.bright is not None
    game = Game()
    game.focus(4)
    assert game.s.gold == 7 and game.s.bright is None


def test_late_answer_is_wrong_and_a_timeout_moves_on() -> None:
    game = Game()
    game.do(g.StartFocus())
    assert game.s.question is not None
    game.now += 6001
    decided = game.do(g.AnswerFocus(game.s.question.answer))
    assert isinstance(decided, list) and decided[0] == g.FocusAnswered(
        1,
        0,
        decided[0].answer,
        right=False,
        late=True,  # type: ignore[union-attr]
    )
    assert game.do(g.QuestionTimeout(1, 0)) == []  # stale: that question was answered
    game.now += 100
    assert game.do(g.QuestionTimeout(1, 1)) == []  # not yet due
    game.now += 8000
    decided = game.do(g.QuestionTimeout(1, 1))
    assert isinstance(decided, list) and decided[0].right is False  # type: ignore[union-attr]
    assert game.s.question_index == 2


def test_shop_buy_sell_move_reroll() -> None:
    game = Game()
    game.focus(6)
    gold = game.s.gold
    first = game.s.offers[0]
    assert first is not None
    game.do(g.Buy(0))
    assert game.s.offers[0] is None and game.s.gold == gold - 2
    assert game.do(g.Buy(0)) == g.Rejection("offer_taken")
    cell = next(i + 1 for i, d in enumerate(game.s.slate) if d is not None)
    game.do(g.Move(cell, 8))
    assert game.s.slate[7] == Digit(first)
    game.do(g.Sell(8))
    assert game.s.slate[7] is None and game.s.gold == gold - 2 + 1
    offers_before = game.s.offers
    game.do(g.Reroll())
    assert game.s.reroll == 1 and game.s.offers != offers_before and game.s.bright is not None
    assert game.do(g.Sell(3)) == g.Rejection("cell_empty")
    assert game.do(g.Buy(9)) == g.Rejection("bad_offer")
    while game.s.gold >= 1:
        game.do(g.Reroll())
    assert game.do(g.Reroll()) == g.Rejection("not_enough_gold")


def test_full_slate_must_sell_first_and_supports_go_back() -> None:
    game = Game()
    game.focus(6)
    state = game.s
    game.state = replace(state, slate=make_slate([Digit("odd")] * 8), gold=50)
    assert game.do(g.Buy(0)) == g.Rejection("slate_full")
    game.state = replace(state, offers=("plus", "odd", None, None, None), gold=50)
    game.do(g.Buy(1))
    game.do(g.Buy(0))
    assert game.s.slate[0] == Digit("odd") and game.s.slate[4] == Digit("plus")


def test_training_once_per_round_right_levels_up() -> None:
    game = Game()
    cell = game.open_training()
    assert game.s.training_question is not None
    assert game.do(g.Buy(1)) == g.Rejection("training_open")
    game.now += 5000
    game.do(g.AnswerTraining(game.s.training_question.answer))
    assert game.s.slate[cell - 1] == Digit(game.s.slate[cell - 1].kind, 2)  # type: ignore[union-attr]
    assert game.do(g.Train(cell)) == g.Rejection("training_used")


def test_training_late_answer_uses_it_up() -> None:
    game = Game()
    cell = game.open_training()
    assert game.s.training_question is not None
    game.now += 10_001
    game.do(g.AnswerTraining(game.s.training_question.answer))
    assert game.s.slate[cell - 1].level == 1  # type: ignore[union-attr]
    assert game.s.training_used


def test_faceoff_late_order_refused_and_combat_counts() -> None:
    game = Game()
    game.focus(6)
    game.do(g.Buy(0))
    game.do(g.EndShop(), opponent=STRONG)
    assert game.s.phase == g.FACEOFF and game.s.carried == min(game.s.carried, 5)
    game.do(g.Arrange(17))
    assert game.s.arrangement == 17
    game.now += 61_000
    assert game.do(g.Arrange(3)) == g.Rejection("faceoff_over")
    decided = game.do(g.Fight())
    assert isinstance(decided, list) and isinstance(decided[0], g.CombatFought)
    assert decided[0].arrangement == 17 and decided[0].result == "loss"
    assert game.s.losses == 1 and game.s.round_no == 2 and game.s.phase == g.FOCUS


def test_three_losses_lose_and_replay_rebuilds_the_state() -> None:
    game = Game()
    for _ in range(3):
        game.round(6, STRONG)
    assert game.s.status == "lost" and game.s.phase == g.OVER
    assert game.do(g.StartFocus()) == g.Rejection("game_over")
    assert g.replay(game.events) == game.state
    started = game.events[0]
    assert isinstance(started, g.GameStarted) and started.catalogue_version == "digits-catalogue-v1"


def test_room_plays_every_round_and_cannot_be_forfeited() -> None:
    game = Game("room", room_rounds=6)
    assert game.do(g.Stop("forfeit")) == g.Rejection("room_cannot_forfeit")
    for _ in range(6):
        game.round(0, STRONG)
    assert game.s.losses == 6 and game.s.status == "closed"


def test_tutorial_closes_after_three_rounds() -> None:
    game = Game("tutorial")
    for _ in range(3):
        game.round(6, WEAK)
    assert game.s.status == "closed" and game.s.rounds_played == 3


def test_bad_commands_change_nothing() -> None:
    game = Game()
    assert game.do(g.StartGame("ranked", 1, 2)) == g.Rejection("game_exists")
    assert game.do(g.Buy(0)) == g.Rejection("not_in_shop")
    assert game.do(g.AnswerFocus(3)) == g.Rejection("no_question")
    game.do(g.StartFocus())
    assert game.do(g.AnswerFocus(17)) == g.Rejection("bad_answer")
    assert game.do(g.Stop("bored")) == g.Rejection("bad_stop_reason")
    assert g.decide(None, g.StartGame("blitz", 1, 2), g.Context(0)) == g.Rejection("unknown_mode")


def test_same_shop_seed_same_offers_whatever_else_was_done() -> None:
    a, b = Game(), Game()
    a.focus(6)
    b.focus(2)
    assert a.s.offers == b.s.offers
    a.do(g.Buy(0))
    a.do(g.Reroll())
    b.do(g.Reroll())
    assert a.s.offers == b.s.offers


commands = st.one_of(
    st.builds(g.StartFocus),
    st.builds(g.AnswerFocus, st.integers(0, 17)),
    st.builds(g.QuestionTimeout, st.integers(1, 3), st.integers(0, 6)),
    st.builds(g.ShopTimeout, st.integers(1, 3)),
    st.builds(g.Stop, st.sampled_from(["midnight", "deadline", "expired", "forfeit", "x"])),
    st.builds(
        g.Buy, st.one_of(st.integers(-1, 6), st.just("bright")), st.none() | st.integers(0, 9)
    ),
    st.builds(g.Sell, st.integers(0, 9)),
    st.builds(g.Move, st.integers(0, 9), st.integers(0, 9)),
    st.builds(g.Reroll),
    st.builds(g.Train, st.integers(0, 9)),
    st.builds(g.AnswerTraining, st.integers(1, 16)),
    st.builds(g.TrainingTimeout, st.integers(1, 3)),
    st.builds(g.EndShop),
    st.builds(g.Arrange, st.integers(-1, 400)),
    st.builds(g.Fight),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(commands, st.integers(0, 12_000)), max_size=60))
def test_any_command_sequence_keeps_the_invariants(steps: list[tuple[g.Command, int]]) -> None:
    game = Game()
    for command, wait in steps:
        game.now += wait
        game.do(command, opponent=WEAK)
        s = game.s
        assert s.gold >= 0 and len(s.slate) == 8
        assert all(d is None or 1 <= d.level <= 3 for d in s.slate)
        assert s.carried <= DEFAULT_SETTINGS.reserve_cap
    assert g.replay(game.events) == game.state


def test_combat_report_of_the_faceoff_matches_the_fought_combat() -> None:
    game = Game()
    game.focus(6)
    game.do(g.Buy(0))
    game.do(g.EndShop(), opponent=WEAK)
    game.do(g.Arrange(5))
    report = g.combat_of(game.s, report=True)
    decided = game.do(g.Fight())
    assert isinstance(decided, list) and isinstance(decided[0], g.CombatFought)
    assert report.report is not None and report.report[-1]["result"] == decided[0].result
    assert (report.margin, report.exchanges) == (decided[0].margin, decided[0].exchanges)


def test_predict_only_in_the_tutorial_faceoff() -> None:
    game = Game("tutorial")
    game.focus(6)
    game.do(g.Buy(0))
    assert g.tutorial_predict(game.s, 0) == g.Rejection("not_in_faceoff")
    game.do(g.EndShop(), opponent=WEAK)
    predicted = g.tutorial_predict(game.s, 9)
    game.do(g.Arrange(9))
    assert predicted == g.combat_of(game.s)
    assert g.tutorial_predict(game.s, 384) == g.Rejection("bad_arrangement")
    ranked = Game()
    ranked.focus(6)
    ranked.do(g.EndShop(), opponent=WEAK)
    assert g.tutorial_predict(ranked.s, 0) == g.Rejection("predict_tutorial_only")
