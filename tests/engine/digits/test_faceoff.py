"""The 384 arrangements and predict()."""

from __future__ import annotations

import pytest
from arena_engine.digits.combat import fight
from arena_engine.digits.faceoff import (
    ARRANGEMENT_COUNT,
    Arrangement,
    ArrangementError,
    arrange,
    best_arrangement,
    predict,
    predict_all,
)
from arena_engine.digits.slate import Digit, make_slate

FULL = make_slate(
    [Digit(k) for k in ("plus", "minus", "twins", "even", "odd", "abacus", "zero", "carry")]
)
OPPONENT = make_slate({1: Digit("delta", 2), 2: Digit("half"), 5: Digit("square"), 7: Digit("pi")})


def test_384_distinct_arrangements_of_a_full_slate() -> None:
    arranged = {arrange(FULL, i) for i in range(ARRANGEMENT_COUNT)}
    assert ARRANGEMENT_COUNT == 384 and len(arranged) == 384
    assert arrange(FULL, 0) == FULL


def test_columns_keep_their_two_digits() -> None:
    for i in range(ARRANGEMENT_COUNT):
        out = arrange(FULL, i)
        columns = {frozenset((out[c], out[c + 4])) for c in range(4)}
        assert columns == {frozenset((FULL[c], FULL[c + 4])) for c in range(4)}


def test_index_round_trip_and_bad_index() -> None:
    for i in (0, 1, 17, 383):
        assert Arrangement.from_index(i).index == i
    with pytest.raises(ArrangementError):
        Arrangement.from_index(384)


def test_predict_is_the_combat_of_the_arranged_slate() -> None:
    results = predict_all(FULL, OPPONENT)
    assert len(results) == 384
    for i in (0, 5, 200, 383):
        assert predict(FULL, i, OPPONENT) == results[i] == fight(arrange(FULL, i), OPPONENT)
    best = best_arrangement(FULL, OPPONENT)
    rank = {"win": 2, "draw": 1, "loss": 0}
    assert all(
        (rank[r.result], r.margin) <= (rank[results[best].result], results[best].margin)
        for r in results
    )
