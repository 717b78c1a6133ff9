"""A Digits game as an event-sourced aggregate: ``decide(state, command, context)`` returns the
events a command causes (or a Rejection, changing nothing) and ``apply(state, event)`` folds one
event into a new immutable state. Commands live in `commands.py` and events in `events.py`; both
are re-exported here.

Randomness: the game's two seeds are recorded in GameStarted; Focus and Training questions come
from the player's seed, shop offers from the shop seed (shared by the players of a daily
challenge, a room or a duel). The drawn questions and offers are also recorded in the events, so
a reader never needs the engine to know what was shown. Time enters through ``context.now_ms``
and timer commands; a stale timer yields no events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from . import paris
from . import slate as slates
from .catalogue import load
from .combat import CombatResult, compile_rules, fight
from .commands import (
    AnswerFocus,
    AnswerTraining,
    Arrange,
    Buy,
    Command,
    Context,
    EndShop,
    Fight,
    Move,
    OpenRound,
    QuestionTimeout,
    Rejection,
    Reroll,
    Sell,
    ShopTimeout,
    StartFocus,
    StartGame,
    Stop,
    Train,
    TrainingTimeout,
    Void,
)
from .economy import income, price, reserve, sell_value
from .events import (
    Arranged,
    Bought,
    CombatFought,
    Event,
    ExpiryMoved,
    FocusAnswered,
    GameEnded,
    GameStarted,
    GameVoided,
    Moved,
    QuestionShown,
    Rerolled,
    RoundsMissed,
    RoundStarted,
    ShopEnded,
    ShopOpened,
    Sold,
    TrainingAnswered,
    TrainingShown,
)
from .faceoff import ARRANGEMENT_COUNT, IDENTITY, arrange
from .questions import Question, focus_questions, training_question
from .settings import DigitsSettings
from .shop import bright_offer, offers
from .slate import EMPTY_SLATE, Digit, Slate, SlateError
from .status import CLOSED, MODES, PLAYING, game_status, last_round
from .training import answer_is_right, trainable

FOCUS, SHOP, FACEOFF, OVER = "focus", "shop", "faceoff", "over"
#: Between two rounds of a room (and before its first): the room's clock opens the next one.
WAITING = "waiting"
BRIGHT = "bright"
STOP_REASONS = ("midnight", "deadline", "expired", "forfeit")
#: The expiry moves forward by this step, so an ExpiryMoved is added at most once an hour.
EXPIRY_STEP_MS = paris.HOUR_MS
MAX_VOID_TEXT = 500


__all__ = [
    "BRIGHT",
    "FACEOFF",
    "FOCUS",
    "OVER",
    "SHOP",
    "WAITING",
    "AnswerFocus",
    "AnswerTraining",
    "Arrange",
    "Arranged",
    "Bought",
    "Buy",
    "CombatFought",
    "Command",
    "Context",
    "EndShop",
    "Event",
    "ExpiryMoved",
    "Fight",
    "FocusAnswered",
    "GameEnded",
    "GameStarted",
    "GameState",
    "GameVoided",
    "Move",
    "Moved",
    "OpenRound",
    "QuestionShown",
    "QuestionTimeout",
    "Rejection",
    "Reroll",
    "Rerolled",
    "RoundStarted",
    "RoundsMissed",
    "Sell",
    "ShopEnded",
    "ShopOpened",
    "ShopTimeout",
    "Sold",
    "StartFocus",
    "StartGame",
    "Stop",
    "Train",
    "TrainingAnswered",
    "TrainingShown",
    "TrainingTimeout",
    "Void",
    "apply",
    "combat_of",
    "decide",
    "execute",
    "replay",
    "tutorial_predict",
]


# -- state ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameState:
    mode: str
    player_seed: int
    shop_seed: int
    room_rounds: int | None
    settings: DigitsSettings
    catalogue_version: str
    round_no: int = 1
    phase: str = FOCUS
    status: str = PLAYING
    wins: int = 0
    losses: int = 0
    draws: int = 0
    margin: int = 0
    focus_right_total: int = 0
    # Focus
    question: Question | None = None
    question_index: int = 0
    question_deadline_ms: int | None = None
    right: int = 0
    # shop
    carried: int = 0
    gold: int = 0
    offers: tuple[str | None, ...] = ()
    bright: str | None = None
    reroll: int = 0
    training_used: bool = False
    training_cell: int | None = None
    training_question: Question | None = None
    training_deadline_ms: int | None = None
    slate: Slate = EMPTY_SLATE
    # Face-off
    saved: Slate | None = None
    opponent: Slate | None = None
    arrangement: int = IDENTITY
    faceoff_deadline_ms: int | None = None
    # clocks recorded in the log, so the services can re-arm their timers from it
    ends_ms: int | None = None  # daily: the next Paris midnight; duel: its deadline
    shop_deadline_ms: int | None = None  # a room's shop clock for the round
    expires_ms: int | None = None
    voided: bool = False

    @property
    def rounds_played(self) -> int:
        return self.wins + self.losses + self.draws


# -- decide ---------------------------------------------------------------------------------


def decide(state: GameState | None, command: Command, context: Context) -> list[Event] | Rejection:
    """The events `command` causes in `state`, or the Rejection that leaves it unchanged."""
    try:
        if isinstance(command, StartGame):
            return _start(state, command, context)
        if state is None:
            return Rejection("no_game")
        if isinstance(command, Void):
            return _void(state, command)
        if state.phase == OVER:
            return Rejection("game_over")
        if isinstance(command, Stop):
            return _stop(state, command, context)
        handler = _HANDLERS.get(type(command))
        if handler is None:
            return Rejection("unknown_command")
        if type(command) in _SHOP_ORDERS and _shop_clock_over(state, context.now_ms):
            return Rejection("shop_over")
        decided = handler(state, command, context)
        if isinstance(decided, list) and decided and type(command) in _ACTIONS:
            decided.extend(_rearm_expiry(state, decided, context.now_ms))
        return decided
    except SlateError as exc:
        return Rejection(exc.code)


def _expiry_ms(settings: DigitsSettings) -> int:
    return settings.expiry_days * paris.DAY_MS


def _rearm_expiry(state: GameState, decided: list[Event], now_ms: int) -> list[Event]:
    """A player action keeps the game alive: the expiry moves to an hour past `expiry_days` from
    now whenever it would otherwise fall less than `expiry_days` after this action."""
    if any(isinstance(event, GameEnded) for event in decided):
        return []
    due = now_ms + _expiry_ms(state.settings)
    if state.expires_ms is not None and state.expires_ms >= due:
        return []
    return [ExpiryMoved(due + EXPIRY_STEP_MS)]


def _start(state: GameState | None, cmd: StartGame, ctx: Context) -> list[Event] | Rejection:
    if state is not None:
        return Rejection("game_exists")
    if cmd.mode not in MODES:
        return Rejection("unknown_mode")
    s = cmd.settings
    room_rounds = cmd.room_rounds
    if cmd.mode == "room":
        room_rounds = s.room_rounds_default if room_rounds is None else room_rounds
        if room_rounds not in s.room_round_choices:
            return Rejection("bad_room_rounds")
        if not _positive(s.room_shop_seconds) or not _positive(s.faceoff_seconds):
            return Rejection("bad_room_clock")
        if not isinstance(cmd.missed_rounds, int) or not 0 <= cmd.missed_rounds < room_rounds:
            return Rejection("bad_missed_rounds")
    elif room_rounds is not None:
        return Rejection("bad_room_rounds")
    elif cmd.missed_rounds != 0:
        return Rejection("bad_missed_rounds")
    ends_ms = cmd.ends_ms
    if cmd.mode == "duel":
        if not isinstance(ends_ms, int) or isinstance(ends_ms, bool) or ends_ms <= ctx.now_ms:
            return Rejection("bad_deadline")
    elif ends_ms is not None:
        return Rejection("bad_deadline")
    else:
        ends_ms = paris.next_midnight_ms(ctx.now_ms) if cmd.mode == "daily" else None
    catalogue = load(s.catalogue_version)
    events: list[Event] = [
        GameStarted(
            cmd.mode,
            cmd.player_seed,
            cmd.shop_seed,
            room_rounds,
            s,
            catalogue.version,
            ends_ms,
        )
    ]
    if cmd.missed_rounds:
        events.append(RoundsMissed(cmd.missed_rounds))
    events.append(ExpiryMoved(ctx.now_ms + _expiry_ms(s) + EXPIRY_STEP_MS))
    return events


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _void(state: GameState, cmd: Void) -> list[Event] | Rejection:
    texts = (cmd.by, cmd.why)
    if not all(isinstance(t, str) and 0 < len(t.strip()) <= MAX_VOID_TEXT for t in texts):
        return Rejection("bad_void")
    if state.voided:
        return []  # already void: a second void changes nothing
    return [GameVoided("operator", cmd.by, cmd.why)]


def _stop(state: GameState, cmd: Stop, ctx: Context) -> list[Event] | Rejection:
    if cmd.reason not in STOP_REASONS:
        return Rejection("bad_stop_reason")
    if cmd.reason == "forfeit":
        if state.mode == "room":
            return Rejection("room_cannot_forfeit")
        return [GameEnded("forfeited", "forfeit")]
    wanted = {"midnight": "daily", "deadline": "duel"}.get(cmd.reason)
    if wanted is not None and state.mode != wanted:
        return Rejection("stop_not_for_mode")
    due = state.expires_ms if cmd.reason == "expired" else state.ends_ms
    if due is None or ctx.now_ms < due:
        return []  # not due: an early or stale timer changes nothing
    if cmd.reason != "expired" and state.phase == FACEOFF:
        # The Face-off open at midnight or at the duel's deadline is fought as it stands: the
        # end-of-shop order, or the last order accepted before the clock ran out.
        fought, status = _combat(state)
        return [fought, GameEnded(CLOSED if status == PLAYING else status, cmd.reason)]
    return [GameEnded(CLOSED, cmd.reason)]


def _shop_clock_over(state: GameState, now_ms: int) -> bool:
    return (
        state.phase in (FOCUS, SHOP)
        and state.shop_deadline_ms is not None
        and now_ms > state.shop_deadline_ms
    )


def _open_round(state: GameState, cmd: OpenRound, ctx: Context) -> list[Event] | Rejection:
    if state.mode != "room":
        return Rejection("not_a_room")
    if not isinstance(cmd.round_no, int) or not isinstance(cmd.opened_ms, int):
        return Rejection("bad_round")
    if cmd.opened_ms > ctx.now_ms:
        return Rejection("bad_open_time")
    if cmd.round_no <= state.round_no:
        return []  # stale: that round already opened
    if cmd.round_no != state.round_no + 1:
        return Rejection("bad_round")
    opened = RoundStarted(cmd.round_no, cmd.opened_ms + state.settings.room_shop_seconds * 1000)
    if state.phase == WAITING:
        return [opened]
    if state.phase == FACEOFF:
        # The previous Face-off's timer has not come yet: fight it first, as it stands.
        fought, status = _combat(state)
        if status != PLAYING:
            return [fought, GameEnded(status, "record")]
        return [fought, opened]
    return Rejection("round_open")  # Focus or shop: the round's ShopTimeout comes first


def _shop_timeout(state: GameState, cmd: ShopTimeout, ctx: Context) -> list[Event] | Rejection:
    if (
        state.phase not in (FOCUS, SHOP)
        or cmd.round_no != state.round_no
        or state.shop_deadline_ms is None
        or ctx.now_ms < state.shop_deadline_ms
    ):
        return []  # stale or early
    if ctx.opponent is None:
        return Rejection("no_opponent")
    events: list[Event] = []
    if state.phase == FOCUS:
        events += _close_focus(state)
    elif state.training_cell is not None:
        events += _training_result(state, None, ctx.now_ms)
    shop = _after(state, events)
    return [*events, _shop_ended(shop, ctx)]


def _after(state: GameState, events: list[Event]) -> GameState:
    for event in events:
        state = apply(state, event)
    return state


def _question_for(state: GameState, index: int) -> Question:
    stage = state.settings.stage_for(state.round_no)
    qs = focus_questions(state.player_seed, state.round_no, stage, index + 1)
    return qs[index]


def _show(state: GameState, index: int, now_ms: int) -> QuestionShown:
    question = _question_for(state, index)
    seconds = state.settings.seconds_for(question.stage)
    return QuestionShown(state.round_no, index, question, now_ms + seconds * 1000)


def _start_focus(state: GameState, cmd: StartFocus, ctx: Context) -> list[Event] | Rejection:
    if state.phase != FOCUS:
        return Rejection("not_in_focus")
    if state.question is not None:
        return Rejection("focus_started")
    return [_show(state, 0, ctx.now_ms)]


def _too_fast(
    state: GameState, right: bool, now_ms: int, deadline_ms: int, seconds: int, what: str
) -> list[Event]:
    """A right answer sooner than a person can give one voids the game (once). Only right
    answers count: a fast wrong one (a double click landing on the next page) gains nothing."""
    elapsed = now_ms - (deadline_ms - seconds * 1000)
    if not right or state.voided or elapsed >= state.settings.human_answer_ms:
        return []
    return [GameVoided("too_fast", "engine", f"{what} answered right in {elapsed} ms")]


def _focus_step(state: GameState, answer: int | None, now_ms: int, timed_out: bool) -> list[Event]:
    assert state.question is not None and state.question_deadline_ms is not None
    late = now_ms > state.question_deadline_ms
    right = answer is not None and not late and answer == state.question.answer
    events: list[Event] = [
        FocusAnswered(state.round_no, state.question_index, answer, right, late and not timed_out)
    ]
    seconds = state.settings.seconds_for(state.question.stage)
    where = f"round {state.round_no} Focus question {state.question_index + 1}"
    events += _too_fast(state, right, now_ms, state.question_deadline_ms, seconds, where)
    total = state.right + right
    nxt = state.question_index + 1
    if nxt < state.settings.focus_questions:
        # The next page appears when this one is left: at the answer, or at the deadline.
        shown_at = min(now_ms, state.question_deadline_ms) if timed_out else now_ms
        events.append(_show(state, nxt, shown_at))
    else:
        events.append(_open_shop(state, total))
    return events


def _open_shop(state: GameState, right: int) -> ShopOpened:
    s = state.settings
    perfect = right == s.focus_questions
    catalogue = load(state.catalogue_version)
    draw = offers(state.shop_seed, state.round_no, 0, s, catalogue)
    bright = bright_offer(state.shop_seed, state.round_no, s, catalogue) if perfect else None
    return ShopOpened(state.round_no, right, income(right, state.carried, s), draw, bright)


def _answer_focus(state: GameState, cmd: AnswerFocus, ctx: Context) -> list[Event] | Rejection:
    if state.phase != FOCUS or state.question is None:
        return Rejection("no_question")
    if not isinstance(cmd.answer, int) or not 1 <= cmd.answer <= 16:
        return Rejection("bad_answer")
    return _focus_step(state, cmd.answer, ctx.now_ms, timed_out=False)


def _question_timeout(
    state: GameState, cmd: QuestionTimeout, ctx: Context
) -> list[Event] | Rejection:
    stale = (
        state.phase != FOCUS
        or state.question is None
        or state.question_deadline_ms is None
        or cmd.round_no != state.round_no
        or cmd.index != state.question_index
        or ctx.now_ms < state.question_deadline_ms
    )
    if stale:
        return []
    return _focus_step(state, None, ctx.now_ms, timed_out=True)


def _close_focus(state: GameState) -> list[Event]:
    """The room's shop clock ran out during the Focus: every question not answered yet is
    wrong (a Focus never started gives 0 right), and the shop opens to be ended at once."""
    events: list[Event] = []
    first = state.question_index if state.question is not None else 0
    for index in range(first, state.settings.focus_questions):
        events.append(FocusAnswered(state.round_no, index, None, right=False, late=False))
    events.append(_open_shop(state, state.right))
    return events


def _in_shop(state: GameState) -> Rejection | None:
    if state.phase != SHOP:
        return Rejection("not_in_shop")
    if state.training_cell is not None:
        return Rejection("training_open")
    return None


def _buy(state: GameState, cmd: Buy, ctx: Context) -> list[Event] | Rejection:
    if (rejected := _in_shop(state)) is not None:
        return rejected
    if cmd.offer == BRIGHT:
        kind_name = state.bright
    elif isinstance(cmd.offer, int) and 0 <= cmd.offer < len(state.offers):
        kind_name = state.offers[cmd.offer]
    else:
        return Rejection("bad_offer")
    if kind_name is None:
        return Rejection("offer_taken")
    kind = load(state.catalogue_version)[kind_name]
    cost = price(kind.tier, state.settings)
    if slates.is_full(state.slate):
        return Rejection("slate_full")
    if cost > state.gold:
        return Rejection("not_enough_gold")
    cell = cmd.cell if cmd.cell is not None else slates.default_cell(state.slate, kind.support)
    slates.place(state.slate, Digit(kind_name), cell)  # raises the precise SlateError
    return [Bought(cmd.offer, kind_name, cell, cost)]


def _sell(state: GameState, cmd: Sell, ctx: Context) -> list[Event] | Rejection:
    if (rejected := _in_shop(state)) is not None:
        return rejected
    _, digit = slates.remove(state.slate, cmd.cell)
    tier = load(state.catalogue_version)[digit.kind].tier
    return [Sold(cmd.cell, digit.kind, sell_value(tier, state.settings))]


def _move(state: GameState, cmd: Move, ctx: Context) -> list[Event] | Rejection:
    if (rejected := _in_shop(state)) is not None:
        return rejected
    slates.move(state.slate, cmd.src, cmd.dst)
    return [Moved(cmd.src, cmd.dst)]


def _reroll(state: GameState, cmd: Reroll, ctx: Context) -> list[Event] | Rejection:
    if (rejected := _in_shop(state)) is not None:
        return rejected
    cost = state.settings.reroll_cost
    if cost > state.gold:
        return Rejection("not_enough_gold")
    n = state.reroll + 1
    catalogue = load(state.catalogue_version)
    return [
        Rerolled(n, offers(state.shop_seed, state.round_no, n, state.settings, catalogue), cost)
    ]


def _train(state: GameState, cmd: Train, ctx: Context) -> list[Event] | Rejection:
    if (rejected := _in_shop(state)) is not None:
        return rejected
    if state.training_used:
        return Rejection("training_used")
    trainable(state.slate, cmd.cell)  # raises the precise SlateError
    stage = state.settings.training_stage_for(state.round_no)
    question = training_question(state.player_seed, state.round_no, stage)
    deadline = ctx.now_ms + state.settings.training_seconds * 1000
    return [TrainingShown(cmd.cell, question, deadline)]


def _training_result(state: GameState, answer: int | None, now_ms: int) -> list[Event]:
    assert state.training_cell is not None and state.training_question is not None
    assert state.training_deadline_ms is not None
    digit = state.slate[state.training_cell - 1]
    assert digit is not None
    right = answer_is_right(
        answer, state.training_question.answer, now_ms, state.training_deadline_ms
    )
    level = digit.level + 1 if right else digit.level
    seconds = state.settings.training_seconds
    where = f"round {state.round_no} Training"
    return [
        TrainingAnswered(state.training_cell, answer, right, level),
        *_too_fast(state, right, now_ms, state.training_deadline_ms, seconds, where),
    ]


def _answer_training(
    state: GameState, cmd: AnswerTraining, ctx: Context
) -> list[Event] | Rejection:
    if state.phase != SHOP or state.training_cell is None:
        return Rejection("no_training")
    if not isinstance(cmd.answer, int) or not 1 <= cmd.answer <= 16:
        return Rejection("bad_answer")
    return _training_result(state, cmd.answer, ctx.now_ms)


def _training_timeout(
    state: GameState, cmd: TrainingTimeout, ctx: Context
) -> list[Event] | Rejection:
    if (
        state.phase != SHOP
        or state.training_cell is None
        or state.training_deadline_ms is None
        or cmd.round_no != state.round_no
        or ctx.now_ms < state.training_deadline_ms
    ):
        return []
    return _training_result(state, None, ctx.now_ms)


def _end_shop(state: GameState, cmd: EndShop, ctx: Context) -> list[Event] | Rejection:
    if (rejected := _in_shop(state)) is not None:
        return rejected
    if ctx.opponent is None:
        return Rejection("no_opponent")
    return [_shop_ended(state, ctx)]


def _shop_ended(state: GameState, ctx: Context) -> ShopEnded:
    assert ctx.opponent is not None
    slates.check_slate(ctx.opponent, load(state.catalogue_version))
    seconds = state.settings.faceoff_seconds if state.mode != "casual" else None
    deadline = None if seconds is None else ctx.now_ms + seconds * 1000
    return ShopEnded(
        state.slate,
        reserve(state.gold, state.settings),
        ctx.opponent,
        ctx.opponent_info,
        deadline,
    )


def _in_faceoff(state: GameState, ctx: Context) -> Rejection | None:
    if state.phase != FACEOFF:
        return Rejection("not_in_faceoff")
    return None


def _arrange(state: GameState, cmd: Arrange, ctx: Context) -> list[Event] | Rejection:
    if (rejected := _in_faceoff(state, ctx)) is not None:
        return rejected
    if state.faceoff_deadline_ms is not None and ctx.now_ms > state.faceoff_deadline_ms:
        return Rejection("faceoff_over")
    if not isinstance(cmd.arrangement, int) or not 0 <= cmd.arrangement < ARRANGEMENT_COUNT:
        return Rejection("bad_arrangement")
    return [Arranged(cmd.arrangement)]


def _fight(state: GameState, cmd: Fight, ctx: Context) -> list[Event] | Rejection:
    if (rejected := _in_faceoff(state, ctx)) is not None:
        return rejected
    fought, status = _combat(state)
    if status != PLAYING:
        return [fought, GameEnded(status, "record")]
    if state.mode == "room":
        return [fought]  # the room's clock opens the next round (OpenRound)
    return [fought, RoundStarted(state.round_no + 1)]


def _combat(state: GameState) -> tuple[CombatFought, str]:
    """The Face-off's combat in the arrangement accepted so far, and the game's status after."""
    result = combat_of(state)
    fought = CombatFought(
        state.round_no, state.arrangement, result.result, result.margin, result.exchanges
    )
    wins = state.wins + (result.result == "win")
    losses = state.losses + (result.result == "loss")
    played = state.rounds_played + 1
    status = game_status(state.mode, wins, losses, played, state.room_rounds, state.settings)
    if status == PLAYING and played >= last_round(state.mode, state.room_rounds, state.settings):
        status = CLOSED
    return fought, status


def combat_of(state: GameState, report: bool = False) -> CombatResult:
    """The combat of the current Face-off, in the arrangement chosen so far (with its report)."""
    assert state.saved is not None and state.opponent is not None
    rules = compile_rules(load(state.catalogue_version))
    arranged = arrange(state.saved, state.arrangement)
    return fight(
        arranged, state.opponent, rules, report=report, max_exchanges=state.settings.max_exchanges
    )


def tutorial_predict(state: GameState, arrangement: int) -> CombatResult | Rejection:
    """The tutorial's "Predict": the outcome of `arrangement` against the shown army. A query,
    not a command (it changes nothing); no other mode offers it."""
    if state.mode != "tutorial":
        return Rejection("predict_tutorial_only")
    if state.phase != FACEOFF or state.saved is None or state.opponent is None:
        return Rejection("not_in_faceoff")
    if not isinstance(arrangement, int) or not 0 <= arrangement < ARRANGEMENT_COUNT:
        return Rejection("bad_arrangement")
    return combat_of(replace(state, arrangement=arrangement))


_Handler = Callable[[GameState, Any, Context], list[Event] | Rejection]
_HANDLERS: dict[type, _Handler] = {
    OpenRound: _open_round,
    StartFocus: _start_focus,
    AnswerFocus: _answer_focus,
    QuestionTimeout: _question_timeout,
    ShopTimeout: _shop_timeout,
    Buy: _buy,
    Sell: _sell,
    Move: _move,
    Reroll: _reroll,
    Train: _train,
    AnswerTraining: _answer_training,
    TrainingTimeout: _training_timeout,
    EndShop: _end_shop,
    Arrange: _arrange,
    Fight: _fight,
}
#: The player's own orders in the Focus and the shop: refused once a room's shop clock is over.
_SHOP_ORDERS = frozenset(
    {StartFocus, AnswerFocus, Buy, Sell, Move, Reroll, Train, AnswerTraining, EndShop}
)
#: Player actions: each keeps the game from expiring (the timers and the room's clock do not).
_ACTIONS = _SHOP_ORDERS | {Arrange, Fight}


# -- apply ----------------------------------------------------------------------------------


def apply(state: GameState | None, event: Event) -> GameState:
    """The state after `event` (events are facts: they are never rejected here)."""
    if isinstance(event, GameStarted):
        started = GameState(
            event.mode,
            event.player_seed,
            event.shop_seed,
            event.room_rounds,
            event.settings,
            event.catalogue_version,
            ends_ms=event.ends_ms,
        )
        # A room waits for its clock to open round 1; round_no counts the rounds behind it.
        return replace(started, round_no=0, phase=WAITING) if event.mode == "room" else started
    assert state is not None, "the first event of a game is GameStarted"
    if isinstance(event, RoundsMissed):
        return replace(state, round_no=event.count, losses=state.losses + event.count)
    if isinstance(event, ExpiryMoved):
        return replace(state, expires_ms=event.expires_ms)
    if isinstance(event, GameVoided):
        return replace(state, voided=True)
    if isinstance(event, QuestionShown):
        return replace(
            state,
            question=event.question,
            question_index=event.index,
            question_deadline_ms=event.deadline_ms,
        )
    if isinstance(event, FocusAnswered):
        return replace(state, right=state.right + event.right)
    if isinstance(event, ShopOpened):
        return replace(
            state,
            phase=SHOP,
            question=None,
            question_deadline_ms=None,
            right=event.right,
            focus_right_total=state.focus_right_total + event.right,
            gold=event.gold,
            offers=event.offers,
            bright=event.bright,
            reroll=0,
            training_used=False,
        )
    if isinstance(event, Bought):
        slate = slates.place(state.slate, Digit(event.kind), event.cell)
        if event.offer == BRIGHT:
            return replace(state, slate=slate, gold=state.gold - event.cost, bright=None)
        taken = list(state.offers)
        assert isinstance(event.offer, int)
        taken[event.offer] = None
        return replace(state, slate=slate, gold=state.gold - event.cost, offers=tuple(taken))
    if isinstance(event, Sold):
        slate, _ = slates.remove(state.slate, event.cell)
        return replace(state, slate=slate, gold=state.gold + event.refund)
    if isinstance(event, Moved):
        return replace(state, slate=slates.move(state.slate, event.src, event.dst))
    if isinstance(event, Rerolled):
        return replace(
            state, offers=event.offers, reroll=event.reroll, gold=state.gold - event.cost
        )
    if isinstance(event, TrainingShown):
        return replace(
            state,
            training_cell=event.cell,
            training_question=event.question,
            training_deadline_ms=event.deadline_ms,
            training_used=True,
        )
    if isinstance(event, TrainingAnswered):
        slate = slates.set_level(state.slate, event.cell, event.level)
        return replace(
            state,
            slate=slate,
            training_cell=None,
            training_question=None,
            training_deadline_ms=None,
        )
    if isinstance(event, ShopEnded):
        return replace(
            state,
            phase=FACEOFF,
            saved=event.saved,
            carried=event.reserve,
            gold=0,
            opponent=event.opponent,
            arrangement=IDENTITY,
            faceoff_deadline_ms=event.faceoff_deadline_ms,
        )
    if isinstance(event, Arranged):
        return replace(state, arrangement=event.arrangement)
    if isinstance(event, CombatFought):
        return replace(
            state,
            phase=WAITING,
            wins=state.wins + (event.result == "win"),
            losses=state.losses + (event.result == "loss"),
            draws=state.draws + (event.result == "draw"),
            margin=state.margin + event.margin,
        )
    if isinstance(event, RoundStarted):
        return replace(
            state,
            round_no=event.round_no,
            shop_deadline_ms=event.shop_deadline_ms,
            phase=FOCUS,
            right=0,
            question=None,
            question_index=0,
            question_deadline_ms=None,
            offers=(),
            bright=None,
            reroll=0,
            saved=None,
            opponent=None,
            arrangement=IDENTITY,
            faceoff_deadline_ms=None,
        )
    if isinstance(event, GameEnded):
        return replace(state, phase=OVER, status=event.status)
    raise TypeError(f"not a Digits event: {event!r}")


def replay(events: Iterable[Event]) -> GameState:
    """The state after folding `events` from the start of a game."""
    state: GameState | None = None
    for event in events:
        state = apply(state, event)
    if state is None:
        raise ValueError("no events")
    return state


def execute(
    state: GameState | None, command: Command, context: Context
) -> tuple[GameState | None, list[Event] | Rejection]:
    """decide then apply: the new state and what was decided (the state is unchanged on
    a Rejection)."""
    decided = decide(state, command, context)
    if isinstance(decided, Rejection):
        return state, decided
    for event in decided:
        state = apply(state, event)
    return state, decided
