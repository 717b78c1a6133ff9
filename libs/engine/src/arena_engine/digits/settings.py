"""Every number of the Digits rules that an organiser may tune, with the published defaults.

A game records the settings it was started with, so changing a default never changes a game
already under way, and replay uses the recorded values.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Tier odds in percent (tier 1..4) by round; rounds past the table use its last row.
DEFAULT_ODDS: tuple[tuple[int, int, int, int], ...] = (
    (100, 0, 0, 0),
    (100, 0, 0, 0),
    (60, 40, 0, 0),
    (60, 40, 0, 0),
    (30, 40, 30, 0),
    (30, 40, 30, 0),
    (15, 30, 30, 25),
)

#: Focus stage (1..6) by round (1..12); rounds past the table use its last stage.
DEFAULT_STAGE_BY_ROUND: tuple[int, ...] = (1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6)


@dataclass(frozen=True, slots=True)
class DigitsSettings:
    win_target: int = 8
    loss_limit: int = 3
    max_rounds: int = 12
    tutorial_rounds: int = 3
    focus_questions: int = 6
    base_income: int = 3
    perfect_bonus: int = 1
    reserve_cap: int = 5
    offers_per_draw: int = 5
    reroll_cost: int = 1
    prices: tuple[int, int, int, int] = (2, 3, 4, 5)
    odds: tuple[tuple[int, int, int, int], ...] = DEFAULT_ODDS
    stage_by_round: tuple[int, ...] = DEFAULT_STAGE_BY_ROUND
    #: Seconds per Focus question by stage 1..6.
    question_seconds: tuple[int, ...] = (6, 6, 6, 8, 8, 8)
    training_seconds: int = 10
    #: The training question is this many stages above the round's Focus stage (6 at most).
    training_stage_offset: int = 1
    max_exchanges: int = 12
    faceoff_seconds: int | None = 60
    catalogue_version: str = "digits-catalogue-v1"
    #: The round counts a room's host may pick, and the default.
    room_round_choices: tuple[int, ...] = (6, 8, 10, 12)
    room_rounds_default: int = 8
    #: A room's shop clock, from the round's opening (Focus included) to the end of the shop.
    room_shop_seconds: int = 120
    #: A game with no player action for this long ends `closed`, reason `expired`.
    expiry_days: int = 7
    #: A right Focus or Training answer sooner than this after the question was shown voids
    #: the game: no person reads, works out and clicks an answer that fast.
    human_answer_ms: int = 300

    def odds_for(self, round_no: int) -> tuple[int, int, int, int]:
        return self.odds[min(round_no, len(self.odds)) - 1]

    def stage_for(self, round_no: int) -> int:
        return self.stage_by_round[min(round_no, len(self.stage_by_round)) - 1]

    def training_stage_for(self, round_no: int) -> int:
        return min(6, self.stage_for(round_no) + self.training_stage_offset)

    def seconds_for(self, stage: int) -> int:
        return self.question_seconds[stage - 1]


DEFAULT_SETTINGS = DigitsSettings()
