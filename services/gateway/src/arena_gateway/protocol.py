"""The WebSocket protocol's client messages, as pydantic models (docs/protocol.md).

Every client message is a JSON object with a ``type`` and an ``id`` (1–64 characters, chosen by
the client, unique per session: a message repeated with the same id is the same command). The
server answers each one with ``ack`` or ``error`` echoing the id. A game's own messages (moves,
previews, its settings) are its module's (``client.messages`` and ``client.relayed``, its
``lobby.form``), read here through the registry; its pushes are made by the game's views in the
match service and relayed, the rest here as plain dicts.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Annotated, Any, Literal, Union

from arena_games.registry import STANDARD
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, model_validator

MessageId = Annotated[str, Field(min_length=1, max_length=64)]
RoomCode = Annotated[str, Field(min_length=1, max_length=16)]
GameName = Annotated[str, Field(min_length=1, max_length=64)]
#: The game a lobby message names when it names none (every client before the game seam).
DEFAULT_GAME = "maths-warriors"
#: The first game played in duels (Digits): ``challenge_duel``'s default.
DUEL_GAME = next((m.name for m in STANDARD if "duel" in m.modes), "")


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: MessageId


class Auth(_Message):
    type: Literal["auth"]
    token: Annotated[str, Field(min_length=1, max_length=256)]


class CreateRoom(_Message):
    """Open a room of ``game``; ``settings`` is the game's settings form (``lobby.form``),
    checked here as the message is read, like every message's shape (a game nobody registered
    is left to matchmaking, which refuses it with ``unknown_game``)."""

    type: Literal["create_room"]
    game: GameName = DEFAULT_GAME
    #: A one-seat game's room is side by side (mode room) whether this says so or not; a game
    #: of more seats has its mode, if any, in its form.
    mode: Literal["room"] | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    _form: BaseModel | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_form(self) -> CreateRoom:
        if self.game in STANDARD:
            self._form = STANDARD.find(self.game).lobby.form.model_validate(self.settings)
        return self

    @property
    def form(self) -> BaseModel | None:
        """The game's settings form (None: no such game)."""
        return self._form


class FillSeat(_Message):
    """The host fills an empty seat of their waiting room with one of the game's AI levels or
    scripted policies (seat 0 or left out: the lowest free seat)."""

    type: Literal["fill_seat"]
    seat: Annotated[int, Field(ge=0, le=64)] = 0
    policy: Annotated[str, Field(min_length=1, max_length=64)]


class StartRoom(_Message):
    """The host starts their waiting room now; empty seats get the game's default fill."""

    type: Literal["start_room"]


class WatchRoom(_Message):
    """Follow a room by its code without a seat: its lobby pushes (seats taken and filled, the
    match started with its id, finished, closed)."""

    type: Literal["watch_room"]
    code: RoomCode


class JoinRoom(_Message):
    type: Literal["join_room"]
    code: RoomCode


class LeaveRoom(_Message):
    type: Literal["leave_room"]


class Queue(_Message):
    type: Literal["queue"]
    #: A registered game; matchmaking says whether it has a queue in this mode.
    game: GameName = DEFAULT_GAME
    mode: Literal["casual", "ranked"] = "casual"

    @model_validator(mode="after")
    def _known_game(self) -> Queue:
        if self.game not in STANDARD:
            raise ValueError(f"no game {self.game!r}")
        return self


class LeaveQueue(_Message):
    type: Literal["leave_queue"]


class PlayAi(_Message):
    """A match against the game's AI at ``level``; ``settings`` is the game's form, checked as
    the message is read (as create_room's)."""

    type: Literal["play_ai"]
    level: Literal["easy", "medium", "hard", "impossible"]
    game: GameName = DEFAULT_GAME
    settings: dict[str, Any] = Field(default_factory=dict)
    _form: BaseModel | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_form(self) -> PlayAi:
        if self.game not in STANDARD:
            raise ValueError(f"no game {self.game!r}")
        self._form = STANDARD.find(self.game).lobby.form.model_validate(self.settings)
        return self

    @property
    def form(self) -> BaseModel | None:
        return self._form


#: The modes a one-seat game is started in alone (``play_solo``); a room or a duel is not one.
SoloMode = Literal["ranked", "casual", "daily", "tutorial", "trial"]


class PlaySolo(_Message):
    """Start a game of a one-seat game alone in ``mode`` (Digits: docs/rules/digits.md);
    matchmaking refuses a game or mode it cannot start alone (``mode_not_available``)."""

    type: Literal["play_solo"]
    game: GameName
    mode: SoloMode

    @model_validator(mode="after")
    def _known_game(self) -> PlaySolo:
        if self.game not in STANDARD:
            raise ValueError(f"no game {self.game!r}")
        return self


