"""The Maze: two players race through a hidden maze for their key and out of their exit.

The event-sourced surface is ``decide(state, command, context)`` and ``apply(state, event)``
over the frozen ``MazeState`` (None before the start; ``replay`` folds events, ``verify``
re-decides recorded commands); ``event_to_dict`` / ``event_from_dict`` are the JSON form. Views
are projected per role (``project``) and cut into records of at most 512 bytes
(``view_records``); ``reassemble`` puts them back together. Rules: docs/rules/maze.md.
"""

from .bot import Explorer
from .commands import (
    OBSERVER,
    Action,
    Advance,
    Command,
    Context,
    Drop,
    Enqueue,
    Forfeit,
    Move,
    ProcessNext,
    Role,
    Start,
    Submit,
)
from .errors import ErrorCode, MazeError, Rejection
from .events import Event, event_from_dict, event_to_dict
from .game import apply, decide, next_deadline, replay, run, verify
from .generate import generate_setup
from .layout import MazeObject, Setup
from .records import (
    MAX_RECORD_BYTES,
    RECORD_VERSION,
    reassemble,
    view_record_values,
    view_records,
)
from .settings import DEFAULT_SETTINGS, MazeSettings
from .state import Key, MazeState, PlayerState, Position, Result
from .views import ObserverView, PlayerView, View, project

__all__ = [
    "DEFAULT_SETTINGS",
    "MAX_RECORD_BYTES",
    "OBSERVER",
    "RECORD_VERSION",
    "Action",
    "Advance",
    "Command",
    "Context",
    "Drop",
    "Enqueue",
    "ErrorCode",
    "Event",
    "Explorer",
    "Forfeit",
    "Key",
    "MazeError",
    "MazeObject",
    "MazeSettings",
    "MazeState",
    "Move",
    "ObserverView",
    "PlayerState",
    "PlayerView",
    "Position",
    "ProcessNext",
    "Rejection",
    "Result",
    "Role",
    "Setup",
    "Start",
    "Submit",
    "View",
    "apply",
    "decide",
    "event_from_dict",
    "event_to_dict",
    "generate_setup",
    "next_deadline",
    "project",
    "reassemble",
    "replay",
    "run",
    "verify",
    "view_record_values",
    "view_records",
]
