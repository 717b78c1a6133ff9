"""A match's ``matrix.replay.v1``, regenerated from its events.

The log keeps the engine's compact form (the settings with the seed, the eight orders of each
beat, the end), so the replay is the engine's: :func:`replay_bytes` folds them with
``replay_episode`` and writes them with ``write_replay``, byte for byte what the engine writes
for that seed and those orders. Notes stay in the order events, as in the reference's stored
golden replay (``include_notes=False`` gives the reference's newer form without them).
"""

from __future__ import annotations

from collections.abc import Iterable

from arena_engine.matrix_games import EpisodeLog, write_replay
from arena_engine.matrix_games.episode import replay_episode
from arena_runtime.readmodels.queries import MatchRecord
from google.protobuf.message import Message

from arena_games.contract import GameError
from arena_games.matrix_games import wire
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb

NOT_STARTED = "not_started"


def episode_log(events: Iterable[Message]) -> EpisodeLog:
    """The engine's compact episode of a match's events (any others are skipped)."""
    log: EpisodeLog | None = None
    for event in events:
        event = wire.unwrapped(event)
        if isinstance(event, pb.EpisodeStarted):
            log = EpisodeLog(wire.engine_settings(event.settings), list(event.policy_names))
        elif log is not None and isinstance(event, pb.BeatPlayed):
            log.beats.append([wire.engine_order(order) for order in event.orders])
        elif log is not None and isinstance(event, pb.EpisodeEnded):
            log.reason = event.reason
    if log is None:
        raise GameError(NOT_STARTED, "the match has no EpisodeStarted")
    return log


def replay_bytes(events: Iterable[Message], *, include_notes: bool = True) -> bytes:
    """The replay of the beats played so far (the whole episode once it ended)."""
    sim = replay_episode(episode_log(events))
    return write_replay(sim, include_notes=include_notes)


def replay(record: MatchRecord) -> bytes:
    """The module's replay for the read API: ``matrix.replay.v1`` of the match's events."""
    return replay_bytes(e.payload for e in record.events)
