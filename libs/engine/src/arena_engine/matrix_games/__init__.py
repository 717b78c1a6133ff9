"""Matrix Games: eight cogs, one yard, seven 2x2/3x3 games played by collecting tokens.

A pure, deterministic engine exact to the public reference implementation
(Metta-AI/cogame-matrix-games): the same seed and the same orders give the same frames,
events, indices and replay bytes.

Typical use::

    from arena_engine.matrix_games import Settings, play_scripted
    sim = play_scripted(Settings(matrix="prisoners-dilemma", seed=10), ["counter"] * 8)
    sim.scores_cp

The event-sourced surface is ``decide(sim, command)`` and ``apply(sim, event)``; unlike the other
games ``apply`` mutates the Sim it is given (see ``game.apply``), and the seed lives in the
settings, so there is no context. ``replay_episode`` rebuilds a Sim from an ``EpisodeLog``;
``event_to_dict`` / ``event_from_dict`` are the JSON form of the events.
"""

from arena_engine.matrix_games.episode import EpisodeLog, play_scripted, replay_episode
from arena_engine.matrix_games.errors import MatrixGamesError, OrderError, SettingsError
from arena_engine.matrix_games.game import (
    BeatPlayed,
    Command,
    EndEpisode,
    EpisodeEnded,
    EpisodeStarted,
    Event,
    PlayBeat,
    Rejection,
    StartEpisode,
    apply,
    decide,
    event_from_dict,
    event_to_dict,
)
from arena_engine.matrix_games.kernel import Sim
from arena_engine.matrix_games.orders import INTENTS, Order
from arena_engine.matrix_games.policies import POLICIES, scripted_order
from arena_engine.matrix_games.replay import read_replay, write_replay
from arena_engine.matrix_games.settings import Settings
from arena_engine.matrix_games.variants import VARIANTS, Variant, variant_named

__all__ = [
    "INTENTS",
    "POLICIES",
    "VARIANTS",
    "BeatPlayed",
    "Command",
    "EndEpisode",
    "EpisodeEnded",
    "EpisodeLog",
    "EpisodeStarted",
    "Event",
    "MatrixGamesError",
    "Order",
    "OrderError",
    "PlayBeat",
    "Rejection",
    "Settings",
    "SettingsError",
    "Sim",
    "StartEpisode",
    "Variant",
    "apply",
    "decide",
    "event_from_dict",
    "event_to_dict",
    "play_scripted",
    "read_replay",
    "replay_episode",
    "scripted_order",
    "variant_named",
    "write_replay",
]
