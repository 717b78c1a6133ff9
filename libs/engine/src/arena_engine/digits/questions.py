"""Focus and Training questions: six stages of rising difficulty, every answer in 1..16.

A question is a pure function of (the player's own seed, purpose, round, index), so a replay
draws the same questions and two players never share questions unless they share a seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import DigitsError
from .rng import Rng

ANSWER_MIN, ANSWER_MAX = 1, 16


class QuestionError(DigitsError):
    """A question asked for a stage that does not exist."""


@dataclass(frozen=True, slots=True)
class Question:
    stage: int
    text: str
    answer: int

    def to_json(self) -> dict[str, object]:
        return {"stage": self.stage, "text": self.text, "answer": self.answer}


def _stage1(rng: Rng) -> tuple[str, int]:
    # One addition of two small numbers.
    a, b = rng.between(1, 9), rng.between(1, 7)
    return f"{a} + {b}", a + b


def _stage2(rng: Rng) -> tuple[str, int]:
    # Addition or subtraction up to 20.
    if rng.chance(50):
        a, b = rng.between(2, 20), rng.between(1, 19)
        return f"{a} − {b}", a - b
    a, b = rng.between(3, 12), rng.between(3, 9)
    return f"{a} + {b}", a + b


def _stage3(rng: Rng) -> tuple[str, int]:
    # Small products, or three terms.
    if rng.chance(50):
        a, b = rng.between(2, 8), rng.between(2, 8)
        return f"{a} × {b}", a * b
    a, b, c = rng.between(2, 9), rng.between(2, 9), rng.between(1, 9)
    return f"{a} + {b} − {c}", a + b - c


def _stage4(rng: Rng) -> tuple[str, int]:
    # Exact division, or a product minus a number.
    if rng.chance(50):
        q, d = rng.between(1, 16), rng.between(2, 9)
        return f"{q * d} ÷ {d}", q
    a, b, c = rng.between(2, 9), rng.between(2, 9), rng.between(1, 30)
    return f"{a} × {b} − {c}", a * b - c


def _stage5(rng: Rng) -> tuple[str, int]:
    # Two operations where precedence matters.
    a, b, c = rng.between(10, 40), rng.between(2, 9), rng.between(2, 9)
    if rng.chance(50):
        return f"{a} − {b} × {c}", a - b * c
    q, d = rng.between(1, 9), rng.between(2, 9)
    return f"{q * d} ÷ {d} + {b}", q + b


def _stage6(rng: Rng) -> tuple[str, int]:
    # Brackets and squares.
    kind = rng.below(3)
    if kind == 0:
        a, b, c = rng.between(2, 9), rng.between(2, 9), rng.between(2, 6)
        d = rng.between(10, 60)
        return f"({a} + {b}) × {c} − {d}", (a + b) * c - d
    if kind == 1:
        a, b = rng.between(4, 12), rng.between(2, 9)
        return f"{a}² − {b}²", a * a - b * b
    a, b, c = rng.between(20, 99), rng.between(2, 9), rng.between(2, 9)
    return f"({a} − {b}) ÷ {c}", (a - b) // c if (a - b) % c == 0 else -1


_STAGES: dict[int, Callable[[Rng], tuple[str, int]]] = {
    1: _stage1,
    2: _stage2,
    3: _stage3,
    4: _stage4,
    5: _stage5,
    6: _stage6,
}


def question(seed: int | str, purpose: str, round_no: int, index: int, stage: int) -> Question:
    """The question `index` of `purpose` ("focus" or "training") at `round_no` for `seed`."""
    maker = _STAGES.get(stage)
    if maker is None:
        raise QuestionError("bad_stage")
    rng = Rng(seed, purpose, round_no, index)
    # Draws are repeated until the answer is one of the 16 buttons; the stream is seeded, so the
    # number of repeats is itself deterministic.
    while True:
        text, answer = maker(rng)
        if ANSWER_MIN <= answer <= ANSWER_MAX:
            return Question(stage, text, answer)


def focus_questions(seed: int | str, round_no: int, stage: int, count: int = 6) -> list[Question]:
    return [question(seed, "focus", round_no, i, stage) for i in range(count)]


def training_question(seed: int | str, round_no: int, stage: int) -> Question:
    return question(seed, "training", round_no, 0, stage)
