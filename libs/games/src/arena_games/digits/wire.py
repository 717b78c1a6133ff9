"""Digits on the wire: its protobuf messages, their registration, and converters.

The messages are in proto/arena/games/digits/v1/digits.proto (package ``arena.games.digits.v1``);
their generated code is :mod:`arena_games.proto_gen`. The converters turn the engine's frozen
dataclasses (:mod:`arena_engine.digits`) into messages and back, exactly, so a logged event folds
to the state the engine decided and compares equal with the one it decides again.

The engine's ``GameEnded`` travels as ``DigitsEnded``, which adds the record of that moment (what
a reader of MatchEnded wants without folding the game); the engine's ``ShopEnded`` carries the
army whole (``Army``) where the engine keeps only its slate.
"""

from __future__ import annotations

from typing import Final

from arena_engine.digits import events as ev
from arena_engine.digits.questions import Question
from arena_engine.digits.slate import CELLS, Digit, Slate
from arena_runtime.envelope import Schemas
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.schemas import match as match_schemas
from google.protobuf.message import Message

from arena_games.contract import Result, SeatResult, unpack
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

GAME = "digits"
SEATS = 1
BRIGHT: Final = "bright"

#: Commands the player's seat sends.
COMMANDS: tuple[type[Message], ...] = (
    pb.StartFocus,
    pb.AnswerFocus,
    pb.Buy,
    pb.Sell,
    pb.MoveDigit,
    pb.Reroll,
    pb.Train,
    pb.AnswerTraining,
    pb.EndShop,
    pb.Arrange,
    pb.Fight,
    pb.Predict,
)
#: Commands the match service sends itself when a deadline is due.
TIMERS: tuple[type[Message], ...] = (
    pb.QuestionDue,
    pb.TrainingDue,
    pb.ShopDue,
    pb.FaceoffDue,
    pb.ArmyDue,
    pb.RoundDue,
    pb.StopDue,
)
#: Commands other services send (seat 0): the army drawn for a round, an operator's void.
SERVICE_COMMANDS: tuple[type[Message], ...] = (pb.DrawArmy, pb.VoidGame)
#: The ghost store's commands and events (matchmaking's ``ghosts-digits`` stream).
STORE: tuple[type[Message], ...] = (
    pb.SaveGhost,
    pb.SeatGhostRoom,
    pb.DrawDuel,
    pb.DuelArmiesDrawn,
    pb.SetGhostSharing,
    pb.WithdrawGhosts,
    pb.GhostFiled,
    pb.GhostSharingSet,
    pb.GhostsWithdrawn,
    pb.ArmyDrawn,
    pb.GhostRoomSeated,
)
#: The game's events; DigitsEnded, the final one, is last.
EVENTS: tuple[type[Message], ...] = (
    pb.DigitsStarted,
    pb.RoundsMissed,
    pb.ExpiryMoved,
    pb.QuestionShown,
    pb.FocusAnswered,
    pb.ShopOpened,
    pb.Bought,
    pb.Sold,
    pb.Moved,
    pb.Rerolled,
    pb.TrainingShown,
    pb.TrainingAnswered,
    pb.ShopClosing,
    pb.ShopEnded,
    pb.Arranged,
    pb.Predicted,
    pb.CombatFought,
    pb.RoundStarted,
    pb.GameVoided,
    pb.DigitsEnded,
)


def type_name(message: type[Message]) -> str:
    return str(message.DESCRIPTOR.full_name)


# -- values -----------------------------------------------------------------------------------


def slate_to_proto(slate: Slate) -> pb.Slate:
    return pb.Slate(
        cells=[pb.Cell() if d is None else pb.Cell(kind=d.kind, level=d.level) for d in slate]
    )


def slate_of(message: pb.Slate) -> Slate:
    """The engine's slate (8 cells; a message with another count raises ValueError)."""
    if len(message.cells) != CELLS:
        raise ValueError(f"a slate has {CELLS} cells, not {len(message.cells)}")
    return tuple(Digit(c.kind, c.level) if c.kind else None for c in message.cells)


def question_to_proto(question: Question) -> pb.Question:
    return pb.Question(stage=question.stage, text=question.text, answer=question.answer)


