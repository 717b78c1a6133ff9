"""The twenty digit kinds, loaded from the one versioned data file.

Numbers live in ``catalogue_v<N>.json`` so that balance changes are data changes: a new version
is a new file, and every game records the version it was started with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

CURRENT_VERSION = "digits-catalogue-v1"
_FILES = {"digits-catalogue-v1": "catalogue_v1.json"}
MAX_LEVEL = 3
TIERS = (1, 2, 3, 4)


class UnknownCatalogue(ValueError):
    """No catalogue file holds this version."""


@dataclass(frozen=True, slots=True)
class Kind:
    """One digit kind: its tier, level-1 stats, growth per level and effect values by level."""

    index: int
    kind: str
    name: str
    tier: int
    atk: int
    hp: int
    growth_atk: int
    growth_hp: int
    values: tuple[int, int, int]
    support: bool
    reach: bool
    text: str

    def atk_at(self, level: int) -> int:
        return self.atk + self.growth_atk * (level - 1)

    def hp_at(self, level: int) -> int:
        return self.hp + self.growth_hp * (level - 1)

    def value_at(self, level: int) -> int:
        return self.values[level - 1]

    def describe(self, level: int) -> str:
        return self.text.replace("{v}", str(self.value_at(level)))


@dataclass(frozen=True, slots=True)
class Catalogue:
    version: str
    kinds: tuple[Kind, ...]

    def __getitem__(self, kind: str) -> Kind:
        return self.by_name[kind]

    @property
    def by_name(self) -> dict[str, Kind]:
        return _index(self)

    def names(self) -> tuple[str, ...]:
        return tuple(k.kind for k in self.kinds)

    def of_tier(self, tier: int) -> tuple[str, ...]:
        return tuple(k.kind for k in self.kinds if k.tier == tier)


@cache
def _index(catalogue: Catalogue) -> dict[str, Kind]:
    return {k.kind: k for k in catalogue.kinds}


def parse(data: dict[str, Any]) -> Catalogue:
    kinds = []
    for index, raw in enumerate(data["kinds"]):
        values = tuple(int(v) for v in raw["values"])
        if len(values) != MAX_LEVEL:
            raise ValueError(f"{raw['kind']}: one effect value per level is needed")
        kinds.append(
            Kind(
                index=index,
                kind=str(raw["kind"]),
                name=str(raw["name"]),
                tier=int(raw["tier"]),
                atk=int(raw["atk"]),
                hp=int(raw["hp"]),
                growth_atk=int(raw["growth"][0]),
                growth_hp=int(raw["growth"][1]),
                values=(values[0], values[1], values[2]),
                support=bool(raw["support"]),
                reach=bool(raw["reach"]),
                text=str(raw["text"]),
            )
        )
    return Catalogue(version=str(data["version"]), kinds=tuple(kinds))


@cache
def load(version: str = CURRENT_VERSION) -> Catalogue:
    """The catalogue of `version` (the current one by default)."""
    filename = _FILES.get(version)
    if filename is None:
        raise UnknownCatalogue(version)
    text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    catalogue = parse(json.loads(text))
    if catalogue.version != version:
        raise UnknownCatalogue(f"{filename} holds {catalogue.version}, not {version}")
    return catalogue
