"""Gold, tier odds, offers and questions."""

from __future__ import annotations

import re

import pytest
from arena_engine.digits import economy
from arena_engine.digits.catalogue import TIERS, load
from arena_engine.digits.questions import focus_questions, question, training_question
from arena_engine.digits.settings import DigitsSettings
from arena_engine.digits.shop import bright_offer, offers

CAT = load()


def test_catalogue_has_twenty_kinds_five_per_tier() -> None:
    assert len(CAT.kinds) == 20 and CAT.version == "digits-catalogue-v1"
    assert all(len(CAT.of_tier(t)) == 5 for t in TIERS)
    assert {k.kind for k in CAT.kinds if k.support} == {"plus", "double", "power"}


def test_income_and_errors() -> None:
    assert economy.income(6, 0) == 10 and economy.income(0, 0) == 3
    assert economy.income(3, 7) == 11
    with pytest.raises(economy.EconomyError) as err:
        economy.income(7, 0)
    assert err.value.code == "bad_right_count"


def test_settings_are_tunable() -> None:
    rich = DigitsSettings(base_income=5, reserve_cap=9)
    assert economy.income(0, 7, rich) == 12


def test_offers_pure_function_of_seed_round_reroll() -> None:
    assert offers(42, 5, 2) == offers(42, 5, 2)
    assert offers(42, 5, 2) != offers(42, 5, 3) or offers(42, 5, 2) != offers(42, 6, 2)
    draws = [o for seed in range(50) for o in offers(seed, 1, 0)]
    assert {CAT[o].tier for o in draws} == {1}
    late = [CAT[o].tier for seed in range(200) for o in offers(seed, 9, 0)]
    share = [late.count(t) / len(late) for t in TIERS]
    assert all(abs(s - p / 100) < 0.06 for s, p in zip(share, (15, 30, 30, 25), strict=True))


def test_bright_offer_from_the_highest_open_tier() -> None:
    assert CAT[bright_offer(3, 1)].tier == 1
    assert CAT[bright_offer(3, 4)].tier == 2
    assert CAT[bright_offer(3, 12)].tier == 4
    assert bright_offer(3, 12) == bright_offer(3, 12)


def _evaluate(text: str) -> int:
    expr = text.replace("×", "*").replace("÷", "//").replace("−", "-")
    expr = re.sub(r"(\d+)²", r"(\1**2)", expr)
    assert re.fullmatch(r"[\d+\-*/() ]+", expr)
    return int(eval(expr))


@pytest.mark.parametrize("stage", [1, 2, 3, 4, 5, 6])
def test_questions_answers_in_1_to_16_and_correct(stage: int) -> None:
    for seed in range(30):
        for q in focus_questions(seed, 2, stage):
            assert 1 <= q.answer <= 16
            assert _evaluate(q.text) == q.answer, q
    assert focus_questions(9, 4, stage) == focus_questions(9, 4, stage)


def test_training_question_from_own_seed() -> None:
    assert training_question(1, 3, 4) == question(1, "training", 3, 0, 4)
    assert training_question(1, 3, 4) != training_question(2, 3, 4) or training_question(
        1, 4, 4
    ) != training_question(2, 4, 4)
