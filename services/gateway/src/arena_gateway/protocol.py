"""The WebSocket protocol's client messages, as pydantic models (docs/protocol.md).

Every client message is a JSON object with a ``type`` and an ``id`` (1–64 characters, chosen by
the client, unique per session: a message repeated with the same id is the same command). The
server answers each one with ``ack`` or ``error`` echoing the id. Server pushes are plain dicts
built by :mod:`arena_gateway.push`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

MessageId = Annotated[str, Field(min_length=1, max_length=64)]
DieName = Annotated[str, Field(min_length=1, max_length=8)]
RoomCode = Annotated[str, Field(min_length=1, max_length=16)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: MessageId


class RoomSettings(BaseModel):
    """What a room (or a game against the AI) is played with; omitted values take the defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    game_seconds: Annotated[int, Field(ge=60, le=3600)] = 720
    move_seconds: Annotated[int, Field(ge=0, le=120)] = 30
    #: The four ruleset options by name (``first_player_penalty``, ``timeout_winner``,
    #: ``first_player_compare``, ``all_equal_start``); the match service validates the values.
    rules: dict[Annotated[str, Field(max_length=32)], Annotated[str, Field(max_length=32)]] = Field(
        default_factory=dict, max_length=4
    )
    preview: bool = False
    mode: Literal["casual", "ranked"] = "casual"


class Auth(_Message):
    type: Literal["auth"]
    token: Annotated[str, Field(min_length=1, max_length=256)]


class CreateRoom(_Message):
    type: Literal["create_room"]
    settings: RoomSettings = Field(default_factory=RoomSettings)


class JoinRoom(_Message):
    type: Literal["join_room"]
    code: RoomCode


class LeaveRoom(_Message):
    type: Literal["leave_room"]


class Queue(_Message):
    type: Literal["queue"]
    game: Literal["maths-warriors"] = "maths-warriors"
    mode: Literal["casual", "ranked"] = "casual"


class LeaveQueue(_Message):
    type: Literal["leave_queue"]


class PlayAi(_Message):
    type: Literal["play_ai"]
    level: Literal["easy", "medium", "hard", "impossible"]
    settings: RoomSettings = Field(default_factory=RoomSettings)


class StrengthMove(_Message):
    type: Literal["strength"]
    attacker: DieName
    target: DieName


class MindMove(_Message):
    type: Literal["mind"]
    target: DieName
    #: Dice as ``{"die": "D6", "value": 3}`` and operators / parentheses as strings; checked
    #: against the whitelist by arena_gateway.limits (typed errors rather than a shape error).
    tokens: list[Any]


class SkipMove(_Message):
    type: Literal["skip"]


class Resign(_Message):
    type: Literal["resign"]


class Preview(_Message):
    type: Literal["preview"]
    tokens: list[Any]
    target: DieName | None = None


class RematchRequest(_Message):
    type: Literal["rematch_request"]


class RematchAccept(_Message):
    type: Literal["rematch_accept"]


class RematchDecline(_Message):
    type: Literal["rematch_decline"]


class Reconnect(_Message):
    type: Literal["reconnect"]
    code: RoomCode | None = None
    match_id: Annotated[str, Field(max_length=64)] | None = None
    player_id: Annotated[str, Field(max_length=64)]
    token: Annotated[str, Field(min_length=1, max_length=256)]


class Pong(_Message):
    type: Literal["pong"]


ClientMessage = Annotated[
    Auth
    | CreateRoom
    | JoinRoom
    | LeaveRoom
    | Queue
    | LeaveQueue
    | PlayAi
    | StrengthMove
    | MindMove
    | SkipMove
    | Resign
    | Preview
    | RematchRequest
    | RematchAccept
    | RematchDecline
    | Reconnect
    | Pong,
    Field(discriminator="type"),
]

CLIENT_MESSAGES: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)

#: Every client message type, as the AsyncAPI document must list them.
CLIENT_TYPES: frozenset[str] = frozenset(
    model.model_fields["type"].annotation.__args__[0]  # type: ignore[union-attr]
    for model in (
        Auth,
        CreateRoom,
        JoinRoom,
        LeaveRoom,
        Queue,
        LeaveQueue,
        PlayAi,
        StrengthMove,
        MindMove,
        SkipMove,
        Resign,
        Preview,
        RematchRequest,
        RematchAccept,
        RematchDecline,
        Reconnect,
        Pong,
    )
)

#: Server pushes (besides ``ack`` and ``error``), as the AsyncAPI document must list them.
SERVER_TYPES: frozenset[str] = frozenset(
    {
        "ack",
        "error",
        "ping",
        "snapshot",
        "time_sync",
        "strength_attacked",
        "mind_attacked",
        "turn_skipped",
        "game_over",
        "opponent_disconnected",
        "opponent_reconnected",
        "preview",
        "lobby",
    }
)


class ErrorCode:
    """The gateway's own error codes; rejections by a service pass through with theirs."""

    BAD_MESSAGE = "bad_message"
    MESSAGE_TOO_LARGE = "message_too_large"
    RATE_LIMITED = "rate_limited"
    UNAUTHENTICATED = "unauthenticated"
    AUTH_FAILED = "auth_failed"
    INVALID_TOKEN = "invalid_token"
    EXPRESSION_TOO_LONG = "expression_too_long"
    NOT_IN_ROOM = "not_in_room"
    NOT_IN_MATCH = "not_in_match"
    NOT_A_PLAYER = "not_a_player"
    PREVIEW_OFF = "preview_off"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"


class GatewayError(Exception):
    """A refusal of one client message: answered with ``error{code, message}``; nothing else."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
