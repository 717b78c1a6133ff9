"""Bots, house ghosts and the balance report: seeded, legal, reproducible."""

from __future__ import annotations

import pytest
from arena_cli.main import main
from arena_engine.digits.balance import simulate
from arena_engine.digits.bots import build_army, play_shop
from arena_engine.digits.catalogue import load
from arena_engine.digits.economy import income
from arena_engine.digits.ghosts import GhostError, house_ghost
from arena_engine.digits.shop import offers
from arena_engine.digits.slate import EMPTY_SLATE

CAT = load()


def test_bot_buys_only_offered_digits_within_its_gold() -> None:
    out = play_shop(EMPTY_SLATE, 10, 1, shop_seed=5, bot_seed=6)
    offered = set(offers(5, 1, 0))
    for n in range(1, out.rerolls + 1):
        offered |= set(offers(5, 1, n))
    assert out.bought and set(out.bought) <= offered
    spent = sum(2 for _ in out.bought) + out.rerolls
    assert out.gold_left == 10 - spent >= 0


def test_house_ghost_is_seeded_and_fits_the_round() -> None:
    a = house_ghost(6, 3, 2, seed="x")
    assert a == house_ghost(6, 3, 2, seed="x")
    assert a.catalogue_version == CAT.version
    assert all(d is None or CAT[d.kind].tier <= 3 for d in a.slate)  # tier 4 opens at round 7
    assert sum(d is not None for d in a.slate) >= 4
    with pytest.raises(GhostError):
        house_ghost(3, 3, 0, seed="x")


def test_build_army_grows_with_rounds() -> None:
    incomes = [income(5, 0)] * 12
    early = build_army(1, incomes, 1, 2)
    late = build_army(10, incomes, 1, 2)
    assert sum(d is not None for d in early) < sum(d is not None for d in late)


def test_balance_report_covers_every_kind() -> None:
    report = simulate(games=30, seed=3, spread_samples=3)
    assert set(report.kinds) == set(CAT.names()) and report.combats == 30 * 12
    assert all(0.0 <= s.win_rate <= 1.0 for s in report.kinds.values() if s.combats)
    assert report.spread.matchups == 3
    assert simulate(games=30, seed=3, spread_samples=0).kinds == report.kinds


def test_cli_balance_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["digits", "balance", "--games", "20", "--spread", "2"]) == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "pi" in out and "Face-off spread" in out
    assert main(["digits", "balance", "--games", "0"]) == 2


def test_outliers_flag_either_table() -> None:
    from arena_engine.digits.balance import BalanceReport, KindStats

    report = BalanceReport("v", 1)
    report.kinds = {"plus": KindStats(10, 5.0), "pi": KindStats(10, 5.0)}
    report.swaps = {"plus": KindStats(10, 7.0), "pi": KindStats(0, 0.0)}
    assert report.outliers() == ["plus"]
    assert any("OUTSIDE" in line and line.startswith("plus") for line in report.lines())
