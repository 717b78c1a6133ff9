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
# Within one entry the forward walk sets row then col; backwards, col comes first. (A cog
# is never on both sides of one resolution, so the order only matters for clarity.)
_SIDES_LAST_FIRST: Final = (("col", "colMix"), ("row", "rowMix"))


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
    last_seen: list[int]

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
        # The most recent resolution involving a cog, on either side, sets what it "showed":
        # walk the log backwards and keep the first value found for each cog.
        last_seen = [0] * SEATS
        found = [False] * SEATS
        for entry in reversed(obs.get("log") or []):
            for side, mix_key in _SIDES_LAST_FIRST:
                slot = slot_of_alias(str(entry.get(side, "")))
                if slot < 0 or found[slot]:
                    continue
                mix = entry.get(mix_key)
                if isinstance(mix, list) and mix:
                    last_seen[slot] = argmax_lowest(mix)
                    found[slot] = True
        return cls(
            k=k,
            best_response_row=brr,
            best_response_col=brc,
            row_side=not (cross and obs.get("camp") == "column"),
            inv=inv,
            fixed_type=int(you.get("fixedType", 0)),
            eligible=eligible,
            dist=dist,
            last_seen=last_seen,
        )

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
    return view.commit(view.last_seen[target])


def counter(view: _View) -> Order:
    target = view.nearest_eligible()
    if target < 0:
        return view.commit(0)
    showed = view.last_seen[target]
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