def question_of(message: pb.Question) -> Question:
    return Question(message.stage, message.text, message.answer)


def _opt(message: Message, name: str) -> int | None:
    value: int | None = getattr(message, name) if message.HasField(name) else None
    return value


# -- events -----------------------------------------------------------------------------------


def event_to_proto(event: ev.Event, army: pb.Army | None = None) -> Message:
    """The message of one engine event. ``ShopEnded`` needs the ``army`` it was fought with;
    ``GameEnded`` becomes a DigitsEnded with no record yet (:func:`ended`)."""
    if isinstance(event, ev.GameStarted):
        raise TypeError("DigitsStarted is built by the rules (it records the settings message)")
    if isinstance(event, ev.RoundsMissed):
        return pb.RoundsMissed(count=event.count)
    if isinstance(event, ev.ExpiryMoved):
        return pb.ExpiryMoved(expires_ms=event.expires_ms)
    if isinstance(event, ev.QuestionShown):
        return pb.QuestionShown(
            round=event.round_no,
            index=event.index,
            question=question_to_proto(event.question),
            deadline_ms=event.deadline_ms,
        )
    if isinstance(event, ev.FocusAnswered):
        answered = pb.FocusAnswered(
            round=event.round_no, index=event.index, right=event.right, late=event.late
        )
        if event.answer is not None:
            answered.answer = event.answer
        return answered
    if isinstance(event, ev.ShopOpened):
        return pb.ShopOpened(
            round=event.round_no,
            right=event.right,
            gold=event.gold,
            offers=list(event.offers),
            bright=event.bright or "",
        )
    if isinstance(event, ev.Bought):
        bright = event.offer == BRIGHT
        return pb.Bought(
            offer=0 if bright else int(event.offer),
            bright=bright,
            kind=event.kind,
            cell=event.cell,
            cost=event.cost,
        )
    if isinstance(event, ev.Sold):
        return pb.Sold(cell=event.cell, kind=event.kind, refund=event.refund)
    if isinstance(event, ev.Moved):
        return pb.Moved(src=event.src, dst=event.dst)
    if isinstance(event, ev.Rerolled):
        return pb.Rerolled(reroll=event.reroll, offers=list(event.offers), cost=event.cost)
    if isinstance(event, ev.TrainingShown):
        return pb.TrainingShown(
            cell=event.cell,
            question=question_to_proto(event.question),
            deadline_ms=event.deadline_ms,
        )
    if isinstance(event, ev.TrainingAnswered):
        answered_t = pb.TrainingAnswered(cell=event.cell, right=event.right, level=event.level)
        if event.answer is not None:
            answered_t.answer = event.answer
        return answered_t
    if isinstance(event, ev.ShopEnded):
        if army is None:
            raise ValueError("ShopEnded needs its army")
        ended_shop = pb.ShopEnded(saved=slate_to_proto(event.saved), reserve=event.reserve)
        ended_shop.army.CopyFrom(army)
        if event.faceoff_deadline_ms is not None:
            ended_shop.faceoff_deadline_ms = event.faceoff_deadline_ms
        return ended_shop
    if isinstance(event, ev.Arranged):
        return pb.Arranged(arrangement=event.arrangement)
    if isinstance(event, ev.CombatFought):
        return pb.CombatFought(
            round=event.round_no,
            arrangement=event.arrangement,
            result=event.result,
            margin=event.margin,
            exchanges=event.exchanges,
        )
    if isinstance(event, ev.RoundStarted):
        started = pb.RoundStarted(round=event.round_no)
        if event.shop_deadline_ms is not None:
            started.shop_deadline_ms = event.shop_deadline_ms
        return started
    if isinstance(event, ev.GameVoided):
        return pb.GameVoided(reason=event.reason, by=event.by, note=event.note)
    if isinstance(event, ev.GameEnded):
        return pb.DigitsEnded(status=event.status, reason=event.reason)
    raise TypeError(f"not a Digits event: {event!r}")


