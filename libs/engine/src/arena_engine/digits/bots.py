"""A shop-playing bot: buys, sells, rerolls and trains from seeded draws only.

Used by the house ghosts and the balance tool. Each bot has a "taste" (a weight per kind) drawn
from its seed, so that many bots spread their gold over every kind instead of one best build.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import slate as slates
from .catalogue import MAX_LEVEL, Catalogue, load
from .economy import price, sell_value
from .rng import Rng
from .settings import DEFAULT_SETTINGS, DigitsSettings
from .shop import bright_offer, offers
from .slate import EMPTY_SLATE, Digit, Slate


@dataclass(frozen=True, slots=True)
class BotProfile:
    taste: dict[str, int]
    max_rerolls: int
    training_skill: int  # percent of Training questions answered right

    @classmethod
    def draw(cls, seed: int | str, catalogue: Catalogue) -> BotProfile:
        rng = Rng(seed, "bot-profile")
        taste = {name: rng.between(1, 10) for name in catalogue.names()}
        return cls(taste, max_rerolls=rng.between(0, 3), training_skill=rng.between(50, 95))


@dataclass(frozen=True, slots=True)
class ShopOutcome:
    slate: Slate
    gold_left: int
    bought: tuple[str, ...]
    rerolls: int
    trained: bool


def _value(digit: Digit, profile: BotProfile, catalogue: Catalogue) -> int:
    kind = catalogue[digit.kind]
    return kind.tier * 10 + (digit.level - 1) * 8 + profile.taste[digit.kind]


def play_shop(
    slate: Slate,
    gold: int,
    round_no: int,
    shop_seed: int | str,
    bot_seed: int | str,
    perfect_focus: bool = False,
    settings: DigitsSettings = DEFAULT_SETTINGS,
    catalogue: Catalogue | None = None,
    profile: BotProfile | None = None,
) -> ShopOutcome:
    """One shop: buy what it likes most while gold lasts, replace weaker digits, then train."""
    catalogue = catalogue or load(settings.catalogue_version)
    profile = profile or BotProfile.draw(bot_seed, catalogue)
    rng = Rng(bot_seed, "shop", round_no)
    bought: list[str] = []
    reroll = 0
    draw: list[str | None] = list(offers(shop_seed, round_no, 0, settings, catalogue))
    if perfect_focus:
        draw.append(bright_offer(shop_seed, round_no, settings, catalogue))
    while True:
        choice = _best_buy(slate, gold, draw, profile, catalogue, settings)
        if choice is not None:
            slot, sell_cell = choice
            kind_name = draw[slot]
            assert kind_name is not None
            kind = catalogue[kind_name]
            if sell_cell is not None:
                slate, sold = slates.remove(slate, sell_cell)
                gold += sell_value(catalogue[sold.kind].tier, settings)
            cell = slates.default_cell(slate, kind.support)
            slate = slates.place(slate, Digit(kind_name), cell)
            gold -= price(kind.tier, settings)
            bought.append(kind_name)
            draw[slot] = None
            continue
        cheapest = min(settings.prices)
        if reroll < profile.max_rerolls and gold >= settings.reroll_cost + cheapest:
            reroll += 1
            gold -= settings.reroll_cost
            fresh = offers(shop_seed, round_no, reroll, settings, catalogue)
            draw = [*fresh, *draw[settings.offers_per_draw :]]
            continue
        break
    trained = False
    candidates = [i for i, d in enumerate(slate) if d is not None and d.level < MAX_LEVEL]
    if candidates:
        best = max(candidates, key=lambda i: (_value(_digit(slate, i), profile, catalogue), -i))
        trained = True
        if rng.chance(profile.training_skill):
            slate = slates.set_level(slate, best + 1, _digit(slate, best).level + 1)
    return ShopOutcome(slate, gold, tuple(bought), reroll, trained)


def _digit(slate: Slate, i: int) -> Digit:
    digit = slate[i]
    assert digit is not None
    return digit


def _best_buy(
    slate: Slate,
    gold: int,
    draw: list[str | None],
    profile: BotProfile,
    catalogue: Catalogue,
    settings: DigitsSettings,
) -> tuple[int, int | None] | None:
    """(offer slot, cell to sell first or None), or None when nothing is worth buying."""
    full = slates.is_full(slate)
    weakest: int | None = None
    if full:
        weakest = min(range(8), key=lambda i: (_value(_digit(slate, i), profile, catalogue), i))
    best: tuple[int, int, int | None] | None = None
    for slot, name in enumerate(draw):
        if name is None:
            continue
        kind = catalogue[name]
        value = _value(Digit(name), profile, catalogue)
        cost = price(kind.tier, settings)
        sell_cell = None
        if full:
            assert weakest is not None
            old = _digit(slate, weakest)
            if value <= _value(old, profile, catalogue) + 5:
                continue
            cost -= sell_value(catalogue[old.kind].tier, settings)
            sell_cell = weakest + 1
        if cost > gold:
            continue
        if best is None or value > best[0]:
            best = (value, slot, sell_cell)
    return None if best is None else (best[1], best[2])


def build_army(
    rounds: int,
    incomes: list[int],
    shop_seed: int | str,
    bot_seed: int | str,
    settings: DigitsSettings = DEFAULT_SETTINGS,
    catalogue: Catalogue | None = None,
) -> Slate:
    """The bot's slate at the end of the shop of round `rounds`, with the given Focus incomes."""
    catalogue = catalogue or load(settings.catalogue_version)
    profile = BotProfile.draw(bot_seed, catalogue)
    slate, reserve = EMPTY_SLATE, 0
    for round_no in range(1, rounds + 1):
        gold = incomes[round_no - 1] + min(reserve, settings.reserve_cap)
        perfect = incomes[round_no - 1] == settings.base_income + settings.focus_questions + 1
        out = play_shop(
            slate, gold, round_no, shop_seed, bot_seed, perfect, settings, catalogue, profile
        )
        slate, reserve = out.slate, out.gold_left
    return slate
