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
    room_rounds: int | None = None  # a room: the host's pick; None for the default (8)
    settings: DigitsSettings = DEFAULT_SETTINGS
    #: A room joined late: its first `missed_rounds` rounds count as losses.
    missed_rounds: int = 0
    #: A duel's deadline (the daily challenge's midnight is worked out by the engine).
    ends_ms: int | None = None


@dataclass(frozen=True, slots=True)
class OpenRound:
    """Timer (a room's clock): round `round_no` opened for everyone at `opened_ms`; the room's
    shop clock runs from then, Focus included."""

    round_no: int
    opened_ms: int


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
class ShopTimeout:
    """Timer: the room's shop clock of `round_no` ran out. Questions not answered count as
    wrong (a Focus never started gives 0 right), an open Training as wrong, and the shop ends;
    the context carries the opposing army, as for EndShop."""

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
    """The game stops where it is. "forfeit" is the player's; the others are timers, due at the
    time the game recorded: "midnight" (a daily challenge), "deadline" (a duel), "expired" (no
    action for `expiry_days`). A Face-off open at midnight or at the deadline is fought first."""

    reason: str


@dataclass(frozen=True, slots=True)
class Void:
    """An operator takes the game out of leaderboards, prizes and the feed (also once over)."""

    by: str
    why: str


Command = (
    StartGame
    | OpenRound
    | StartFocus
    | AnswerFocus
    | QuestionTimeout
    | ShopTimeout
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
    | Void
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
