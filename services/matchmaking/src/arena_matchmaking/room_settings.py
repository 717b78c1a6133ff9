"""Checking a room's settings and filling in their defaults (docs/online-play.md).

Game-neutral: the game is found by name in the registry (``arena_games.registry``; empty means
Maths Warriors, as every record before the seam), the mode must be one of the game's, the seat
count is the game's ``SeatPlan.seats`` (0 means it), and the game's own settings are checked and
filled by its ``lobby`` (typed refusals keep the game's codes). A game whose settings have an
unset ``seed`` field gets one drawn by the service (:func:`with_seed`), recorded with the room.
"""

from __future__ import annotations

import hashlib
from typing import Any

from arena_games.contract import GameModule, SettingsError, pack
from arena_games.registry import STANDARD, UnknownGameError
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.schemas.match import MODE_NAMES
from google.protobuf.message import Message

from arena_matchmaking.errors import LobbyError, LobbyErrorCode

#: The game of settings that name none (every record written before the game seam).
DEFAULT_GAME = "maths-warriors"
#: Every mode by its number (a game's own modes too: daily, room, duel, ...).
MODES = MODE_NAMES
#: A drawn seed is a non-negative int63 (inside every game's seed range).
SEED_BITS = 63


def game_of(settings: pb.RoomSettings) -> GameModule[Any]:
    """The settings' game module, or a LobbyError ``unknown_game``."""
    try:
        return STANDARD.find(settings.game or DEFAULT_GAME)
    except UnknownGameError as exc:
        raise LobbyError(LobbyErrorCode.UNKNOWN_GAME, exc.message) from None


def checked_settings(settings: pb.RoomSettings) -> pb.RoomSettings:
    """The settings with every default filled in, or a LobbyError naming the first bad one."""
    game = game_of(settings)
    mode = MODES.get(settings.mode)
    if mode is None or mode not in game.modes:
        raise LobbyError(
            LobbyErrorCode.MODE_NOT_AVAILABLE, f"no mode {settings.mode} in {game.name}"
        )
    if settings.seats not in (0, game.seats.seats):
        raise LobbyError(
            LobbyErrorCode.INVALID_SEATS,
            f"{game.name} has {game.seats.seats} seats, not {settings.seats}",
        )
    given: Message | None = None
    if settings.HasField("settings"):
        given = game.wire.settings()
        if not settings.settings.Unpack(given):
            raise LobbyError(LobbyErrorCode.INVALID_SETTINGS, f"not {game.name} settings")
    try:
        played = game.lobby.check(given)
    except SettingsError as exc:
        raise LobbyError(exc.code, exc.message) from None
    return pb.RoomSettings(
        mode=settings.mode or match_pb2.MATCH_MODE_CASUAL,
        game=game.name,
        seats=game.seats.seats,
        settings=pack(played),
    )


def with_seed(settings: pb.RoomSettings, draw_id: str) -> pb.RoomSettings:
    """Checked settings with the game's ``seed`` drawn when the game has one and none was given:
    from ``draw_id`` (the CreateRoom's command id), so deciding the command again draws the same
    seed, and the room records it (RoomRequested, RoomOpened, StartMatch)."""
    game = game_of(settings)
    played = game.wire.settings()
    settings.settings.Unpack(played)
    field = played.DESCRIPTOR.fields_by_name.get("seed")
    if field is None or played.HasField("seed"):
        return settings
    digest = hashlib.sha256(f"seed:{draw_id}".encode()).digest()
    played.seed = int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)  # type: ignore[attr-defined]
    drawn = pb.RoomSettings()
    drawn.CopyFrom(settings)
    drawn.settings.CopyFrom(pack(game.lobby.check(played)))
    return drawn


def side_by_side(settings: pb.RoomSettings) -> bool:
    """A room of a one-seat game in mode room: each player plays a game of their own,
    started together, and the room's players meet each other's armies."""
    return MODES.get(settings.mode) == "room" and game_of(settings).seats.seats == 1


def exclusive(settings: pb.RoomSettings) -> bool:
    """Whether a player in a live match of the settings' game plays nothing else meanwhile."""
    return game_of(settings).exclusive


def default_settings(game: str = DEFAULT_GAME) -> pb.RoomSettings:
    """What a quick match is played with."""
    return checked_settings(pb.RoomSettings(game=game))
