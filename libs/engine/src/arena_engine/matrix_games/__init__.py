"""Matrix Games: eight cogs, one yard, seven 2x2/3x3 games played by collecting tokens.

A pure, deterministic engine exact to the public reference implementation
(Metta-AI/cogame-matrix-games): the same seed and the same orders give the same frames,
events, indices and replay bytes.

Typical use::

    from arena_engine.matrix_games import Settings, play_scripted
    sim = play_scripted(Settings(matrix="prisoners-dilemma", seed=10), ["counter"] * 8)
    sim.scores_cp
"""

from arena_engine.matrix_games.episode import EpisodeLog, play_scripted, replay_episode
from arena_engine.matrix_games.errors import MatrixGamesError, OrderError, SettingsError
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
    "EpisodeLog",
    "MatrixGamesError",
    "Order",
    "OrderError",
    "Settings",
    "SettingsError",
    "Sim",
    "Variant",
    "play_scripted",
    "read_replay",
    "replay_episode",
    "scripted_order",
    "variant_named",
    "write_replay",
]
