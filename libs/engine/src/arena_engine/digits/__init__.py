"""Digits: a maths auto-battler against saved armies, as pure, seeded rules.

Modules: `catalogue` (the twenty kinds, versioned data), `settings` (tunable numbers), `rng`,
`economy`, `questions`, `shop`, `slate`, `training`, `targeting`, `combat`, `reference_combat`,
`faceoff`, `status`, `commands`, `events`, `codec`, `game` (decide/apply), `bots`, `ghosts`,
`balance` and `vectors` (rule-vector ops).
"""

from .catalogue import CURRENT_VERSION, Catalogue, Kind, load
from .combat import CombatResult, fight
from .faceoff import ARRANGEMENT_COUNT, Arrangement, arrange, predict, predict_all
from .slate import Digit, Slate

__all__ = [
    "ARRANGEMENT_COUNT",
    "CURRENT_VERSION",
    "Arrangement",
    "Catalogue",
    "CombatResult",
    "Digit",
    "Kind",
    "Slate",
    "arrange",
    "fight",
    "load",
    "predict",
    "predict_all",
]
