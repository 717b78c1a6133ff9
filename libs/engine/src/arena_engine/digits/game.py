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

from . import slate as slates
from .catalogue import load
from .combat import CombatResult, compile_rules, fight
from .commands import (
    AnswerFocus,
    AnswerTraining,
    Arrange,
    Buy,
    CloseFocus,
    Command,
    Context,
    EndShop,
    Fight,
    Move,
    QuestionTimeout,
    Rejection,
    Reroll,
    Sell,
    StartFocus,
    StartGame,
    Stop,
    Train,
    TrainingTimeout,
)
from .economy import income, price, reserve, sell_value
from .events import (
    Arranged,
    Bought,
    CombatFought,
    Event,
    FocusAnswered,
    GameEnded,
    GameStarted,
    Moved,
    QuestionShown,
    Rerolled,
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
from .status import MODES, PLAYING, game_status, last_round
from .training import answer_is_right, trainable

FOCUS, SHOP, FACEOFF, OVER = "focus", "shop", "faceoff", "over"
BRIGHT = "bright"


__all__ = [
    "BRIGHT",
    "FACEOFF",
    "FOCUS",
    "OVER",
    "SHOP",
    "AnswerFocus",
    "AnswerTraining",
    "Arrange",
    "Arranged",
    "Bought",
    "Buy",
    "CloseFocus",
    "CombatFought",
    "Command",
    "Context",
    "EndShop",
    "Event",
    "Fight",
    "FocusAnswered",
    "GameEnded",
    "GameStarted",
    "GameState",
    "Move",
    "Moved",
    "QuestionShown",
    "QuestionTimeout",
    "Rejection",
    "Reroll",
    "Rerolled",
    "RoundStarted",
    "Sell",
    "ShopEnded",
    "ShopOpened",
    "Sold",
    "StartFocus",
    "StartGame",
    "Stop",
    "Train",
    "TrainingAnswered",
    "TrainingShown",
    "TrainingTimeout",
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

    @property
    def rounds_played(self) -> int:
        return self.wins + self.losses + self.draws


# -- decide ---------------------------------------------------------------------------------


def decide(state: GameState | None, command: Command, context: Context) -> list[Event] | Rejection:
    """The events `command` causes in `state`, or the Rejection that leaves it unchanged."""
    try:
        if isinstance(command, StartGame):
            return _start(state, command)
        if state is None:
            return Rejection("no_game")
        if state.phase == OVER:
            return Rejection("game_over")
        if isinstance(command, Stop):
            return _stop(state, command)
        handler = _HANDLERS.get(type(command))
        if handler is None:
            return Rejection("unknown_command")
        return handler(state, command, context)
    except SlateError as exc:
        return Rejection(exc.code)


def _start(state: GameState | None, cmd: StartGame) -> list[Event] | Rejection:
    if state is not None:
        return Rejection("game_exists")
    if cmd.mode not in MODES:
        return Rejection("unknown_mode")
    if cmd.mode == "room" and cmd.room_rounds not in (6, 8, 10, 12):
        return Rejection("bad_room_rounds")
    catalogue = load(cmd.settings.catalogue_version)
    return [
        GameStarted(
            cmd.mode,
            cmd.player_seed,
            cmd.shop_seed,
            cmd.room_rounds,
            cmd.settings,
            catalogue.version,
        )
    ]


def _stop(state: GameState, cmd: Stop) -> list[Event] | Rejection:
    if cmd.reason not in ("midnight", "deadline", "expired", "forfeit"):
        return Rejection("bad_stop_reason")
    if cmd.reason == "forfeit" and state.mode == "room":
        return Rejection("room_cannot_forfeit")
    status = "forfeited" if cmd.reason == "forfeit" else "closed"
    return [GameEnded(status, cmd.reason)]


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


def _focus_step(state: GameState, answer: int | None, now_ms: int, timed_out: bool) -> list[Event]:
    assert state.question is not None and state.question_deadline_ms is not None
    late = now_ms > state.question_deadline_ms
    right = answer is not None and not late and answer == state.question.answer
    events: list[Event] = [
        FocusAnswered(state.round_no, state.question_index, answer, right, late and not timed_out)
    ]
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


def _close_focus(state: GameState, cmd: CloseFocus, ctx: Context) -> list[Event] | Rejection:
    if state.phase != FOCUS or cmd.round_no != state.round_no:
        return []  # stale: the Focus of that round is already over
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
    return [TrainingAnswered(state.training_cell, answer, right, level)]


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
    slates.check_slate(ctx.opponent, load(state.catalogue_version))
    seconds = state.settings.faceoff_seconds if state.mode != "casual" else None
    deadline = None if seconds is None else ctx.now_ms + seconds * 1000
    return [
        ShopEnded(
            state.slate,
            reserve(state.gold, state.settings),
            ctx.opponent,
            ctx.opponent_info,
            deadline,
        )
    ]


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
    result = combat_of(state)
    fought = CombatFought(
        state.round_no, state.arrangement, result.result, result.margin, result.exchanges
    )
    wins = state.wins + (result.result == "win")
    losses = state.losses + (result.result == "loss")
    played = state.rounds_played + 1
    status = game_status(state.mode, wins, losses, played, state.room_rounds, state.settings)
    if status != PLAYING:
        return [fought, GameEnded(status, "record")]
    if played >= last_round(state.mode, state.room_rounds, state.settings):
        return [fought, GameEnded("closed", "record")]
    return [fought, RoundStarted(state.round_no + 1)]


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
    StartFocus: _start_focus,
    AnswerFocus: _answer_focus,
    QuestionTimeout: _question_timeout,
    CloseFocus: _close_focus,
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


# -- apply ----------------------------------------------------------------------------------


def apply(state: GameState | None, event: Event) -> GameState:
    """The state after `event` (events are facts: they are never rejected here)."""
    if isinstance(event, GameStarted):
        return GameState(
            event.mode,
            event.player_seed,
            event.shop_seed,
            event.room_rounds,
            event.settings,
            event.catalogue_version,
        )
    assert state is not None, "the first event of a game is GameStarted"
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
            wins=state.wins + (event.result == "win"),
            losses=state.losses + (event.result == "loss"),
            draws=state.draws + (event.result == "draw"),
            margin=state.margin + event.margin,
        )
    if isinstance(event, RoundStarted):
        return replace(
            state,
            round_no=event.round_no,
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
