"""The WebSocket messages Maths Warriors accepts (docs/protocol.md) and the commands they become.

A Mind expression is checked against the token whitelist before it becomes a command: a die is
``{"die": "D4".."D20", "value": 1..20}``, a symbol one of ``+ - * / ( )`` (or ``× ÷ −``);
anything else voids the whole expression (``invalid_token``), as the reference server did, and
more than 64 tokens is ``expression_too_long``. Whether the arithmetic is right is the rules'
business, not the client's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Literal

from arena_engine.maths_warriors.errors import MathsWarriorsError
from arena_engine.maths_warriors.expression import evaluate_integer
from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field

from arena_games.contract import ClientError
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb

MessageId = Annotated[str, Field(min_length=1, max_length=64)]
DieName = Annotated[str, Field(min_length=1, max_length=8)]

#: The rules' online limit on a Mind expression (tournament reference §4.1).
MAX_TOKENS = 64
DIE_NAMES = frozenset({"D4", "D6", "D8", "D10", "D12", "D20"})
#: Operators and parentheses, with the typographic signs a keyboard may send.
SYMBOLS = {"+": "+", "-": "-", "*": "*", "/": "/", "(": "(", ")": ")", "×": "*", "÷": "/", "−": "-"}
MAX_DIE_VALUE = 20

INVALID_TOKEN = "invalid_token"
EXPRESSION_TOO_LONG = "expression_too_long"


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: MessageId


class StrengthMove(_Message):
    type: Literal["strength"]
    attacker: DieName
    target: DieName


class MindMove(_Message):
    type: Literal["mind"]
    target: DieName
    #: Dice as ``{"die": "D6", "value": 3}`` and operators / parentheses as strings; checked
    #: against the whitelist (typed errors rather than a shape error).
    tokens: list[Any]


class SkipMove(_Message):
    type: Literal["skip"]


class Preview(_Message):
    type: Literal["preview"]
    tokens: list[Any]
    target: DieName | None = None


#: The messages of a seat's moves (``preview`` is relayed to the opponent, not a command).
MOVES: tuple[type[BaseModel], ...] = (StrengthMove, MindMove, SkipMove)


@dataclass(frozen=True, slots=True)
class DieToken:
    die: str
    value: int


Token = DieToken | str


def check_tokens(raw: Sequence[Any]) -> list[Token]:
    """The whitelisted form of a Mind expression, or the typed refusal of the whole expression."""
    if len(raw) > MAX_TOKENS:
        raise ClientError(EXPRESSION_TOO_LONG, f"{len(raw)} tokens; at most {MAX_TOKENS}")
    tokens: list[Token] = []
    for index, item in enumerate(raw):
        if isinstance(item, str) and item in SYMBOLS:
            tokens.append(SYMBOLS[item])
        elif (
            isinstance(item, dict)
            and set(item) == {"die", "value"}
            and item["die"] in DIE_NAMES
            and type(item["value"]) is int
            and 1 <= item["value"] <= MAX_DIE_VALUE
        ):
            tokens.append(DieToken(item["die"], item["value"]))
        else:
            raise ClientError(INVALID_TOKEN, f"token {index} is not a die or one of + - * / ( )")
    return tokens


def check_die(name: str, what: str) -> str:
    if name not in DIE_NAMES:
        raise ClientError(INVALID_TOKEN, f"{what} must be one of D4 D6 D8 D10 D12 D20")
    return name


def mind_token(token: Token) -> pb.MindToken:
    if isinstance(token, DieToken):
        return pb.MindToken(die=pb.MindDie(die=token.die, value=token.value))
    return pb.MindToken(symbol=token)


def command(message: BaseModel, player_id: str) -> Message:
    """The command of a seat's move; ClientError if a die or the expression is refused."""
    if isinstance(message, StrengthMove):
        return pb.Strength(
            player_id=player_id,
            attacker=check_die(message.attacker, "attacker"),
            target=check_die(message.target, "target"),
        )
    if isinstance(message, MindMove):
        return pb.Mind(
            player_id=player_id,
            target=check_die(message.target, "target"),
            tokens=[mind_token(t) for t in check_tokens(message.tokens)],
        )
    if isinstance(message, SkipMove):
        return pb.Skip(player_id=player_id)
    raise ClientError("bad_message", f"{getattr(message, 'type', message)} is not a move")


def evaluate(tokens: Sequence[Token]) -> dict[str, Any]:
    """The rules' reading of a partial expression (a live preview): its value, or why it has
    none yet."""
    values: list[int | str] = [t.value if isinstance(t, DieToken) else t for t in tokens]
    try:
        return {"value": evaluate_integer(values), "error": None}
    except MathsWarriorsError as exc:
        return {"value": None, "error": exc.code.value}


class MathsWarriorsClient:
    pushes = frozenset(
        {
            "snapshot",
            "time_sync",
            "strength_attacked",
            "mind_attacked",
            "turn_skipped",
            "game_over",
            "opponent_disconnected",
            "opponent_reconnected",
            "preview",
        }
    )
    #: Its pushes are the gateway document's own (``snapshot``, ``strength_attacked``, …).
    push_models: Mapping[str, Any] = MappingProxyType({})
    messages = MOVES
    relayed: tuple[type[BaseModel], ...] = (Preview,)

    def command(self, message: BaseModel, player_id: str) -> Message:
        return command(message, player_id)
