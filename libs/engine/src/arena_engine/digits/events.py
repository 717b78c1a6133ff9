"""Digits events: the facts a game is made of, each carrying what was drawn or decided."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .questions import Question
from .settings import DigitsSettings
from .slate import Slate


@dataclass(frozen=True, slots=True)
class GameStarted:
    mode: str
    player_seed: int
    shop_seed: int
    room_rounds: int | None
    settings: DigitsSettings
    catalogue_version: str
    #: When a daily challenge stops (the next Paris midnight) or a duel's deadline.
    ends_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RoundsMissed:
    """A room joined late: its first `count` rounds are losses, with no combat and margin 0."""

    count: int


@dataclass(frozen=True, slots=True)
class ExpiryMoved:
    """The game expires at `expires_ms` unless a player action comes first. Moved forward by
    whole hours, so it stays between `expiry_days` and that plus an hour after the last action
    while adding an event at most once an hour."""

    expires_ms: int


@dataclass(frozen=True, slots=True)
class QuestionShown:
    round_no: int
    index: int
    question: Question
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class FocusAnswered:
    round_no: int
    index: int
    answer: int | None  # None: unanswered when the page timed out
    right: bool
    late: bool


@dataclass(frozen=True, slots=True)
class ShopOpened:
    round_no: int
    right: int
    gold: int
    offers: tuple[str, ...]
    bright: str | None


@dataclass(frozen=True, slots=True)
class Bought:
    offer: int | str
    kind: str
    cell: int
    cost: int


@dataclass(frozen=True, slots=True)
class Sold:
    cell: int
    kind: str
    refund: int


@dataclass(frozen=True, slots=True)
class Moved:
    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class Rerolled:
    reroll: int
    offers: tuple[str, ...]
    cost: int


@dataclass(frozen=True, slots=True)
class TrainingShown:
    cell: int
    question: Question
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class TrainingAnswered:
    cell: int
    answer: int | None
    right: bool
    level: int


@dataclass(frozen=True, slots=True)
class ShopEnded:
    saved: Slate
    reserve: int
    opponent: Slate
    opponent_info: dict[str, Any] | None
    faceoff_deadline_ms: int | None


@dataclass(frozen=True, slots=True)
class Arranged:
    arrangement: int


@dataclass(frozen=True, slots=True)
class CombatFought:
    round_no: int
    arrangement: int
    result: str
    margin: int
    exchanges: int


@dataclass(frozen=True, slots=True)
class RoundStarted:
    round_no: int
    #: A room: the round's shop clock (its opening + the room's shop seconds).
    shop_deadline_ms: int | None = None


@dataclass(frozen=True, slots=True)
class GameEnded:
    status: str
    reason: str


@dataclass(frozen=True, slots=True)
class GameVoided:
    """The game leaves leaderboards, prizes and the feed, and its rating changes are taken back.
    `reason` is "too_fast" (decided by the engine, `by` "engine") or "operator" (`by` who)."""

    reason: str
    by: str
    note: str


Event = (
    GameStarted
    | RoundsMissed
    | ExpiryMoved
    | QuestionShown
    | FocusAnswered
    | ShopOpened
    | Bought
    | Sold
    | Moved
    | Rerolled
    | TrainingShown
    | TrainingAnswered
    | ShopEnded
    | Arranged
    | CombatFought
    | RoundStarted
    | GameEnded
    | GameVoided
)
