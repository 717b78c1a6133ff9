"""Typed refusals of the Maze. The codes of a refused command are exactly the rule vectors'."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ErrorCode(StrEnum):
    # A command refused before it takes a queue slot (no command sequence is assigned).
    OBSERVER = "observer"
    QUEUE_FULL = "queue_full"
    # A queued command refused when it is processed, in the order the first that applies wins.
    FINISHED = "finished"
    COUNTDOWN = "countdown"
    OUT_OF_ORDER = "out_of_order"
    COOLDOWN = "cooldown"
    WALL = "wall"
    NOTHING_TO_DROP = "nothing_to_drop"
    # Setups, settings, life cycle and wire forms.
    BAD_MAZE = "bad_maze"
    INVALID_SETTING = "invalid_setting"
    NOT_STARTED = "not_started"
    ALREADY_STARTED = "already_started"
    QUEUE_EMPTY = "queue_empty"
    BAD_COMMAND = "bad_command"
    BAD_RECORDS = "bad_records"
    UNKNOWN_EVENT = "unknown_event"


#: The refusals of a processed command, in the order of precedence the vectors define.
PROCESSING_ORDER: tuple[ErrorCode, ...] = (
    ErrorCode.FINISHED,
    ErrorCode.COUNTDOWN,
    ErrorCode.OUT_OF_ORDER,
    ErrorCode.COOLDOWN,
    ErrorCode.WALL,
    ErrorCode.NOTHING_TO_DROP,
)


@dataclass(frozen=True)
class Rejection:
    """A refused command: nothing changed."""

    code: ErrorCode
    message: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"error": self.code.value}


class MazeError(ValueError):
    """Raised where a Rejection cannot be returned (parsing, construction); ``code`` is stable."""

    def __init__(self, code: ErrorCode, message: str = "") -> None:
        super().__init__(f"{code.value}: {message}" if message else code.value)
        self.code = code
        self.message = message
