"""A ladder: one stream per game and rating rules, whose fold is every player's rating.

``decide(ladder, command)`` answers a ``RateMatch`` with ``MatchRated`` (a ranked game between
two people, rated with the engine's Elo), ``MatchRecorded`` (a casual game, or a ranked one with
an AI seat: history only) or a :class:`Rejection`; ``apply(ladder, event)`` folds an event in.
Ratings are never read from anywhere but this fold, and every event carries the ratings before
and after, so a projection needs nothing but the event to show them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena_engine import rating as elo
from arena_runtime.envelope import Command, Event
from arena_runtime.proto_gen.arena.v1 import rating_pb2 as pb
from arena_runtime.schemas.rating import CASUAL, LADDER_PREFIX, RANKED
from arena_runtime.schemas.rating import GAMES as LADDER_GAMES
from arena_runtime.streams import Decision, Rejection

#: How a game may end (GameEnded.reason); forfeits and timeouts are rated like any win.
REASONS = frozenset({"all_captured", "timeout", "forfeit"})
MODES = frozenset({RANKED, CASUAL})
#: Games that have a ladder (the Elo of each lives in arena_engine.rating).
GAMES = frozenset(LADDER_GAMES)
MAX_ID_LENGTH = 200

# Rejection codes.
WRONG_LADDER = "wrong_ladder"
INVALID_MATCH = "invalid_match"
INVALID_MODE = "invalid_mode"
INVALID_REASON = "invalid_reason"
INVALID_PLAYERS = "invalid_players"
SAME_PLAYER = "same_player"
ALREADY_RECORDED = "already_recorded"
UNKNOWN_COMMAND = "unknown_command"


@dataclass
class Ladder:
    """A ladder's state: each rated player's rating and the matches already recorded.

    ``apply`` updates it in place and returns it: a ladder holds every player and every match,
    and copying that per event would make folding a long ladder quadratic. The stream runner and
    ``fold`` apply each event exactly once, in order; ``decide`` only reads.
    """

    game: str
    ratings: dict[str, int] = field(default_factory=dict)
    recorded: set[str] = field(default_factory=set)

    def rating(self, player_id: str) -> int:
        return self.ratings.get(player_id, elo.START_RATING)


def initial(stream: str) -> Ladder:
    """The empty ladder of stream ``ladder-<game>``."""
    return Ladder(stream.removeprefix(LADDER_PREFIX))


def _bad_player(player: pb.LadderPlayer) -> bool:
    return (
        not player.player_id or len(player.player_id) > MAX_ID_LENGTH or player.seat not in (1, 2)
    )


def check(ladder: Ladder, request: pb.RateMatch) -> Rejection | None:
    """Why ``request`` cannot be recorded on ``ladder``, or None."""
    if request.game != ladder.game or ladder.game not in GAMES:
        return Rejection(WRONG_LADDER, f"{request.game!r} is not on ladder {ladder.game!r}")
    if not request.match_id or len(request.match_id) > MAX_ID_LENGTH:
        return Rejection(INVALID_MATCH, "match_id must be 1-200 characters")
    if request.mode not in MODES:
        return Rejection(INVALID_MODE, f"mode must be ranked or casual, not {request.mode!r}")
    if request.reason not in REASONS:
        return Rejection(INVALID_REASON, f"unknown end of game {request.reason!r}")
    if not request.HasField("winner") or not request.HasField("loser"):
        return Rejection(INVALID_PLAYERS, "a result names its winner and its loser")
    winner, loser = request.winner, request.loser
    if _bad_player(winner) or _bad_player(loser) or winner.seat == loser.seat:
        return Rejection(INVALID_PLAYERS, "two seats, 1 and 2, each with a player id")
    if request.winner.player_id == request.loser.player_id:
        return Rejection(SAME_PLAYER, "a player cannot win against themselves")
    if request.match_id in ladder.recorded:
        return Rejection(ALREADY_RECORDED, f"match {request.match_id} is already on the ladder")
    return None


def record(ladder: Ladder, request: pb.RateMatch) -> pb.MatchRated | pb.MatchRecorded | Rejection:
    """The event recording ``request``: rated only for ranked games between two people."""
    refused = check(ladder, request)
    if refused is not None:
        return refused
    unrated = CASUAL if request.mode == CASUAL else "ai_seat"
    if request.mode == RANKED and not (request.winner.ai or request.loser.ai):
        winner_before = ladder.rating(request.winner.player_id)
        loser_before = ladder.rating(request.loser.player_id)
        result = elo.elo_maths_warriors(winner_before, loser_before)
        return pb.MatchRated(
            match_id=request.match_id,
            game=request.game,
            winner=request.winner,
            loser=request.loser,
            winner_before=winner_before,
            winner_after=result.winner_after,
            loser_before=loser_before,
            loser_after=result.loser_after,
            delta=result.delta,
            reason=request.reason,
            ended_at_ms=request.ended_at_ms,
        )
    return pb.MatchRecorded(
        match_id=request.match_id,
        game=request.game,
        mode=request.mode,
        winner=request.winner,
        loser=request.loser,
        reason=request.reason,
        ended_at_ms=request.ended_at_ms,
        unrated_reason=unrated,
    )


def decide(ladder: Ladder, command: Command) -> Decision:
    if not isinstance(command.payload, pb.RateMatch):
        return Rejection(UNKNOWN_COMMAND, f"a ladder does not take {command.type}")
    decided = record(ladder, command.payload)
    return decided if isinstance(decided, Rejection) else [decided]


def apply(ladder: Ladder, event: Event) -> Ladder:
    payload = event.payload
    if isinstance(payload, pb.MatchRated):
        ladder.ratings[payload.winner.player_id] = payload.winner_after
        ladder.ratings[payload.loser.player_id] = payload.loser_after
        ladder.recorded.add(payload.match_id)
    elif isinstance(payload, pb.MatchRecorded):
        ladder.recorded.add(payload.match_id)
    return ladder
