"""The payloads of proto/arena/v1/rating.proto: the rating ladders' command and events.

Importing this module registers them with the envelope codec's registry
(:data:`arena_runtime.envelope.SCHEMAS`); :func:`register` adds them to any other registry.
It also names the ladders: one stream per game and rating rules, ``ladder-<game>``; which games
have one is their modules' to say (``arena_games``), never the runtime's.

Version 2 of each payload names every seat of the match (``seats``, each with its rank and
score), whatever the game; version 1 (two seats: ``winner`` and ``loser``) is read as version 2
by the upcasters below: the winner ranked 1, the loser 2, scores 0 (version 1 did not record
them), the two-seat fields cleared. New code writes version 2 only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message

from arena_runtime.envelope import SCHEMAS, Schemas
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb

COMMANDS: tuple[type[Message], ...] = (
    pb.RateMatch,
    pb.RateUnit,
    pb.VoidMatch,
    pb.CloseSeason,
    pb.CreditCredits,
    pb.DebitCredits,
    pb.HoldCredits,
    pb.ReleaseCredits,
    pb.CaptureCredits,
)
EVENTS: tuple[type[Message], ...] = (
    pb.MatchRated,
    pb.MatchRecorded,
    pb.UnitRated,
    pb.SeasonReset,
    pb.MatchVoided,
    pb.RatingTakenBack,
    pb.SeasonClosed,
    pb.CreditsCredited,
    pb.CreditsDebited,
    pb.CreditsHeld,
    pb.CreditsReleased,
    pb.CreditsCaptured,
)
#: The per-combat payloads (written at version 1 only: they came after the seam).
UNIT_PAYLOADS: tuple[type[Message], ...] = COMMANDS[1:] + EVENTS[2:]
#: The version every payload of this file is written at.
VERSION = 2

LADDER_PREFIX = "ladder-"
CREDITS_PREFIX = "credits-"
RANKED = "ranked"
CASUAL = "casual"


def ladder_stream(game: str) -> str:
    """The stream id of a game's ladder, e.g. ``ladder-maths-warriors``."""
    return f"{LADDER_PREFIX}{game}"


def rate_command_id(match_id: str) -> str:
    """The id of the one command that records a match: a game is rated at most once."""
    return f"rate:{match_id}"


def rate_unit_command_id(match_id: str, unit: int) -> str:
    """The id of the command that rates one unit (a Digits combat) of a match: at most once."""
    return f"rate:{match_id}:{unit}"


def credits_stream(player_id: str) -> str:
    """The stream of an account's credits ledger."""
    return f"{CREDITS_PREFIX}{player_id}"


def season_prize_id(season: str, player_id: str) -> str:
    """The movement id of a season's prize: paying the prizes twice pays them once."""
    return f"season-prize:{season}:{player_id}"


def close_season_command_id(game: str, season: str) -> str:
    """The id of the command that closes a season of a ladder: once."""
    return f"close-season:{game}:{season}"


def void_command_id(match_id: str) -> str:
    """The id of the command that takes a voided match's ratings back: at most once."""
    return f"void:{match_id}"


# -- version 1 -> version 2 --------------------------------------------------------------------


def seat_of_v1(player: pb.LadderPlayer, rank: int) -> pb.LadderPlayer:
    """A version-1 side as a version-2 seat: its kind from ``ai``, its rank, score unknown."""
    return pb.LadderPlayer(
        player_id=player.player_id,
        display_name=player.display_name,
        seat=player.seat,
        ai=player.ai,
        kind=match_pb2.SEAT_KIND_AI if player.ai else match_pb2.SEAT_KIND_HUMAN,
        rank=rank,
    )


def _sides(winner: pb.LadderPlayer, loser: pb.LadderPlayer) -> list[tuple[pb.LadderPlayer, int]]:
    return sorted(((winner, 1), (loser, 2)), key=lambda side: side[0].seat)


def rate_match_v2(request: pb.RateMatch) -> pb.RateMatch:
    if request.seats or not (request.HasField("winner") or request.HasField("loser")):
        return request
    seats = [seat_of_v1(p, rank) for p, rank in _sides(request.winner, request.loser)]
    request.ClearField("winner")
    request.ClearField("loser")
    request.seats.extend(seats)
    return request


def match_rated_v2(rated: pb.MatchRated) -> pb.MatchRated:
    if rated.seats:
        return rated
    ratings = {
        rated.winner.seat: (rated.winner_before, rated.winner_after),
        rated.loser.seat: (rated.loser_before, rated.loser_after),
    }
    seats = [
        pb.SeatRating(
            player=seat_of_v1(p, rank), before=ratings[p.seat][0], after=ratings[p.seat][1]
        )
        for p, rank in _sides(rated.winner, rated.loser)
    ]
    for name in (
        "winner",
        "loser",
        "winner_before",
        "winner_after",
        "loser_before",
        "loser_after",
        "delta",
    ):
        rated.ClearField(name)
    rated.seats.extend(seats)
    return rated


def match_recorded_v2(recorded: pb.MatchRecorded) -> pb.MatchRecorded:
    if recorded.seats:
        return recorded
    seats = [seat_of_v1(p, rank) for p, rank in _sides(recorded.winner, recorded.loser)]
    recorded.ClearField("winner")
    recorded.ClearField("loser")
    recorded.seats.extend(seats)
    return recorded


def as_v2(payload: Message) -> Message:
    """A rating payload in the version-2 shape, whichever shape it was built in (a copy when it
    had to change): for callers handed payloads built in code rather than read from the log."""
    upcast = _UPCAST_OF.get(type(payload))
    if upcast is None or getattr(payload, "seats", None):
        return payload
    copied = type(payload)()
    copied.CopyFrom(payload)
    return upcast(copied)  # type: ignore[no-any-return]


_UPCASTS: tuple[tuple[type[Message], Callable[[Any], Any]], ...] = (
    (pb.RateMatch, rate_match_v2),
    (pb.MatchRated, match_rated_v2),
    (pb.MatchRecorded, match_recorded_v2),
)


_UPCAST_OF: dict[type[Message], Callable[[Any], Any]] = dict(_UPCASTS)


def register(schemas: Schemas = SCHEMAS) -> None:
    """Register every rating payload, version 1 (read only, upcast) and 2 (once per registry)."""
    for message, upcast in _UPCASTS:
        name = message.DESCRIPTOR.full_name
        if schemas.has(name, VERSION):
            continue
        schemas.add_message(message, version=1)
        schemas.add_message(message, version=VERSION, upcast=upcast)
    for message in UNIT_PAYLOADS:
        if not schemas.has(message.DESCRIPTOR.full_name, 1):
            schemas.add_message(message, version=1)


register()
