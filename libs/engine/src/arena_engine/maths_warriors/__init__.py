"""Maths Warriors: the rules (tournament reference and rulebook, rules-version 2026.07.31).

The event-sourced surface is :func:`decide` and :func:`apply` over :class:`GameState` (``replay``
folds events, ``verify`` re-decides recorded commands); ``event_to_dict`` / ``event_from_dict``
are the JSON form. The solver, AI, puzzles and review are built on the same rules.
"""

from .clocks import ClockSettings
from .commands import Command, Context, Forfeit, GameClockExpiry, MoveClockTimeout, Start
from .dice import DICE, Die
from .errors import ErrorCode, MathsWarriorsError, Rejection
from .events import (
    Event,
    GameEnded,
    GameStarted,
    MindAttacked,
    StrengthAttacked,
    TurnSkipped,
    event_from_dict,
    event_to_dict,
)
from .game import apply, decide, replay, run, verify
from .moves import DieToken, Mind, Move, Skip, Strength
from .ruleset import RULES_TAG, Ruleset
from .state import GameState, Status, WinReason

__all__ = [
    "DICE",
    "RULES_TAG",
    "ClockSettings",
    "Command",
    "Context",
    "Die",
    "DieToken",
    "ErrorCode",
    "Event",
    "Forfeit",
    "GameClockExpiry",
    "GameEnded",
    "GameStarted",
    "GameState",
    "MathsWarriorsError",
    "Mind",
    "MindAttacked",
    "Move",
    "MoveClockTimeout",
    "Rejection",
    "Ruleset",
    "Skip",
    "Start",
    "Status",
    "Strength",
    "StrengthAttacked",
    "TurnSkipped",
    "WinReason",
    "apply",
    "decide",
    "event_from_dict",
    "event_to_dict",
    "replay",
    "run",
    "verify",
]
