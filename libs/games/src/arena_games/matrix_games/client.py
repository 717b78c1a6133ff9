"""The WebSocket messages Matrix Games accepts (docs/protocol.md) and the commands they become.

``matrix_join`` says the seat's client is there (the reference's seat socket connecting);
``matrix_order`` is the seat's one decision for a beat: an intent, a token or a target by name (a
token name of the variant, a cog's alias; any case) or by the reference's index (token 0..K-1,
slot 0-7), and free text. Whether the order is legal (the intent's arguments, the beat, the
deadline) is the rules' business; here only the shape is checked, and text longer than the
rules keep (say 64 code points, notes 400) is refused well before it is cut.
"""

from __future__ import annotations

from typing import Annotated, Literal

from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field

from arena_games.contract import ClientError
from arena_games.matrix_games.pushes import PUSH_MODELS
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb

MessageId = Annotated[str, Field(min_length=1, max_length=64)]
Name = Annotated[str, Field(max_length=32)]
Index = Annotated[int, Field(ge=-1, le=99)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: MessageId


class JoinEpisode(_Message):
    type: Literal["matrix_join"]


class OrderMessage(_Message):
    type: Literal["matrix_order"]
    #: The beat the order is for: the observation's ``beat``.
    beat: Annotated[int, Field(ge=0, le=1000)]
    intent: Name
    token: Index | Name | None = None
    target: Index | Name | None = None
    say: Annotated[str, Field(max_length=256)] = ""
    notes: Annotated[str, Field(max_length=1600)] = ""
    #: How the seat's client decided: a person, or a language model playing the seat.
    source: Literal["player", "llm"] = "player"


MESSAGES: tuple[type[BaseModel], ...] = (JoinEpisode, OrderMessage)


def _argument(value: int | str | None) -> str:
    return "" if value is None else str(value)


def command(message: BaseModel, player_id: str) -> Message:
    if isinstance(message, JoinEpisode):
        return pb.JoinEpisode(player_id=player_id)
    if isinstance(message, OrderMessage):
        return pb.GiveOrder(
            player_id=player_id,
            beat=message.beat,
            intent=message.intent,
            token=_argument(message.token),
            target=_argument(message.target),
            say=message.say,
            notes=message.notes,
            source=message.source,
        )
    raise ClientError("bad_message", f"{getattr(message, 'type', message)} is not a Matrix message")


class MatrixGamesClient:
    #: A seat's (``state`` is the spectators' frame too).
    pushes = frozenset({"welcome", "state", "order_accepted", "final"})
    push_models = PUSH_MODELS
    messages = MESSAGES
    relayed: tuple[type[BaseModel], ...] = ()

    def command(self, message: BaseModel, player_id: str) -> Message:
        return command(message, player_id)
