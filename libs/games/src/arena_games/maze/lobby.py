"""The Maze's settings as rooms and queues know them: defaults, typed checks, the JSON form.

The values and their ranges are the engine's (``arena_engine.maze.settings``); a match records
them all, filled in. A bad value is refused with a :class:`~arena_games.contract.SettingsError`
whose code names the setting (docs/rules/maze.md, "Online"), never clamped: a maze of another
size than asked is not a fair surprise.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from arena_engine.maze import DEFAULT_SETTINGS
from arena_engine.maze.settings import RANGES
from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field

from arena_games.contract import SettingsError
from arena_games.lobby_form import FormLobby
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as pb

INVALID_SIZE = "invalid_size"
INVALID_COOLDOWN = "invalid_cooldown"
INVALID_COUNTDOWN = "invalid_countdown"
INVALID_VISION_PAIRS = "invalid_vision_pairs"
INVALID_LOOPS = "invalid_loops"
INVALID_TIME_LIMIT = "invalid_time_limit"

#: Each setting, in the message's order, with the code of its refusal.
CODES: Final = {
    "width": INVALID_SIZE,
    "height": INVALID_SIZE,
    "cooldown_ms": INVALID_COOLDOWN,
    "countdown_ms": INVALID_COUNTDOWN,
    "vision_pairs": INVALID_VISION_PAIRS,
    "loops_percent": INVALID_LOOPS,
    "time_limit_ms": INVALID_TIME_LIMIT,
}
#: The engine's defaults; no time limit is 0 on the wire.
DEFAULTS: Final = {name: getattr(DEFAULT_SETTINGS, name) or 0 for name in CODES}


def _range(name: str) -> tuple[int, int]:
    return RANGES[name]


def _has(settings: pb.MazeSettings, name: str) -> bool:
    return settings.HasField(name)  # type: ignore[arg-type]


class SettingsForm(BaseModel):
    """What a room is played with; omitted values take the defaults (docs/protocol.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    width: Annotated[int, Field(ge=_range("width")[0], le=_range("width")[1])] = DEFAULTS["width"]
    height: Annotated[int, Field(ge=_range("height")[0], le=_range("height")[1])] = DEFAULTS[
        "height"
    ]
    cooldown_ms: Annotated[int, Field(ge=0, le=_range("cooldown_ms")[1])] = DEFAULTS["cooldown_ms"]
    countdown_ms: Annotated[int, Field(ge=0, le=_range("countdown_ms")[1])] = DEFAULTS[
        "countdown_ms"
    ]
    vision_pairs: Annotated[int, Field(ge=0, le=_range("vision_pairs")[1])] = DEFAULTS[
        "vision_pairs"
    ]
    loops_percent: Annotated[
        int, Field(ge=_range("loops_percent")[0], le=_range("loops_percent")[1])
    ] = DEFAULTS["loops_percent"]
    #: 0: no time limit; else 1000..86400000 (the check refuses 1..999).
    time_limit_ms: Annotated[int, Field(ge=0, le=_range("time_limit_ms")[1])] = DEFAULTS[
        "time_limit_ms"
    ]
    mode: Literal["casual", "ranked"] = "casual"


def check(settings: pb.MazeSettings | None) -> pb.MazeSettings:
    """The settings with every default filled in, or a SettingsError naming the first bad one."""
    settings = settings or pb.MazeSettings()
    values: dict[str, int] = {}
    for name, code in CODES.items():
        value = getattr(settings, name) if _has(settings, name) else DEFAULTS[name]
        low, high = _range(name)
        if not (low <= value <= high or (name == "time_limit_ms" and value == 0)):
            none = " or 0 (none)" if name == "time_limit_ms" else ""
            raise SettingsError(code, f"{name} {value} not in {low}..{high}{none}")
        values[name] = value
    return pb.MazeSettings(**values)


def defaults() -> pb.MazeSettings:
    """What a quick match is played with."""
    return check(None)


def from_form(form: SettingsForm) -> pb.MazeSettings:
    """The settings message of a client's JSON form (checked by :func:`check`)."""
    return pb.MazeSettings(**form.model_dump(exclude={"mode"}))


def to_form(settings: Message) -> dict[str, Any]:
    """The JSON form of a settings message (set values only)."""
    assert isinstance(settings, pb.MazeSettings)
    return {name: getattr(settings, name) for name in CODES if _has(settings, name)}


LOBBY = FormLobby("Maze", pb.MazeSettings, SettingsForm, defaults, check, from_form, to_form)
