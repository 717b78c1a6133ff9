"""Maths Warriors' settings as rooms and queues know them: defaults, checks, the JSON form.

A room's settings are the lobby's game-neutral ``RoomSettings`` (mode, game, seats) around this
game's ``MathsWarriorsSettings`` as typed bytes. Checking fills in every default and refuses a
bad value with a typed :class:`~arena_games.contract.SettingsError` (codes docs/online-play.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from arena_engine.maths_warriors import MathsWarriorsError, Ruleset
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as lobby
from arena_runtime.proto_gen.arena.v1 import match_pb2
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field

from arena_games.contract import CASUAL, RANKED, SettingsError, unpack
from arena_games.lobby_form import FormLobby
from arena_games.maths_warriors import wire
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb

GAME_SECONDS = range(60, 3601)
DEFAULT_GAME_SECONDS = 720
MOVE_SECONDS = range(0, 121)
DEFAULT_MOVE_SECONDS = 30
RULESET_OPTIONS = wire.RULESET_OPTIONS

INVALID_GAME_CLOCK = "invalid_game_clock"
INVALID_MOVE_CLOCK = "invalid_move_clock"
INVALID_RULESET = "invalid_ruleset"
#: A client's settings the gateway refuses as they are (an unknown rule option).
BAD_MESSAGE = "bad_message"

MODES = {CASUAL: match_pb2.MATCH_MODE_CASUAL, RANKED: match_pb2.MATCH_MODE_RANKED}


class SettingsForm(BaseModel):
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


def check(settings: pb.MathsWarriorsSettings | None) -> pb.MathsWarriorsSettings:
    """The settings with every default filled in, or a SettingsError naming the first bad one."""
    settings = settings or pb.MathsWarriorsSettings()
    game = settings.game_seconds if settings.HasField("game_seconds") else DEFAULT_GAME_SECONDS
    if game not in GAME_SECONDS:
        raise SettingsError(INVALID_GAME_CLOCK, f"game clock {game} s not in 60..3600")
    move = settings.move_seconds if settings.HasField("move_seconds") else DEFAULT_MOVE_SECONDS
    if move not in MOVE_SECONDS:
        raise SettingsError(INVALID_MOVE_CLOCK, f"move clock {move} s not in 0..120")
    chosen = {name: getattr(settings.ruleset, name) for name in RULESET_OPTIONS}
    try:
        ruleset = Ruleset.from_dict({name: value for name, value in chosen.items() if value})
    except MathsWarriorsError as exc:
        raise SettingsError(INVALID_RULESET, str(exc)) from None
    return pb.MathsWarriorsSettings(
        game_seconds=game,
        move_seconds=move,
        ruleset=pb.MatchRuleset(**{name: str(getattr(ruleset, name)) for name in RULESET_OPTIONS}),
        preview=settings.preview,
    )


def defaults() -> pb.MathsWarriorsSettings:
    """What a quick match is played with."""
    return check(None)


def settings_in(room: lobby.RoomSettings) -> pb.MathsWarriorsSettings | None:
    """This game's settings inside a room's (None when the room leaves them all to defaults)."""
    if not room.HasField("settings"):
        return None
    return unpack(room.settings, pb.MathsWarriorsSettings)


def checked_room_settings(room: lobby.RoomSettings) -> lobby.RoomSettings:
    """A room's settings with every default of the game filled in (the mode is the lobby's)."""
    return wire.room_settings(check(settings_in(room)), room.mode or match_pb2.MATCH_MODE_CASUAL)


def default_room_settings() -> lobby.RoomSettings:
    """The settings of a quick match, before its mode is chosen."""
    return checked_room_settings(lobby.RoomSettings())


def from_form(form: SettingsForm) -> pb.MathsWarriorsSettings:
    """The settings message of a client's JSON form (unknown rule options are refused)."""
    unknown = set(form.rules) - set(RULESET_OPTIONS)
    if unknown:
        raise SettingsError(BAD_MESSAGE, f"unknown rule options {sorted(unknown)}")
    return pb.MathsWarriorsSettings(
        game_seconds=form.game_seconds,
        move_seconds=form.move_seconds,
        ruleset=pb.MatchRuleset(**form.rules),
        preview=form.preview,
    )


def room_settings_of_form(form: SettingsForm) -> lobby.RoomSettings:
    """The lobby's settings of a client's create_room or play_ai (checked by matchmaking)."""
    return wire.room_settings(from_form(form), MODES[form.mode])


def to_form(settings: Message) -> dict[str, Any]:
    """The JSON form of a settings message (what a room shows its players)."""
    assert isinstance(settings, pb.MathsWarriorsSettings)
    form = MessageToDict(settings, preserving_proto_field_name=True)
    return {"rules": form.pop("ruleset", {}), **form}


LOBBY = FormLobby(
    "Maths Warriors",
    pb.MathsWarriorsSettings,
    SettingsForm,
    defaults,
    check,
    from_form,
    to_form,
)


def room(
    mode: match_pb2.MatchMode.ValueType = match_pb2.MATCH_MODE_UNSPECIFIED, **fields: Any
) -> lobby.RoomSettings:
    """A room's settings of this game as a client sends them (unchecked), e.g.
    ``room(game_seconds=300)``: for tests and tools."""
    return wire.room_settings(pb.MathsWarriorsSettings(**fields), mode)
