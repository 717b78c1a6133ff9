"""Digits' pushes as models (docs/protocol.md, "Digits"): the whole game (``digits_game``), the
combat with its report, the answers of a Focus or Training page; described once, for the
protocol's documents and the web client's generated types (:mod:`arena_games.pushes`). The
other event pushes (``digits_<event>``, the event's proto fields) are open objects there.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from arena_games.pushes import Open, Push, absent

Cell = tuple[int, int]
"""[side (0 the player's, 1 the army's), position 0..7]"""


class Digit(Push):
    kind: str
    name: str
    level: int
    tier: int
    atk: int
    hp: int
    reach: bool
    support: bool
    effect: str
    #: Offers only: what it costs.
    price: int = absent()


class Page(Push):
    """An open Focus or Training page: its text and stage, never its answer."""

    text: str
    stage: int
    deadline_ms: int | None


class TrainingPage(Page):
    cell: int


class GameRecord(Push):
    wins: int
    losses: int
    draws: int
    margin: int
    focus_right: int


class Focus(Push):
    questions: int
    index: int
    right: int
    started: bool
    page: Page | None
    button: Literal["start", "continue"]


class Shop(Push):
    gold: int
    right: int
    offers: list[Digit | None]
    bright: Digit | None
    reroll_cost: int
    rerolls: int
    training_used: bool
    training: TrainingPage | None


class ArmyRecord(Push):
    round: int
    wins: int
    losses: int


class Army(Push):
    slate: list[Digit | None]
    shown_as: str
    house: bool
    tutorial: bool
    record: ArmyRecord
    rating: int | None


class Prediction(Open):
    """The tutorial's prediction of an arrangement (its proto message's fields; zeros left
    out)."""

    arrangement: int = 0
    result: str = ""
    margin: int = 0
    exchanges: int = 0


class Faceoff(Push):
    saved: list[Digit | None]
    army: Army | None
    arrangement: int
    arrangements: int
    deadline_ms: int | None
    predict: bool
    predicted: Prediction | None


class DigitsGame(Push):
    """The whole game as the player sees it, after each event."""

    type: Literal["digits_game"]
    match_id: str
    mode: str
    phase: Literal["focus", "shop", "army", "faceoff", "waiting", "over"]
    status: str
    over: bool
    round: int
    last_round: int
    record: GameRecord
    voided: bool
    slate: list[Digit | None]
    ends_ms: int | None
    expires_ms: int | None
    shop_deadline_ms: int | None
    server_time_ms: int
    focus: Focus = absent()
    shop: Shop = absent()
    faceoff: Faceoff = absent()


class Fighter(Push):
    kind: str
    level: int
    atk: int
    hp: int
    shield: int


class Hit(Push):
    from_: Cell = Field(alias="from")
    to: Cell
    hit: int
    damage: int
    ignored: bool
    shield: int


class Effect(Push):
    by: Cell
    to: Cell
    atk: int = absent()
    atk_set: int = absent()
    hp: int = absent()
    shield: int = absent()


class ReportStep(Open):
    """One step of a combat (the engine's report): its start, an opening step, an exchange,
    its end."""

    type: Literal["start", "opening", "exchange", "end"]
    step: str = absent()
    n: int = absent()
    sides: tuple[list[Fighter | None], list[Fighter | None]] = absent()
    hits: list[Hit] = absent()
    effects: list[Effect] = absent()
    falls: list[Cell] = absent()
    result: str = absent()
    end: str = absent()
    hp: tuple[int, int] = absent()


class Report(Push):
    result: str
    margin: int
    exchanges: int
    hp: tuple[int, int]
    end: str
    report: list[ReportStep]


class CombatFought(Open):
    """A round's combat (the event's fields), with its full report for the replay."""

    type: Literal["digits_combat_fought"]
    match_id: str
    round: int
    arrangement: int
    result: str
    margin: int
    exchanges: int
    report: Report = absent()


class FocusAnswered(Open):
    type: Literal["digits_focus_answered"]
    match_id: str
    right: bool
    late: bool


class TrainingAnswered(Open):
    type: Literal["digits_training_answered"]
    match_id: str
    right: bool


PUSH_MODELS: dict[str, Any] = {
    "digits_game": DigitsGame,
    "digits_combat_fought": CombatFought,
    "digits_focus_answered": FocusAnswered,
    "digits_training_answered": TrainingAnswered,
}