class GhostSharing(_Message):
    """The account's setting for the ghosts its games leave (Digits' ghost store): served under
    the login, anonymously (the default) or not at all."""

    type: Literal["ghost_sharing"]
    sharing: Literal["login", "anonymous", "none"]
    #: The registry's first game that keeps its players' armies (Digits).
    game: GameName = (STANDARD.ghost_games() or ("",))[0]

    @model_validator(mode="after")
    def _game_with_ghosts(self) -> GhostSharing:
        if self.game not in STANDARD.ghost_games():
            raise ValueError(f"no game {self.game!r} keeps its players' armies")
        return self


DuelId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class ChallengeDuel(_Message):
    """Challenge the account named ``opponent`` (its username) to a duel of a one-seat game,
    ``stake`` credits each; the ack's ``duel_id`` is what the opponent accepts."""

    type: Literal["challenge_duel"]
    opponent: Annotated[str, Field(min_length=1, max_length=64)]
    game: GameName = DUEL_GAME
    stake: Annotated[int, Field(ge=0, le=10_000)] = 0

    @model_validator(mode="after")
    def _known_game(self) -> ChallengeDuel:
        if self.game not in STANDARD or "duel" not in STANDARD.find(self.game).modes:
            raise ValueError(f"no game {self.game!r} is played in duels")
        return self


class AcceptDuel(_Message):
    """The challenged player accepts: both games start (their views follow)."""

    type: Literal["accept_duel"]
    duel_id: DuelId


class DeclineDuel(_Message):
    """Either player, before the acceptance: the challenged declines, the challenger withdraws."""

    type: Literal["decline_duel"]
    duel_id: DuelId


class Resign(_Message):
    type: Literal["resign"]


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
    #: May be left out on a socket authenticated on its handshake (the browser's cookie).
    token: Annotated[str, Field(min_length=1, max_length=256)] | None = None


class Pong(_Message):
    type: Literal["pong"]


class WatchMatch(_Message):
    """Watch a match without a seat (a room's code leads to its id: ``watch_room``): the
    spectators' view of it (the Maze's observers'), a snapshot first, then its pushes."""

    type: Literal["watch_match"]
    match_id: Annotated[str, Field(min_length=1, max_length=64)]


def _type_of(model: type[BaseModel]) -> str:
    return str(model.model_fields["type"].annotation.__args__[0])  # type: ignore[union-attr]


#: The gateway's own messages (a game's are its module's ``client.messages``).
OWN_MESSAGES: tuple[type[BaseModel], ...] = (
    Auth,
    CreateRoom,
    JoinRoom,
    LeaveRoom,
    FillSeat,
    StartRoom,
    WatchRoom,
    WatchMatch,
    Queue,
    LeaveQueue,
    PlayAi,
    PlaySolo,
    GhostSharing,
    ChallengeDuel,
    AcceptDuel,
    DeclineDuel,
    Resign,
    RematchRequest,
    RematchAccept,
    RematchDecline,
    Reconnect,
    Pong,
)
#: Message type -> the game whose client accepts it, for every registered game.
GAME_MESSAGES: tuple[type[BaseModel], ...] = tuple(
    model for module in STANDARD for model in (*module.client.messages, *module.client.relayed)
)
GAME_OF_MESSAGE: dict[str, str] = {
    _type_of(model): module.name
    for module in STANDARD
    for model in (*module.client.messages, *module.client.relayed)
}

#: The types of the messages a seat sends its match: every game's, and resign.
TO_MATCH: frozenset[str] = frozenset(GAME_OF_MESSAGE) | {_type_of(Resign)}


#: Any client message: the gateway's own, or a registered game's (each model has ``id`` and
#: ``type``; the union is the registry's, so a game added there is read here).
ClientMessage = Any

CLIENT_MESSAGES: TypeAdapter[Any] = TypeAdapter(
    Annotated[Union[(*OWN_MESSAGES, *GAME_MESSAGES)], Field(discriminator="type")]  # type: ignore[arg-type]
)

#: Every client message type, as the AsyncAPI document must list them.
CLIENT_TYPES: frozenset[str] = frozenset(_type_of(m) for m in (*OWN_MESSAGES, *GAME_MESSAGES))

#: Server pushes (besides ``ack`` and ``error``), as the AsyncAPI document must list them: the
#: gateway's own, and every registered game's (``client.pushes``, made by its views).
SERVER_TYPES: frozenset[str] = frozenset(
    {"ack", "error", "ping", "lobby", "server_shutdown"}
).union(*(module.client.pushes for module in STANDARD))


#: ``json.dumps(value, separators=(",", ":"))``, the server's messages' JSON, without building an
#: encoder for each message.
COMPACT = json.JSONEncoder(separators=(",", ":"))


class JsonText(str):
    """A value already written as compact JSON (a game's ack as the match service wrote it),
    put into a server message as it is: the same text as COMPACT writing the value again."""


def ack_text(message_id: str, result: JsonText) -> str:
    """``COMPACT.encode({"type": "ack", "id": message_id, "result": <result read>})``."""
    return f'{{"type":"ack","id":{encode_basestring_ascii(message_id)},"result":{result}}}'


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
    #: ``challenge_duel``'s opponent is no account's username.
    UNKNOWN_PLAYER = "unknown_player"
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
