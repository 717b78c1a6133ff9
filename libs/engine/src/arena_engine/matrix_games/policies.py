"""The five scripted baselines. Each reads ONLY a seat's observation (the ``state`` frame)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from arena_engine.matrix_games.constants import COMMIT_TARGET, SEATS, slot_of_alias
from arena_engine.matrix_games.errors import MatrixGamesError
from arena_engine.matrix_games.orders import Order, gather, hold, hunt
from arena_engine.matrix_games.variants import argmax_lowest

_FAR: Final = 1 << 62
_SIDES: Final = (("row", "rowMix"), ("col", "colMix"))


def _ints(value: Any) -> list[int]:
    if not isinstance(value, list):
        return []
    return [int(v) for v in value]


@dataclass
class _View:
    """The few observation fields the baselines use; missing fields degrade to defaults."""

    k: int
    best_response_row: list[int]
    best_response_col: list[int]
    row_side: bool
    inv: list[int]
    fixed_type: int
    eligible: list[int]
    dist: list[int]
    log: list[Any]

    @classmethod
    def of(cls, obs: dict[str, Any]) -> _View:
        rules = obs.get("rules") or {}
        k = max(2, int(rules.get("K", 2)))
        brr = _ints(rules.get("bestResponseRow")) + [0] * k
        brc = _ints(rules.get("bestResponseCol")) + [0] * k
        cross = bool(rules.get("crossCampOnly", False))
        you = obs.get("you") or {}
        inv = _ints(you.get("inv")) or [0] * k
        me = int(obs.get("slot", 0))
        dist = [_FAR] * SEATS
        eligible: list[int] = []
        for entry in obs.get("cogs") or []:
            slot = slot_of_alias(str(entry.get("alias", "")))
            if slot < 0 or slot == me:
                continue
            dist[slot] = int(entry.get("dist", _FAR))
            if entry.get("eligible", True):
                eligible.append(slot)
        return cls(
            k=k,
            best_response_row=brr,
            best_response_col=brc,
            row_side=not (cross and obs.get("camp") == "column"),
            inv=inv,
            fixed_type=int(you.get("fixedType", 0)),
            eligible=eligible,
            dist=dist,
            log=log if isinstance(log := obs.get("log"), list) else [],
        )

    def last_seen(self, slot: int) -> int:
        """The token a cog "showed": the argmax of its mix in the most recent public
        resolution involving it, on either side; token 0 if it has none."""
        alias_slot = slot_of_alias
        for entry in reversed(self.log):
            for side, mix_key in _SIDES:
                if alias_slot(str(entry.get(side, ""))) == slot:
                    mix = entry.get(mix_key)
                    if isinstance(mix, list) and mix:
                        return argmax_lowest(mix)
        return 0

    def nearest_eligible(self) -> int:
        best = -1
        best_d = _FAR + 1
        for slot in self.eligible:
            if self.dist[slot] < best_d:
                best_d = self.dist[slot]
                best = slot
        return best

    def commit(self, token: int) -> Order:
        """Gather the token up to five, then hunt the nearest eligible cog."""
        want = min(max(token, 0), max(0, self.k - 1))
        if want < len(self.inv) and self.inv[want] < COMMIT_TARGET:
            return gather(want)
        target = self.nearest_eligible()
        return hunt(target) if target >= 0 else hold()


def always_first(view: _View) -> Order:
    return view.commit(0)


def always_second(view: _View) -> Order:
    return view.commit(min(1, view.k - 1))


def fixed_pick(view: _View) -> Order:
    return view.commit(view.fixed_type)


def tit_for_tat(view: _View) -> Order:
    target = view.nearest_eligible()
    if target < 0:
        return view.commit(0)
    return view.commit(view.last_seen(target))


def counter(view: _View) -> Order:
    target = view.nearest_eligible()
    if target < 0:
        return view.commit(0)
    showed = view.last_seen(target)
    table = view.best_response_row if view.row_side else view.best_response_col
    return view.commit(table[showed])


POLICIES: Final[dict[str, Callable[[_View], Order]]] = {
    "counter": counter,
    "tit-for-tat": tit_for_tat,
    "fixed-pick": fixed_pick,
    "always-first": always_first,
    "always-second": always_second,
}

SAYINGS: Final = {
    "counter": "reading the room",
    "tit-for-tat": "mirroring what you showed me",
    "fixed-pick": "sticking to my pick",
    "always-first": "first token, every time",
    "always-second": "second token, every time",
}


def check_policy(name: str) -> str:
    if name not in POLICIES:
        raise MatrixGamesError(
            "unknown_policy", f"unknown policy {name!r}; expected one of {', '.join(POLICIES)}"
        )
    return name


def scripted_order(observation: dict[str, Any], policy: str) -> Order:
    """The order a scripted baseline gives for this observation (source ``scripted``)."""
    return POLICIES[check_policy(policy)](_View.of(observation))
