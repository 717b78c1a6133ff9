"""Digits commands (what a player or a timer asks), the context they come with, and Rejection."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .settings import DEFAULT_SETTINGS, DigitsSettings
from .slate import Slate


@dataclass(frozen=True, slots=True)
class StartGame:
    mode: str
    player_seed: int
    shop_seed: int
    room_rounds: int | None = None
    settings: DigitsSettings = DEFAULT_SETTINGS


@dataclass(frozen=True, slots=True)
class StartFocus:
    """ "Start the Focus" or "Continue": shows the first question of the round."""


@dataclass(frozen=True, slots=True)
class AnswerFocus:
    answer: int


@dataclass(frozen=True, slots=True)
class QuestionTimeout:
    """Timer: the question `index` of `round_no` is past its deadline."""

    round_no: int
    index: int


@dataclass(frozen=True, slots=True)
class CloseFocus:
    """Timer: the Focus window of the round is over (a room's shop clock runs from the round's
    opening, Focus included); questions not answered by now count as wrong."""

    round_no: int


@dataclass(frozen=True, slots=True)
class Buy:
    offer: int | str  # 0..4, or "bright"
    cell: int | None = None  # 1..8; None for the default cell


@dataclass(frozen=True, slots=True)
class Sell:
    cell: int


@dataclass(frozen=True, slots=True)
class Move:
    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class Reroll:
    pass


@dataclass(frozen=True, slots=True)
class Train:
    cell: int


@dataclass(frozen=True, slots=True)
class AnswerTraining:
    answer: int


@dataclass(frozen=True, slots=True)
class TrainingTimeout:
    round_no: int


@dataclass(frozen=True, slots=True)
class EndShop:
    """Ends the shop; the context carries the opposing army drawn for this round."""


@dataclass(frozen=True, slots=True)
class Arrange:
    arrangement: int


@dataclass(frozen=True, slots=True)
class Fight:
    """The player confirms the Face-off, or its timer fires."""


@dataclass(frozen=True, slots=True)
class Stop:
    """The game stops where it is: "midnight", "deadline", "expired" or "forfeit"."""

    reason: str


Command = (
    StartGame
    | StartFocus
    | AnswerFocus
    | QuestionTimeout
    | Buy
    | Sell
    | Move
    | Reroll
    | Train
    | AnswerTraining
    | TrainingTimeout
    | EndShop
    | Arrange
    | Fight
    | Stop
)


@dataclass(frozen=True, slots=True)
class Context:
    now_ms: int
    opponent: Slate | None = None
    opponent_info: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused command: a stable code, and nothing changed."""

    code: str

    def to_dict(self) -> dict[str, str]:
        return {"error": self.code}