def engine_event(message: Message) -> ev.Event | None:
    """The engine event a logged message stands for; None for the module's own events
    (DigitsStarted is folded by the rules; ShopClosing and Predicted change no engine state)."""
    if isinstance(message, pb.RoundsMissed):
        return ev.RoundsMissed(message.count)
    if isinstance(message, pb.ExpiryMoved):
        return ev.ExpiryMoved(message.expires_ms)
    if isinstance(message, pb.QuestionShown):
        return ev.QuestionShown(
            message.round, message.index, question_of(message.question), message.deadline_ms
        )
    if isinstance(message, pb.FocusAnswered):
        return ev.FocusAnswered(
            message.round, message.index, _opt(message, "answer"), message.right, message.late
        )
    if isinstance(message, pb.ShopOpened):
        return ev.ShopOpened(
            message.round,
            message.right,
            message.gold,
            tuple(message.offers),
            message.bright or None,
        )
    if isinstance(message, pb.Bought):
        offer: int | str = BRIGHT if message.bright else message.offer
        return ev.Bought(offer, message.kind, message.cell, message.cost)
    if isinstance(message, pb.Sold):
        return ev.Sold(message.cell, message.kind, message.refund)
    if isinstance(message, pb.Moved):
        return ev.Moved(message.src, message.dst)
    if isinstance(message, pb.Rerolled):
        return ev.Rerolled(message.reroll, tuple(message.offers), message.cost)
    if isinstance(message, pb.TrainingShown):
        return ev.TrainingShown(message.cell, question_of(message.question), message.deadline_ms)
    if isinstance(message, pb.TrainingAnswered):
        return ev.TrainingAnswered(
            message.cell, _opt(message, "answer"), message.right, message.level
        )
    if isinstance(message, pb.ShopEnded):
        return ev.ShopEnded(
            slate_of(message.saved),
            message.reserve,
            slate_of(message.army.slate),
            None,
            _opt(message, "faceoff_deadline_ms"),
        )
    if isinstance(message, pb.Arranged):
        return ev.Arranged(message.arrangement)
    if isinstance(message, pb.CombatFought):
        return ev.CombatFought(
            message.round, message.arrangement, message.result, message.margin, message.exchanges
        )
    if isinstance(message, pb.RoundStarted):
        return ev.RoundStarted(message.round, _opt(message, "shop_deadline_ms"))
    if isinstance(message, pb.GameVoided):
        return ev.GameVoided(message.reason, message.by, message.note)
    if isinstance(message, pb.DigitsEnded):
        return ev.GameEnded(message.status, message.reason)
    if isinstance(message, pb.DigitsStarted | pb.ShopClosing | pb.Predicted):
        return None
    raise TypeError(f"not a Digits event: {message!r}")


def unwrapped(event: Message) -> Message:
    """The game's own event: a MatchEnded (as the log keeps the end) read as its DigitsEnded."""
    if isinstance(event, match_pb2.MatchEnded) and event.detail.Is(pb.DigitsEnded.DESCRIPTOR):
        return unpack(event.detail, pb.DigitsEnded)
    return event


# -- the result -------------------------------------------------------------------------------


def reason_of(ended: pb.DigitsEnded) -> str:
    """How the game ended, in one word: won, lost, closed (the last round), forfeited, or the
    stop that closed it (midnight, deadline, expired)."""
    if ended.status == "closed" and ended.reason not in ("record", ""):
        return ended.reason
    return ended.status


def result_of(ended: pb.DigitsEnded) -> Result:
    """One seat, always ranked first (it plays no other seat); its score is its wins."""
    return Result(reason_of(ended), (SeatResult(1, 1, ended.wins),))


def register(schemas: Schemas) -> None:
    """Every payload of the game (the final event travels inside MatchEnded, so it is not a type
    of its own in the log)."""
    match_schemas.register(schemas)
    schemas.add_messages((*COMMANDS, *TIMERS, *SERVICE_COMMANDS, *EVENTS[:-1], *STORE))


class DigitsWire:
    settings = pb.DigitsSettings
    commands = COMMANDS
    timers = TIMERS
    service = SERVICE_COMMANDS
    events = EVENTS
    final = pb.DigitsEnded

    def register(self, schemas: Schemas) -> None:
        register(schemas)

    def result_of(self, final: Message) -> Result:
        assert isinstance(final, pb.DigitsEnded)
        return result_of(final)
