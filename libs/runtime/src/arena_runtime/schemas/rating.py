"""The payloads of proto/arena/v1/rating.proto: the rating ladders' command and events.

Importing this module registers them with the envelope codec's registry
(:data:`arena_runtime.envelope.SCHEMAS`), beside the match schemas the rating service reads.
It also names the ladders: one stream per game and rating rules, ``ladder-<game>``.
"""

from __future__ import annotations

from google.protobuf.message import Message

from arena_runtime.envelope import SCHEMAS, Schemas
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas import maths_warriors as _maths_warriors  # noqa: F401  (registers)

COMMANDS: tuple[type[Message], ...] = (pb.RateMatch,)
EVENTS: tuple[type[Message], ...] = (pb.MatchRated, pb.MatchRecorded)

#: The ladder of Maths Warriors (Elo of the tournament reference §11).
MATHS_WARRIORS = "maths-warriors"
#: Every game that has a ladder (and so a leaderboard).
GAMES: tuple[str, ...] = (MATHS_WARRIORS,)
LADDER_PREFIX = "ladder-"
RANKED = "ranked"
CASUAL = "casual"


def ladder_stream(game: str) -> str:
    """The stream id of a game's ladder, e.g. ``ladder-maths-warriors``."""
    return f"{LADDER_PREFIX}{game}"


def rate_command_id(match_id: str) -> str:
    """The id of the one command that records a match: a game is rated at most once."""
    return f"rate:{match_id}"


def register(schemas: Schemas = SCHEMAS) -> None:
    """Register every rating payload (once per registry)."""
    schemas.add_messages((*COMMANDS, *EVENTS))


register()
