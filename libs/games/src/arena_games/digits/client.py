"""The WebSocket messages Digits accepts (docs/protocol.md, "Digits") and the commands they
become. Only the shape is checked here (buttons 1..16, cells 1..8, offers 0..4 or "bright",
arrangements 0..383); whether the order fits the game now is the rules' business."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field

from arena_games.contract import ClientError
from arena_games.digits import wire
from arena_games.digits.pushes import PUSH_MODELS
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

MessageId = Annotated[str, Field(min_length=1, max_length=64)]
Button = Annotated[int, Field(ge=1, le=16)]
CellNumber = Annotated[int, Field(ge=1, le=8)]
ArrangementNumber = Annotated[int, Field(ge=0, le=383)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: MessageId


class StartFocus(_Message):
    type: Literal["digits_start_focus"]


class AnswerFocus(_Message):
    type: Literal["digits_answer"]
    answer: Button


class Buy(_Message):
    type: Literal["digits_buy"]
    offer: Annotated[int, Field(ge=0, le=4)] | Literal["bright"]
    cell: CellNumber | None = None


class Sell(_Message):
    type: Literal["digits_sell"]
    cell: CellNumber


class MoveDigit(_Message):
    type: Literal["digits_move"]
    src: CellNumber
    dst: CellNumber


class Reroll(_Message):
    type: Literal["digits_reroll"]


class Train(_Message):
    type: Literal["digits_train"]
    cell: CellNumber


class AnswerTraining(_Message):
    type: Literal["digits_train_answer"]
    answer: Button


class EndShop(_Message):
    type: Literal["digits_end_shop"]


class Arrange(_Message):
    type: Literal["digits_arrange"]
    arrangement: ArrangementNumber


class Fight(_Message):
    type: Literal["digits_fight"]


class Predict(_Message):
    type: Literal["digits_predict"]
    arrangement: ArrangementNumber


MESSAGES: tuple[type[BaseModel], ...] = (
    StartFocus,
    AnswerFocus,
    Buy,
    Sell,
    MoveDigit,
    Reroll,
    Train,
    AnswerTraining,
    EndShop,
    Arrange,
    Fight,
    Predict,
)


def command(message: BaseModel, player_id: str) -> Message:
    if isinstance(message, StartFocus):
        return pb.StartFocus(player_id=player_id)
    if isinstance(message, AnswerFocus):
        return pb.AnswerFocus(player_id=player_id, answer=message.answer)
    if isinstance(message, Buy):
        bought = pb.Buy(player_id=player_id)
        if message.offer == "bright":
            bought.bright = True
        else:
            bought.offer = message.offer
        if message.cell is not None:
            bought.cell = message.cell
        return bought
    if isinstance(message, Sell):
        return pb.Sell(player_id=player_id, cell=message.cell)
    if isinstance(message, MoveDigit):
        return pb.MoveDigit(player_id=player_id, src=message.src, dst=message.dst)
    if isinstance(message, Reroll):
        return pb.Reroll(player_id=player_id)
    if isinstance(message, Train):
        return pb.Train(player_id=player_id, cell=message.cell)
    if isinstance(message, AnswerTraining):
        return pb.AnswerTraining(player_id=player_id, answer=message.answer)
    if isinstance(message, EndShop):
        return pb.EndShop(player_id=player_id)
    if isinstance(message, Arrange):
        return pb.Arrange(player_id=player_id, arrangement=message.arrangement)
    if isinstance(message, Fight):
        return pb.Fight(player_id=player_id)
    if isinstance(message, Predict):
        return pb.Predict(player_id=player_id, arrangement=message.arrangement)
    raise ClientError("bad_message", f"{getattr(message, 'type', message)} is not a Digits message")


class DigitsClient:
    #: Its record, its game page and each of its events, told (``digits_<event>``).
    pushes = frozenset(
        {"digits_record", "digits_game"}
        | {"digits_" + re.sub(r"(?<!^)(?=[A-Z])", "_", e.__name__).lower() for e in wire.EVENTS}
    )
    push_models = PUSH_MODELS
    messages = MESSAGES
    relayed: tuple[type[BaseModel], ...] = ()

    def command(self, message: BaseModel, player_id: str) -> Message:
        return command(message, player_id)
