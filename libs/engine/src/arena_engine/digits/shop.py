"""Shop offers: a pure function of (shop seed, round, reroll number); the bright offer of
(shop seed, round). Players who share a shop seed see the same offers whatever else they did."""

from __future__ import annotations

from .catalogue import Catalogue, load
from .economy import highest_open_tier
from .rng import Rng
from .settings import DEFAULT_SETTINGS, DigitsSettings


def offers(
    shop_seed: int | str,
    round_no: int,
    reroll: int,
    settings: DigitsSettings = DEFAULT_SETTINGS,
    catalogue: Catalogue | None = None,
) -> tuple[str, ...]:
    """The kinds offered at `round_no` after `reroll` rerolls (0 for the round's first draw)."""
    catalogue = catalogue or load(settings.catalogue_version)
    odds = settings.odds_for(round_no)
    out = []
    for slot in range(settings.offers_per_draw):
        rng = Rng(shop_seed, "shop", round_no, reroll, slot)
        tier = rng.weighted(odds) + 1
        out.append(rng.choice(catalogue.of_tier(tier)))
    return tuple(out)


def bright_offer(
    shop_seed: int | str,
    round_no: int,
    settings: DigitsSettings = DEFAULT_SETTINGS,
    catalogue: Catalogue | None = None,
) -> str:
    """The offer a perfect Focus opens: a digit of the highest tier open at the round."""
    catalogue = catalogue or load(settings.catalogue_version)
    rng = Rng(shop_seed, "bright", round_no)
    return rng.choice(catalogue.of_tier(highest_open_tier(round_no, settings)))
