"""Digits: a maths auto-battler against saved armies, as pure, seeded rules.

The event-sourced surface is `decide(state, command, context)` and `apply(state, event)` over the
frozen `GameState` (`replay` folds a list of events); `event_to_dict` / `event_from_dict` are the
JSON form. Every typed error is a `DigitsError` with a stable `code`.

Modules: `catalogue` (the twenty kinds, versioned data), `settings` (tunable numbers), `rng`,
`errors`, `economy`, `questions`, `shop`, `slate`, `training`, `targeting`, `combat`,
`reference_combat`, `faceoff`, `status`, `commands`, `events`, `codec`, `game` (decide/apply),
`bots`, `ghosts`, `balance` and `vectors` (rule-vector ops, with `vectors_play`,
`vectors_ladder`, `vector_input`). What the services decide around games: `paris` (Paris time),
`ghost_selection` and `schedules` (opponents), `ladder` (rating, seasons, take-backs),
`leaderboards`, `duels` and `credits` (the credits ledger).
"""

from .catalogue import CURRENT_VERSION, Catalogue, Kind, load
from .codec import event_from_dict, event_to_dict
from .combat import CombatResult, fight
from .commands import Command, Context, Rejection
from .errors import DigitsError
from .events import Event
from .faceoff import ARRANGEMENT_COUNT, Arrangement, arrange, predict, predict_all
from .game import GameState, apply, decide, replay
from .settings import DEFAULT_SETTINGS, DigitsSettings
from .slate import Digit, Slate

__all__ = [
    "ARRANGEMENT_COUNT",
    "CURRENT_VERSION",
    "DEFAULT_SETTINGS",
    "Arrangement",
    "Catalogue",
    "CombatResult",
    "Command",
    "Context",
    "Digit",
    "DigitsError",
    "DigitsSettings",
    "Event",
    "GameState",
    "Kind",
    "Rejection",
    "Slate",
    "apply",
    "arrange",
    "decide",
    "event_from_dict",
    "event_to_dict",
    "fight",
    "load",
    "predict",
    "predict_all",
    "replay",
]
