"""The spectators' stream, ``matrix.global.v1``: the reference's live ``/global`` snapshot.

Each snapshot is the chrome frame (the key set of paintbot's chrome, so the reference's viewer
code runs over it) plus the eight ``seats``, ``beat``, ``beats_played``, ``variant`` and
``indices``, then ``type``, ``game``, ``protocol``, ``done``, ``reason`` and ``ending``; Arena
appends ``match_id``. Spectators see what the reference's newer builds show them: positions,
inventories, scores, what each seat said and how it decided (``source``), and its policy name,
but never an intent (``"private"``, with token and target -1 in order events) nor notes.

The timeline (``beats``, ``lulls``, ``lead``) is the one the reference's live tracker builds at
tick 0 and never rebuilds (docs/rules/matrix-games.md): the replay carries the real one.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from arena_engine.matrix_games import Order, Sim
from arena_engine.matrix_games.constants import (
    ALIASES,
    GAME,
    GLOBAL_PROTOCOL,
    LIVERIES,
    LIVERY_HEX,
    SEATS,
    TOKEN_CHROME_KEYS,
    camp_label,
)
from arena_engine.matrix_games.kernel import Event
from arena_engine.matrix_games.replay import event_json
from arena_engine.matrix_games.variants import argmax_lowest, mix_permille

from arena_games.contract import Seat

PRIVATE = "private"


def public_event(event: Event) -> dict[str, Any]:
    """An event as spectators see it: an order keeps who, how and what was said, not what."""
    out = event_json(event, include_notes=False)
    if out["k"] == "order":
        out.update(intent=PRIVATE, token=-1, target=-1)
    return out


def events_at_tick(sim: Sim) -> list[Event]:
    """The events recorded at the current tick (they are in tick order)."""
    start = len(sim.events)
    while start > 0 and sim.events[start - 1][1] == sim.tick:
        start -= 1
    return sim.events[start:]


def _timeline(k: int) -> dict[str, Any]:
    """What the reference's live tracker built on its first snapshot, at tick 0."""
    return {
        "beats": [{"t": 0, "k": "over", "seat": 0, "other": -1, "cp": 0}],
        "lulls": [],
        "lead": {"teams": list(TOKEN_CHROME_KEYS[:k]), "pts": []},
    }


def snapshot(
    sim: Sim,
    seats: Sequence[Seat],
    connected: Collection[int],
    match_id: str,
    installed: Sequence[Order] | None = None,
) -> dict[str, Any]:
    """The spectators' snapshot of ``sim``; ``installed``: the beat's orders just installed on
    it (the frame between the orders and the beat's ticks). ``connected``: slots of the people
    whose client is there (scripted seats always are)."""
    k = sim.k
    orders = list(installed) if installed is not None else sim.orders
    events = [public_event(e) for e in events_at_tick(sim)]
    if installed is not None:
        events += [
            public_event(("order", sim.tick, sim.beat, slot, order))
            for slot, order in enumerate(installed)
        ]
    totals = [sum(sim.inv[slot][i] for slot in range(SEATS)) for i in range(k)]
    grand = sum(totals)
    teams = {
        TOKEN_CHROME_KEYS[i]: {
            "share": totals[i] * 1000 // grand if grand else 0,
            "tokensLeft": sum(
                1 for n, token in enumerate(sim.sp_token) if token == i and sim.sp_has[n]
            ),
            "cells": sim.sp_token.count(i),
        }
        for i in range(k)
    }
    names = sim.policy_names
    cross = sim.variant.cross_camp_only
    over = sim.done or sim.tick >= sim.settings.max_ticks
    frame: dict[str, Any] = {
        "t": sim.tick,
        "mt": sim.settings.max_ticks,
        "ph": "gameover" if over else "playing",
        "pl": True,
        "sp": 1,
        "mx": max(1, sim.settings.max_ticks),
        "st": 0,
        "lp": False,
        "sk": False,
        "ff": False,
        "en": True,
        "mm": False,
        "bs": 0,
        "teams": teams,
        "roster": [
            {
                "s": slot,
                "name": names[slot],
                "team": TOKEN_CHROME_KEYS[argmax_lowest(sim.inv[slot])],
                "pol": names[slot],
                "alive": True,
                "lives": 0,
                "score": sim.score[slot],
            }
            for slot in range(SEATS)
        ],
        "events": events,
        "over": over,
        "hold": 0,
        "seats": [
            {
                "s": slot,
                "alias": ALIASES[slot],
                "name": names[slot],
                "livery": LIVERIES[slot],
                "color": LIVERY_HEX[slot],
                "camp": camp_label(slot, cross),
                "kind": seats[slot].kind.value,
                "x": x,
                "y": y,
                "facing": sim.facing[slot],
                "inv": list(sim.inv[slot]),
                "mix": mix_permille(sim.inv[slot]),
                "scoreCp": sim.score[slot],
                "interactions": sim.interactions[slot],
                "frozen": sim.freeze[slot] > 0,
                "source": orders[slot].source,
                "intent": PRIVATE,
                "say": orders[slot].say,
                "connected": slot in connected or not seats[slot].human,
            }
            for slot in range(SEATS)
            for x, y in (sim.xy(slot),)
        ],
        "beat": sim.beat,
        "beats_played": sim.beat,
        "variant": sim.variant.name,
        "indices": {
            "interactions": sim.indices.interactions,
            "coopRate": sim.indices.coop_rate(sim.variant),
            "conventionCounts": sim.indices.conventions(),
        },
        **_timeline(k),
        "type": "state",
        "game": GAME,
        "protocol": GLOBAL_PROTOCOL,
        "done": sim.done,
        "reason": sim.reason,
        "ending": sim.ending,
        "match_id": match_id,
    }
    return frame
