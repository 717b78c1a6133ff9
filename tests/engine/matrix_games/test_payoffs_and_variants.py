"""Payoffs (truncating centipoints), best responses and variant lookup."""

from __future__ import annotations

import pytest
from arena_engine.matrix_games import SettingsError, variant_named
from arena_engine.matrix_games.variants import (
    VARIANTS,
    argmax_lowest,
    mix_permille,
    payoff_cp,
    tdiv,
)


@pytest.mark.parametrize(
    ("name", "row", "col", "expected"),
    [
        ("prisoners-dilemma", [2, 6], [7, 2], (366, 102)),
        ("running-with-scissors", [3, 1, 1], [1, 3, 1], (-48, 48)),
        ("running-with-scissors", [2, 1, 1], [1, 2, 1], (-18, 18)),
        ("running-with-scissors", [3, 1, 1], [1, 1, 3], (48, -48)),
        ("chicken", [4, 1], [1, 4], (128, 308)),
        ("stag-hunt", [5, 1], [1, 5], (88, 222)),
        ("bach-or-stravinsky", [5, 1], [1, 5], (69, 69)),
        ("pure-coordination", [2, 1, 1], [1, 2, 1], (31, 31)),
        ("rationalizable-coordination", [2, 1, 1], [1, 2, 1], (56, 56)),
    ],
)
def test_payoffs(name: str, row: list[int], col: list[int], expected: tuple[int, int]) -> None:
    assert payoff_cp(variant_named(name), row, col) == expected


def test_truncation_toward_zero() -> None:
    assert tdiv(-7, 2) == -3 and tdiv(7, 2) == 3 and tdiv(-300, 16) == -18


def test_best_responses() -> None:
    assert VARIANTS["running-with-scissors"].best_response_row == (1, 2, 0)
    assert VARIANTS["running-with-scissors"].best_response_col == (1, 2, 0)
    assert VARIANTS["prisoners-dilemma"].best_response_row == (1, 1)
    assert VARIANTS["chicken"].best_response_col == (1, 0)
    assert VARIANTS["stag-hunt"].best_response_row == (0, 1)
    assert VARIANTS["bach-or-stravinsky"].best_response_col == (0, 1)
    assert VARIANTS["rationalizable-coordination"].best_response_row == (0, 1, 2)


def test_argmax_and_mix() -> None:
    assert argmax_lowest([3, 3, 1]) == 0
    assert argmax_lowest([1, 3, 3]) == 1
    assert argmax_lowest([0, 0, 0]) == 0
    assert mix_permille([1, 8]) == [111, 888]


def test_rws_is_zero_sum_and_bos_is_not_transposed() -> None:
    rws = VARIANTS["running-with-scissors"]
    assert all(rws.col_pay[i][j] == -rws.row_pay[i][j] for i in range(3) for j in range(3))
    bos = VARIANTS["bach-or-stravinsky"]
    assert bos.col_pay == ((2, 0), (0, 3)) and bos.cross_camp_only


def test_names_are_trimmed_and_case_folded_and_unknown_is_an_error() -> None:
    assert variant_named("  Stag-Hunt ").name == "stag-hunt"
    with pytest.raises(SettingsError) as err:
        variant_named("rock-paper")
    assert err.value.code == "unknown_variant"
    assert len(VARIANTS) == 7
