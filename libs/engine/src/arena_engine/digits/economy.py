"""Gold: Focus income, prices, selling, the reserve, and the tier odds of each round."""

from __future__ import annotations

from .errors import DigitsError
from .settings import DEFAULT_SETTINGS, DigitsSettings


class EconomyError(DigitsError):
    """An input outside the rules' range."""


def income(right: int, carried: int, settings: DigitsSettings = DEFAULT_SETTINGS) -> int:
    """A round's gold: base + 1 per right answer + the perfect bonus + the capped reserve."""
    if not 0 <= right <= settings.focus_questions:
        raise EconomyError("bad_right_count")
    if carried < 0:
        raise EconomyError("bad_carried")
    perfect = settings.perfect_bonus if right == settings.focus_questions else 0
    return settings.base_income + right + perfect + reserve(carried, settings)


def reserve(gold_left: int, settings: DigitsSettings = DEFAULT_SETTINGS) -> int:
    """Gold kept from the end of a shop to the next round."""
    return min(max(gold_left, 0), settings.reserve_cap)


def price(tier: int, settings: DigitsSettings = DEFAULT_SETTINGS) -> int:
    if tier not in (1, 2, 3, 4):
        raise EconomyError("bad_tier")
    return settings.prices[tier - 1]


def sell_value(tier: int, settings: DigitsSettings = DEFAULT_SETTINGS) -> int:
    """Half the price, rounded down, whatever the level."""
    return price(tier, settings) // 2


def tier_odds(round_no: int, settings: DigitsSettings = DEFAULT_SETTINGS) -> tuple[int, ...]:
    if round_no < 1:
        raise EconomyError("bad_round")
    return settings.odds_for(round_no)


def highest_open_tier(round_no: int, settings: DigitsSettings = DEFAULT_SETTINGS) -> int:
    odds = tier_odds(round_no, settings)
    return max(t for t, p in enumerate(odds, 1) if p > 0)


def question_seconds(stage: int, settings: DigitsSettings = DEFAULT_SETTINGS) -> int:
    if not 1 <= stage <= len(settings.question_seconds):
        raise EconomyError("bad_stage")
    return settings.seconds_for(stage)
