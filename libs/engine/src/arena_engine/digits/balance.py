"""The balance report: seeded games between shop-playing bots at equal gold.

Each simulated game pits two bots that receive the same Focus income every round (drawn once
for both); after each shop their slates fight as saved (arrangement 0). Every combat counts for
each kind an army holds: a win 1, a draw ½, a loss 0. A second pass measures how much the
Face-off matters: all 384 arrangements of one army against the other, for a sample of combats.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .bots import BotProfile, play_shop
from .catalogue import Catalogue, load
from .combat import CombatRules, compile_rules, fight
from .economy import income
from .faceoff import ARRANGEMENT_COUNT, predict_all
from .rng import Rng
from .settings import DEFAULT_SETTINGS, DigitsSettings
from .slate import EMPTY_SLATE, Digit, Slate

LOW, HIGH = 0.40, 0.60


@dataclass
class KindStats:
    combats: int = 0
    points: float = 0.0  # wins + draws / 2

    @property
    def win_rate(self) -> float:
        return self.points / self.combats if self.combats else float("nan")


@dataclass
class SpreadStats:
    matchups: int = 0
    decided_by_faceoff: int = 0  # the best and the worst arrangement give different results
    win_share_total: float = 0.0
    margin_range_total: int = 0

    @property
    def mean_win_share(self) -> float:
        return self.win_share_total / self.matchups if self.matchups else 0.0

    @property
    def mean_margin_range(self) -> float:
        return self.margin_range_total / self.matchups if self.matchups else 0.0


@dataclass
class BalanceReport:
    catalogue_version: str
    games: int
    combats: int = 0
    kinds: dict[str, KindStats] = field(default_factory=dict)
    #: The swap test: one digit of an army replaced by each kind of its tier (same price, same
    #: level), against the same opponent. Sharper than the holding rate, which averages over
    #: everything else an army holds.
    swaps: dict[str, KindStats] = field(default_factory=dict)
    spread: SpreadStats = field(default_factory=SpreadStats)

    def outliers(self) -> list[str]:
        """Kinds outside 40-60 % in the holding rate or in the swap test."""
        return [
            name
            for name in self.kinds
            if any(
                table[name].combats and not LOW <= table[name].win_rate <= HIGH
                for table in (self.kinds, self.swaps)
            )
        ]

    def lines(self) -> list[str]:
        out = [
            f"catalogue {self.catalogue_version}: {self.games} games, {self.combats} combats",
            f"{'digit':<10}{'armies':>8}{'win rate':>10}{'swaps':>8}{'swap rate':>11}",
        ]
        for name, stats in self.kinds.items():
            swap = self.swaps.get(name, KindStats())
            flag = "  OUTSIDE 40-60%" if name in self.outliers() else ""
            out.append(
                f"{name:<10}{stats.combats:>8}{stats.win_rate:>9.1%}"
                f"{swap.combats:>8}{swap.win_rate:>10.1%}{flag}"
            )
        s = self.spread
        depends = s.decided_by_faceoff / max(s.matchups, 1)
        out.append(
            f"Face-off spread over {s.matchups} matchups x {ARRANGEMENT_COUNT} arrangements: "
            f"mean share of winning arrangements {s.mean_win_share:.1%}, "
            f"result depends on the arrangement in {depends:.1%}, "
            f"mean margin range (best - worst) {s.mean_margin_range:.1f} HP"
        )
        return out


def simulate(
    games: int = 400,
    seed: int = 1,
    spread_samples: int = 40,
    settings: DigitsSettings = DEFAULT_SETTINGS,
    catalogue: Catalogue | None = None,
) -> BalanceReport:
    catalogue = catalogue or load(settings.catalogue_version)
    rules = compile_rules(catalogue)
    report = BalanceReport(catalogue.version, games)
    report.kinds = {name: KindStats() for name in catalogue.names()}
    report.swaps = {name: KindStats() for name in catalogue.names()}
    samples: list[tuple[Slate, Slate]] = []
    sample_every = max(1, games * settings.max_rounds // max(spread_samples, 1))
    for game in range(games):
        rng = Rng(seed, "balance", game)
        bots = [(f"{seed}:{game}:a", rng.next64()), (f"{seed}:{game}:b", rng.next64())]
        profiles = [BotProfile.draw(b, catalogue) for b, _ in bots]
        armies: list[Slate] = [EMPTY_SLATE, EMPTY_SLATE]
        reserves = [0, 0]
        for round_no in range(1, settings.max_rounds + 1):
            right = min(settings.focus_questions, rng.between(2, settings.focus_questions + 1))
            perfect = right == settings.focus_questions
            for side, (bot_seed, shop_seed) in enumerate(bots):
                gold = income(right, reserves[side], settings)
                out = play_shop(
                    armies[side],
                    gold,
                    round_no,
                    shop_seed,
                    bot_seed,
                    perfect,
                    settings,
                    catalogue,
                    profiles[side],
                )
                armies[side], reserves[side] = out.slate, out.gold_left
            result = fight(armies[0], armies[1], rules, max_exchanges=settings.max_exchanges)
            points = {"win": 1.0, "draw": 0.5, "loss": 0.0}[result.result]
            report.combats += 1
            for side, score in ((0, points), (1, 1.0 - points)):
                for name in {d.kind for d in armies[side] if d is not None}:
                    stats = report.kinds[name]
                    stats.combats += 1
                    stats.points += score
            _swap_test(armies[0], armies[1], rng, catalogue, rules, settings, report.swaps)
            if report.combats % sample_every == 0 and len(samples) < spread_samples:
                samples.append((armies[0], armies[1]))
    for mine, theirs in samples:
        results = predict_all(mine, theirs, rules)
        tally = Counter(r.result for r in results)
        margins = [r.margin for r in results]
        spread = report.spread
        spread.matchups += 1
        spread.win_share_total += tally["win"] / ARRANGEMENT_COUNT
        spread.decided_by_faceoff += len(tally) > 1
        spread.margin_range_total += max(margins) - min(margins)
    return report


def _swap_test(
    army: Slate,
    opponent: Slate,
    rng: Rng,
    catalogue: Catalogue,
    rules: CombatRules,
    settings: DigitsSettings,
    swaps: dict[str, KindStats],
) -> None:
    cells = [i for i, d in enumerate(army) if d is not None]
    if not cells:
        return
    cell = rng.choice(cells)
    old = army[cell]
    assert old is not None
    for name in catalogue.of_tier(catalogue[old.kind].tier):
        swapped = (*army[:cell], Digit(name, old.level), *army[cell + 1 :])
        result = fight(swapped, opponent, rules, max_exchanges=settings.max_exchanges)
        stats = swaps[name]
        stats.combats += 1
        stats.points += {"win": 1.0, "draw": 0.5, "loss": 0.0}[result.result]
