"""Digits on the seam (arena_games.digits): the game played through its module alone, mode by
mode, with the server's clocks as timers; what the player is shown and not shown; ratings; the
client's messages. The contract suite (test_contract.py) plays it with its bot too."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from arena_engine.digits import ladder, paris
from arena_engine.digits.questions import focus_questions, training_question
from arena_games.contract import (
    ClientError,
    Inputs,
    MatchInfo,
    Seat,
    ServiceSettings,
    Table,
    Thought,
    Timer,
    Viewer,
)
from arena_games.digits import MODULE, lobby, ratings, wire
from arena_games.digits.bot import DigitsBot, work_out
from arena_games.digits.client import MESSAGES
from arena_games.digits.ghost_store import GhostSaved, GhostStore
from arena_games.digits.rules import DigitsMatch, house_army, timer_id
from arena_games.digits.views import game_view, hidden
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb
from arena_runtime.streams import Rejection
from google.protobuf.message import Message
from pydantic import TypeAdapter, ValidationError

from tests.games.play import client_message

RULES = MODULE.rules
VIEWS = MODULE.views
#: 2026-12-01 10:00 Paris (09:00 UTC).
T0 = 1_796_115_600_000
PLAYER = "p1"


def army_of(kinds: list[str | None]) -> pb.Army:
    return pb.Army(
        slate=pb.Slate(cells=[pb.Cell() if k is None else pb.Cell(kind=k, level=1) for k in kinds]),
        shown_as="alice",
        round=1,
        rating=1040,
        position=17,
        pool="general",
        tier="record",
        store_position=99,
        seed=3,
    )


WEAK = army_of(["plus", None, None, None, None, None, None, None])


@dataclass
class Game:
    """One Digits game driven by hand through the module, with its own clock."""

    mode: str = "casual"
    settings: pb.DigitsSettings | None = None
    now: int = T0
    seed: int = 5
    state: DigitsMatch = field(init=False)
    events: list[Message] = field(default_factory=list)

    def __post_init__(self) -> None:
        played = RULES.settings(self.settings)
        assert not isinstance(played, Rejection), played
        info = MatchInfo("m1", "digits", (Seat(1, PLAYER, "P1"),), self.mode)
        self.state = RULES.initial(info, played, ServiceSettings())
        started = RULES.start(self.state, Inputs(self.now, self.seed))
        assert not isinstance(started, Rejection), started
        self._fold(started)

    @property
    def game(self) -> Any:
        return self.state.game

    def _fold(self, events: list[Message]) -> list[Any]:
        for event in events:
            self.state = RULES.apply(self.state, event, self.now)
        self.events += events
        return events

    def do(self, command: Message, after_ms: int = 1000, seat: int = 1) -> list[Any]:
        self.now += after_ms
        decided = RULES.decide(self.state, seat, command, Inputs(self.now, 11))
        assert not isinstance(decided, Rejection), (command, decided)
        return self._fold(list(decided))

    def refused(self, command: Message, after_ms: int = 1000, seat: int = 1) -> str:
        self.now += after_ms
        before = self.state
        decided = RULES.decide(self.state, seat, command, Inputs(self.now, 11))
        assert isinstance(decided, Rejection), (command, decided)
        assert self.state == before
        return decided.code

    def timer(self, kind: str) -> Timer:
        armed = [t for t in RULES.timers(self.state) if t.command_id.startswith(f"timer:{kind}")]
        assert armed, (kind, [t.command_id for t in RULES.timers(self.state)])
        return armed[0]

    def fire(self, kind: str) -> list[Any]:
        timer = self.timer(kind)
        self.now = max(self.now, timer.due_ms)
        decided = RULES.decide(self.state, 0, timer.payload, Inputs(self.now, 13, 17))
        assert not isinstance(decided, Rejection), (timer, decided)
        return self._fold(list(decided))

    def focus(self, right: int = 6) -> None:
        """A whole Focus, the first ``right`` pages right, each answered after 2 s."""
        self.do(pb.StartFocus())
        for index in range(6):
            question = self.game.question
            answer = question.answer if index < right else question.answer % 16 + 1
            self.do(pb.AnswerFocus(answer=answer), after_ms=2000)

    def to_faceoff(self, army: pb.Army = WEAK) -> None:
        self.focus()
        self.do(pb.EndShop())
        if self.state.closing is not None:
            self.do(pb.DrawArmy(round=self.game.round_no, army=army), seat=0, after_ms=10)


def names(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


# -- the Focus ----------------------------------------------------------------------------------


def test_focus_pages_come_one_by_one_with_the_servers_deadline_and_move_on_unanswered() -> None:
    g = Game()
    assert g.game.question is None and not [
        t for t in RULES.timers(g.state) if "question" in t.command_id
    ]
    (shown, *_) = g.do(pb.StartFocus())
    assert isinstance(shown, pb.QuestionShown) and shown.index == 0
    assert shown.deadline_ms == g.now + 6000  # stage 1: 6 s
    timer = g.timer("question-1-0")
    assert timer.due_ms == shown.deadline_ms
    # Nobody answers (the page may be closed): at the deadline the next page comes.
    moved = g.fire("question-1-0")
    assert names(moved) == ["FocusAnswered", "QuestionShown"]
    assert not moved[0].HasField("answer") and not moved[0].right
    assert moved[1].index == 1 and moved[1].deadline_ms == g.now + 6000
    # The fired timer is stale now: deciding it again changes nothing.
    assert isinstance(RULES.decide(g.state, 0, timer.payload, Inputs(g.now + 1)), Rejection)


def test_a_late_answer_is_wrong_even_when_it_is_the_right_one() -> None:
    g = Game()
    g.do(pb.StartFocus())
    answer = g.game.question.answer
    (answered, *_) = g.do(pb.AnswerFocus(answer=answer), after_ms=6001)
    assert answered.late and not answered.right


def test_a_right_answer_faster_than_a_person_voids_the_game() -> None:
    g = Game(settings=pb.DigitsSettings(human_answer_ms=500))
    g.do(pb.StartFocus())
    events = g.do(pb.AnswerFocus(answer=g.game.question.answer), after_ms=499)
    assert "GameVoided" in names(events) and g.game.voided
    fair = Game(settings=pb.DigitsSettings(human_answer_ms=500))
    fair.do(pb.StartFocus())
    assert "GameVoided" not in names(fair.do(pb.AnswerFocus(answer=3), after_ms=500))


# -- the shop and the army ----------------------------------------------------------------------


def test_ending_the_shop_saves_the_slate_and_the_face_off_opens_when_the_army_comes() -> None:
    g = Game("ranked")
    g.focus()
    g.do(pb.Buy(offer=0))
    slate = wire.slate_to_proto(g.game.slate)
    (closing,) = g.do(pb.EndShop())
    assert isinstance(closing, pb.ShopClosing) and closing.slate == slate
    assert (closing.round, closing.wins, closing.losses) == (1, 0, 0)
    assert g.refused(pb.Reroll()) == "army_coming"
    assert g.refused(pb.DrawArmy(round=2, army=WEAK), seat=0) == "not_waiting_for_army"
    bad = army_of(["nope", None, None, None, None, None, None, None])
    assert g.refused(pb.DrawArmy(round=1, army=bad), seat=0) == "bad_army"
    ended = g.do(pb.DrawArmy(round=1, army=WEAK), seat=0, after_ms=50)
    shop_ended = next(e for e in ended if isinstance(e, pb.ShopEnded))
    assert shop_ended.army == WEAK and shop_ended.saved == slate
    # Ranked: 60 s from the moment the army is shown.
    assert shop_ended.faceoff_deadline_ms == g.now + 60_000
    view = game_view(g.state, "m1", g.now)
    army = view["faceoff"]["army"]
    assert army["shown_as"] == "alice" and army["rating"] == 1040
    assert army["slate"][0]["atk"] >= 1 and army["slate"][0]["effect"]


def test_no_army_in_time_a_house_ghost_shown_as_one() -> None:
    g = Game("casual")
    g.focus()
    g.do(pb.EndShop())
    timer = g.timer("army-1")
    assert timer.due_ms == g.now + 5000
    ended = g.fire("army-1")
    army = next(e for e in ended if isinstance(e, pb.ShopEnded)).army
    assert army.house and army.pool == "house" and army.seed == 17
    assert not next(e for e in ended if isinstance(e, pb.ShopEnded)).HasField(
        "faceoff_deadline_ms"
    )  # casual: no Face-off clock
    assert game_view(g.state, "m1", g.now)["faceoff"]["army"]["house"]


def test_training_once_a_round_its_clock_a_timer() -> None:
    g = Game()
    g.focus()
    g.do(pb.Buy(offer=0))
    (shown,) = g.do(pb.Train(cell=g.game.slate.index(next(d for d in g.game.slate if d)) + 1))
    assert shown.deadline_ms == g.now + 10_000
    assert g.timer("training-1").due_ms == shown.deadline_ms
    (answered, *_) = g.fire("training-1")
    assert isinstance(answered, pb.TrainingAnswered) and not answered.right
    assert g.refused(pb.Train(cell=shown.cell)) == "training_used"


# -- the Face-off -------------------------------------------------------------------------------


def test_a_late_order_is_refused_and_the_end_of_shop_order_fights() -> None:
    g = Game("ranked")
    g.to_faceoff()
    deadline = g.game.faceoff_deadline_ms
    g.now = deadline - 1000
    assert g.refused(pb.Arrange(arrangement=5), after_ms=1001) == "faceoff_over"
    fought = g.fire("faceoff-1")
    combat = next(e for e in fought if isinstance(e, pb.CombatFought))
    assert combat.arrangement == 0


def test_an_order_in_time_is_the_one_fought() -> None:
    g = Game("ranked")
    g.to_faceoff()
    g.do(pb.Arrange(arrangement=17))
    fought = g.do(pb.Fight())
    assert next(e for e in fought if isinstance(e, pb.CombatFought)).arrangement == 17
    assert names(fought)[:2] == ["CombatFought", "RoundStarted"]


def test_the_combat_is_pushed_with_its_full_report() -> None:
    g = Game()
    g.to_faceoff()
    g.now += 1000
    decided = RULES.decide(g.state, 1, pb.Fight(), Inputs(g.now))
    assert not isinstance(decided, Rejection)
    after = RULES.apply(g.state, decided[0], g.now)
    (told, _) = VIEWS.push(_table(), after, decided[0], Viewer(1), g.now)
    assert told["type"] == "digits_combat_fought" and told["report"]["report"]


def test_predict_only_in_the_tutorial_which_faces_its_own_ghosts_at_once() -> None:
    g = Game("tutorial")
    g.focus()
    ended = g.do(pb.EndShop())
    opened = next(e for e in ended if isinstance(e, pb.ShopEnded))
    assert opened.army.house and opened.army.tutorial
    assert not opened.HasField("faceoff_deadline_ms")  # a guided round: no clock
    (predicted,) = g.do(pb.Predict(arrangement=3))
    assert predicted.result in ("win", "draw", "loss") and g.game.arrangement == 0
    other = Game("casual")
    other.to_faceoff()
    assert other.refused(pb.Predict(arrangement=3)) == "predict_tutorial_only"


def test_a_trial_faces_house_ghosts_at_once() -> None:
    g = Game("trial")
    g.focus()
    assert next(e for e in g.do(pb.EndShop()) if isinstance(e, pb.ShopEnded)).army.house


# -- modes --------------------------------------------------------------------------------------


def test_a_daily_stops_at_paris_midnight_fighting_the_open_face_off_as_it_stands() -> None:
    g = Game("daily", pb.DigitsSettings(shop_seed=2026_12_01))
    midnight = paris.next_midnight_ms(T0)
    assert g.game.ends_ms == midnight and g.timer("midnight").due_ms == midnight
    g.to_faceoff()
    g.do(pb.Arrange(arrangement=9))
    g.now = midnight - 1
    stopped = g.fire("midnight")
    assert names(stopped) == ["CombatFought", "DigitsEnded"]
    assert stopped[0].arrangement == 9 and stopped[1].reason == "midnight"
    assert RULES.result(g.state).reason == "midnight"  # type: ignore[union-attr]


def test_a_duel_needs_its_deadline_and_faces_the_armies_drawn_at_acceptance() -> None:
    info = MatchInfo("m1", "digits", (Seat(1, PLAYER),), "duel")
    seeds = pb.DigitsSettings(shop_seed=4, player_seed=6)
    no_deadline = RULES.initial(info, lobby.check(seeds), ServiceSettings())
    refused = RULES.start(no_deadline, Inputs(T0, 1))
    assert isinstance(refused, Rejection) and refused.code == "bad_deadline"
    armies = [army_of(["minus", None, None, None, None, None, None, None])] * 12
    armies[0] = WEAK
    duel = pb.DigitsSettings(ends_ms=T0 + 86_400_000, opponents=armies, shop_seed=4, player_seed=6)
    g = Game("duel", duel)
    g.focus()
    ended = g.do(pb.EndShop())
    assert next(e for e in ended if isinstance(e, pb.ShopEnded)).army == WEAK
    assert g.game.shop_seed == 4
    g.now = T0 + 86_400_000
    assert names(g.fire("deadline")) == ["CombatFought", "DigitsEnded"]


def test_a_room_on_the_hosts_clock_late_joiner_no_forfeit_unstarted_focus_scores_zero() -> None:
    settings = pb.DigitsSettings(
        room_rounds=6, missed_rounds=2, room_started_ms=T0, room_shop_seconds=60, shop_seed=8
    )
    g = Game("room", settings)
    assert (g.game.losses, g.game.round_no) == (2, 2)
    period = (60 + 60 + 30) * 1000 + 5000
    opens = g.timer("round-3")
    assert opens.due_ms == T0 + 2 * period
    assert names(g.fire("round-3")) == ["RoundStarted"]
    assert g.game.shop_deadline_ms == T0 + 2 * period + 60_000
    # The Focus waits for "Start the Focus"; never started, the shop clock closes it: 0 right.
    (closing,) = g.fire("shop-3")
    assert closing.timed_out
    ended = g.do(pb.DrawArmy(round=3, army=WEAK), seat=0, after_ms=100)
    assert next(e for e in ended if isinstance(e, pb.ShopOpened)).right == 0
    forfeit = RULES.forfeit(g.state, 1, Inputs(g.now))
    assert isinstance(forfeit, Rejection) and forfeit.code == "room_cannot_forfeit"


def test_seven_days_without_an_action_expire_the_game_with_its_record() -> None:
    g = Game()
    g.do(pb.StartFocus())
    timer = g.timer("expired")
    assert timer.due_ms >= g.now + 7 * paris.DAY_MS
    assert names(g.fire("expired")) == ["DigitsEnded"]
    assert RULES.result(g.state).reason == "expired"  # type: ignore[union-attr]


def test_forfeit_and_an_operators_void() -> None:
    g = Game("ranked")
    (voided,) = g.do(pb.VoidGame(by="ops", why="bot farm"), seat=0)
    assert (voided.reason, voided.by) == ("operator", "ops")
    forfeited = RULES.forfeit(g.state, 1, Inputs(g.now))
    assert not isinstance(forfeited, Rejection)
    (ended,) = forfeited
    assert isinstance(ended, pb.DigitsEnded) and ended.status == "forfeited" and ended.voided


# -- what the player is shown -------------------------------------------------------------------


def test_the_player_never_sees_a_pages_answer_or_the_pages_to_come() -> None:
    g = Game(seed=77)
    g.do(pb.StartFocus())
    pages = focus_questions(g.game.player_seed, 1, 1, 6)
    shown = VIEWS.push(_table(), g.state, g.events[-1], Viewer(1), g.now)
    text = json.dumps(shown, separators=(",", ":"), ensure_ascii=False)
    assert pages[0].text in text and '"answer"' not in text
    secrets = hidden(g.state, Viewer(1))
    assert any(pages[1].text in s for s in secrets if pages[1].text != pages[0].text)
    # The hidden check would catch a view that told the answer the way a question carries it.
    leak = json.dumps({"text": pages[0].text, "answer": pages[0].answer}, ensure_ascii=False)
    assert any(s in leak.replace(", ", ",").replace(": ", ":") for s in secrets)
    spectator = VIEWS.snapshot(_table(), g.state, Viewer(role="spectator"), g.now)
    assert spectator[0]["type"] == "digits_record" and "slate" not in spectator[0]


def test_a_training_page_is_shown_without_its_answer() -> None:
    g = Game()
    g.focus()
    g.do(pb.Buy(offer=0))
    cell = next(i for i, d in enumerate(g.game.slate, start=1) if d)
    g.do(pb.Train(cell=cell))
    question = training_question(g.game.player_seed, 1, 2)
    view = game_view(g.state, "m1", g.now)
    assert view["shop"]["training"]["text"] == question.text
    assert "answer" not in json.dumps(view)


def test_the_bot_works_out_every_stages_pages() -> None:
    for stage in range(1, 7):
        for seed in range(40):
            for question in focus_questions(seed, 1, stage, 6):
                assert work_out(question.text) == question.answer, question


def test_the_bot_plays_a_ranked_game_to_its_end_from_its_pushes() -> None:
    g = Game("ranked")
    bot = DigitsBot(Viewer(1))
    for message in VIEWS.snapshot(_table(), g.state, Viewer(1), g.now):
        bot.observe(message)
    for _ in range(3000):
        if g.state.over:
            break
        reply = bot.reply(1)
        if reply is None:
            timers = sorted(RULES.timers(g.state))
            g.now = max(g.now, timers[0].due_ms)
            events = g.fire(timers[0].command_id.split(":")[1])
        else:
            message = client_message(MODULE, reply, "x")
            events = g.do(MODULE.client.command(message, PLAYER), after_ms=1500)
        for event in events:
            for pushed in VIEWS.push(_table(), g.state, event, Viewer(1), g.now):
                bot.observe(pushed)
    result = RULES.result(g.state)
    assert result is not None and result.reason in ("won", "lost", "closed")
    assert g.game.focus_right_total == 6 * g.game.rounds_played  # it never missed a page
    assert not g.game.voided  # 1.5 s a page: a person's pace


# -- ratings, settings, client ------------------------------------------------------------------


def test_ranked_combats_are_rated_against_the_armys_frozen_rating() -> None:
    g = Game("ranked")
    g.to_faceoff()
    g.do(pb.Fight())
    timed = [(e, T0 + 10) for e in g.events]
    info = MatchInfo("m1", "digits", (Seat(1, PLAYER),), "ranked")
    (combat,) = ratings.rated_combats(info, timed)
    assert combat.army_rating == 1040 and combat.round_no == 1
    (rated,) = [
        e
        for e in ratings.rate(ladder.Standing(), PLAYER, "m1", combat)
        if isinstance(e, ladder.CombatRated)
    ]
    assert rated.army_rating == 1040 and rated.k == 24
    casual = MatchInfo("m1", "digits", (Seat(1, PLAYER),), "casual")
    assert ratings.rated_combats(casual, timed) == [] and MODULE.ratings.unrated(casual)


def test_a_house_ghost_counts_at_the_players_own_rating() -> None:
    combat = ratings.RankedCombat(1, "win", None, T0)
    standing = ladder.Standing(1200, paris.season_of(T0), 3)
    rated = ratings.rate(standing, PLAYER, "m1", combat)[-1]
    assert isinstance(rated, ladder.CombatRated) and rated.army_rating == 1200


def test_defaults_fill_every_setting_and_the_form_carries_the_hosts_picks() -> None:
    defaults = lobby.defaults()
    assert (defaults.room_rounds, defaults.room_shop_seconds, defaults.faceoff_seconds) == (
        8,
        120,
        60,
    )
    assert defaults.army_wait_ms == 5000 and defaults.human_answer_ms == 300
    assert set(lobby.to_form(defaults)) == set(lobby.FORM_FIELDS)
    picked = lobby.from_form(lobby.SettingsForm(room_rounds=10, guests_allowed=True))
    assert picked.room_rounds == 10 and picked.guests_allowed
    with pytest.raises(ValidationError):
        lobby.SettingsForm.model_validate({"player_seed": 1})  # the services' fields only


def test_client_messages_are_checked_for_shape() -> None:
    buy = TypeAdapter(MESSAGES[2]).validate_python(
        {"id": "1", "type": "digits_buy", "offer": "bright"}
    )
    command = MODULE.client.command(buy, PLAYER)
    assert isinstance(command, pb.Buy) and command.bright and not command.HasField("cell")
    for bad in ({"answer": 17}, {"answer": 0}):
        with pytest.raises(ValidationError):
            TypeAdapter(MESSAGES[1]).validate_python({"id": "1", "type": "digits_answer", **bad})
    with pytest.raises(ClientError):
        MODULE.client.command(lobby.SettingsForm(), PLAYER)


def test_timer_ids_name_their_kind_and_deadline() -> None:
    assert timer_id(pb.QuestionDue(round=2, index=3, deadline_ms=9)) == "timer:question-2-3:9"
    assert timer_id(pb.StopDue(reason="midnight", due_ms=5)) == "timer:midnight:5"


def test_house_armies_are_seeded() -> None:
    g = Game()
    assert house_army(g.game, "casual", 4) == house_army(g.game, "casual", 4)
    assert house_army(g.game, "casual", 4) != house_army(g.game, "casual", 5)


def _table() -> Table:
    return Table("m1", "digits", (Seat(1, PLAYER),))


def test_a_timer_before_its_deadline_changes_nothing() -> None:
    g = Game()
    g.do(pb.StartFocus())
    timer = g.timer("question-1-0")
    before = g.state
    early = RULES.decide(g.state, 0, timer.payload, Inputs(timer.due_ms - 1))
    assert isinstance(early, Rejection) and early.code == "timer_not_due"
    assert g.state == before
    forged = pb.QuestionDue(round=1, index=0, deadline_ms=timer.due_ms - 5000)
    stale = RULES.decide(g.state, 0, forged, Inputs(timer.due_ms))
    assert isinstance(stale, Rejection) and stale.code == "stale_timer"


def test_a_ranked_combat_against_a_house_ghost_carries_no_army_rating() -> None:
    g = Game("ranked")
    g.focus()
    g.do(pb.EndShop())
    g.fire("army-1")
    g.do(pb.Fight())
    info = MatchInfo("m1", "digits", (Seat(1, PLAYER),), "ranked")
    (combat,) = ratings.rated_combats(info, [(e, T0) for e in g.events])
    assert combat.army_rating is None


def test_a_house_ghost_thought_ahead_is_the_one_decided_and_only_for_its_state() -> None:
    g = Game("ranked")
    g.focus()
    g.do(pb.EndShop())
    timer = g.timer("army-1")
    now = timer.due_ms
    thought = RULES.think(g.state, timer.payload, 21)
    assert thought is not None and thought.state is g.state
    ahead = RULES.decide(g.state, 0, timer.payload, Inputs(now, 1, 21, thought))
    on_the_spot = RULES.decide(g.state, 0, timer.payload, Inputs(now, 1, 21))
    assert ahead == on_the_spot and not isinstance(ahead, Rejection)
    # A thought for another state, or with another seed, is not used.
    other = Game("ranked", seed=99)
    for stranger in (Thought(other.state, 21, WEAK), Thought(g.state, 22, WEAK)):
        kept = RULES.decide(g.state, 0, timer.payload, Inputs(now, 1, 21, stranger))
        assert kept == on_the_spot
    used = RULES.decide(g.state, 0, timer.payload, Inputs(now, 1, 21, Thought(g.state, 21, WEAK)))
    assert not isinstance(used, Rejection)
    assert next(e for e in used if isinstance(e, pb.ShopEnded)).army == WEAK
    assert RULES.think(g.state, pb.Reroll(), 21) is None


@pytest.mark.parametrize(
    ("mode", "given", "missing"),
    [
        ("daily", pb.DigitsSettings(), "shop_seed"),
        ("room", pb.DigitsSettings(), "shop_seed"),
        ("duel", pb.DigitsSettings(shop_seed=1, ends_ms=T0 + 1000), "player_seed"),
    ],
)
def test_shared_modes_need_the_seeds_their_players_share(
    mode: str, given: pb.DigitsSettings, missing: str
) -> None:
    info = MatchInfo("m1", "digits", (Seat(1, PLAYER),), mode)
    state = RULES.initial(info, lobby.check(given), ServiceSettings())
    refused = RULES.start(state, Inputs(T0, 1))
    assert isinstance(refused, Rejection) and refused.code == "no_shared_seed"
    assert missing in refused.message
    # Two daily players given the day's seed are offered the same.
    a, b = (Game("daily", pb.DigitsSettings(shop_seed=7), seed=s) for s in (1, 2))
    a.focus(right=3)
    b.focus(right=3)
    assert a.game.offers == b.game.offers and a.game.player_seed != b.game.player_seed


def test_an_unbuilt_house_ghost_from_the_store_is_built_by_the_game() -> None:
    unbuilt = pb.Army(house=True, round=1, wins=0, losses=0, seed=31, pool="house", tier="house")
    g = Game("ranked")
    g.focus()
    g.do(pb.EndShop())
    thought = RULES.think(g.state, pb.DrawArmy(round=1, army=unbuilt), 4)
    assert thought is not None
    ended = g.do(pb.DrawArmy(round=1, army=unbuilt), seat=0)
    army = next(e for e in ended if isinstance(e, pb.ShopEnded)).army
    assert len(army.slate.cells) == 8 and army.seed == 31 and army.house
    assert army == thought.choice
    assert army.slate == house_army(g.game, "ranked", 31).slate
    h = Game("ranked")
    h.focus()
    h.do(pb.EndShop())
    wrong = pb.Army(house=True, round=1, wins=1, losses=0, seed=31)  # no win before round 1
    assert h.refused(pb.DrawArmy(round=1, army=wrong), seat=0) == "bad_army"
    late = pb.Army(house=True, round=2, seed=31)
    assert h.refused(pb.DrawArmy(round=1, army=late), seat=0) == "bad_army"


# -- every mode, played to its end by the bot ---------------------------------------------------

MODE_SETTINGS = {
    "ranked": pb.DigitsSettings(),
    "casual": pb.DigitsSettings(),
    "daily": pb.DigitsSettings(shop_seed=20261201),
    "room": pb.DigitsSettings(room_rounds=6, missed_rounds=1, shop_seed=8, room_shop_seconds=90),
    "duel": pb.DigitsSettings(shop_seed=3, player_seed=4, ends_ms=T0 + 86_400_000),
    "tutorial": pb.DigitsSettings(),
    "trial": pb.DigitsSettings(),
}


@pytest.mark.parametrize("mode", sorted(MODE_SETTINGS))
def test_every_mode_plays_to_its_end_decides_again_the_same_and_hides_what_it_must(
    mode: str,
) -> None:
    """The bot plays each mode from its pushes; the ghost store answers the shops that wait
    for an army (every other one: the rest get a house ghost at the army timer). Every decision
    is decided again with the same inputs and gives the same events, and no push contains what
    the game hides from the player at that moment."""
    store = GhostStore()
    for i in range(40):
        shop = pb.ShopClosing(round=1 + i % 12, slate=WEAK.slate, wins=min(i % 12, i % 5), losses=0)
        store.apply(GhostSaved.of(shop, game_id=f"g{i}", owner=f"o{i}", login=f"o{i}",
                                  mode="ranked", rating=1000, saved_ms=T0))  # fmt: skip
    g = Game(mode, MODE_SETTINGS[mode], now=T0 + 3_600_000)
    bot = DigitsBot(Viewer(1))
    steps: list[tuple[DigitsMatch, int, Message, Inputs, list[Any]]] = []
    pushes = 0

    def show(before: DigitsMatch, events: list[Any]) -> None:
        nonlocal pushes
        state = before
        for event in events:
            state = RULES.apply(state, event, g.now)
            secrets = hidden(state, Viewer(1))
            for message in VIEWS.push(_table(), state, event, Viewer(1), g.now):
                text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
                assert not [s for s in secrets if s in text], (message, secrets)
                pushes += 1
                bot.observe(message)

    def step(seat: int, command: Message, inputs: Inputs) -> None:
        before = g.state
        decided = RULES.decide(before, seat, command, inputs)
        assert not isinstance(decided, Rejection), (command, decided)
        events = g._fold(list(decided))
        steps.append((before, seat, command, inputs, events))
        show(before, events)

    for message in VIEWS.snapshot(_table(), g.state, Viewer(1), g.now):
        bot.observe(message)
    waited = 0
    for number in range(3000):
        if g.state.over:
            break
        reply = bot.reply(number)
        closing = g.state.closing
        if closing is not None and waited % 2 == 0 and mode in ("ranked", "casual", "daily"):
            waited += 1
            game = g.game
            army = store.select(mode=mode, round_no=game.round_no, record=(game.wins, game.losses),
                                rating=1000, player=PLAYER, seed=number, now_ms=g.now)  # fmt: skip
            g.now += 200
            step(0, pb.DrawArmy(round=closing.round_no, army=army), Inputs(g.now, number, number))
        elif reply is not None:
            g.now += 1500
            command = MODULE.client.command(client_message(MODULE, reply, "x"), PLAYER)
            step(1, command, Inputs(g.now, number, number))
        else:
            waited += closing is not None
            timer = sorted(RULES.timers(g.state))[0]
            g.now = max(g.now, timer.due_ms)
            thought = RULES.think(g.state, timer.payload, number)
            step(0, timer.payload, Inputs(g.now, number, number, thought))
    result = RULES.result(g.state)
    assert result is not None, mode
    expected_rounds = {"room": 6, "tutorial": 3}.get(mode)
    if expected_rounds is not None:
        assert g.game.rounds_played == expected_rounds and result.reason == "closed"
    for before, seat, command, inputs, events in steps:
        again = RULES.decide(
            before, seat, command, Inputs(inputs.now_ms, inputs.seed, inputs.ai_seed)
        )
        assert again == events, (mode, command)
    assert pushes > len(steps)
