"""Checking a room's settings and filling in their defaults (docs/online-play.md)."""

from __future__ import annotations

from arena_engine.maths_warriors import MathsWarriorsError, Ruleset
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mw

from arena_matchmaking.errors import LobbyError, LobbyErrorCode

GAME_SECONDS = range(60, 3601)
DEFAULT_GAME_SECONDS = 720
MOVE_SECONDS = range(0, 121)
DEFAULT_MOVE_SECONDS = 30
RULESET_OPTIONS = (
    "first_player_penalty",
    "timeout_winner",
    "first_player_compare",
    "all_equal_start",
)


def checked_settings(settings: pb.RoomSettings) -> pb.RoomSettings:
    """The settings with every default filled in, or a LobbyError naming the first bad one."""
    game = settings.game_seconds if settings.HasField("game_seconds") else DEFAULT_GAME_SECONDS
    if game not in GAME_SECONDS:
        raise LobbyError(LobbyErrorCode.INVALID_GAME_CLOCK, f"game clock {game} s not in 60..3600")
    move = settings.move_seconds if settings.HasField("move_seconds") else DEFAULT_MOVE_SECONDS
    if move not in MOVE_SECONDS:
        raise LobbyError(LobbyErrorCode.INVALID_MOVE_CLOCK, f"move clock {move} s not in 0..120")
    if settings.mode not in (mw.MATCH_MODE_UNSPECIFIED, mw.MATCH_MODE_CASUAL, mw.MATCH_MODE_RANKED):
        raise LobbyError(LobbyErrorCode.MODE_NOT_AVAILABLE, f"unknown mode {settings.mode}")
    chosen = {name: getattr(settings.ruleset, name) for name in RULESET_OPTIONS}
    try:
        ruleset = Ruleset.from_dict({name: value for name, value in chosen.items() if value})
    except MathsWarriorsError as exc:
        raise LobbyError(LobbyErrorCode.INVALID_RULESET, str(exc)) from None
    return pb.RoomSettings(
        game_seconds=game,
        move_seconds=move,
        ruleset=mw.MatchRuleset(**{name: str(getattr(ruleset, name)) for name in RULESET_OPTIONS}),
        preview=settings.preview,
        mode=settings.mode or mw.MATCH_MODE_CASUAL,
    )


def default_settings() -> pb.RoomSettings:
    """What a quick match is played with."""
    return checked_settings(pb.RoomSettings())
