"""What a seat observes at a beat boundary: the reference's ``state`` frame, key for key.

Everything here is public or the seat's own: no other seat's intent, notes or policy, no seed,
and positions and inventories of other cogs only as far as sight memory allows.
"""

from __future__ import annotations

from typing import Any

from arena_engine.matrix_games.constants import (
    ALIASES,
    BOARD_H,
    BOARD_W,
    PLAYER_PROTOCOL,
    SEATS,
    WALLS,
    camp_label,
)
from arena_engine.matrix_games.kernel import Sim
from arena_engine.matrix_games.results import results_json, scores
from arena_engine.matrix_games.variants import mix_permille
from arena_engine.matrix_games.yard import CELL_X, CELL_Y


def rules_json(sim: Sim) -> dict[str, Any]:
    v = sim.variant
    st = sim.settings
    return {
        "K": v.k,
        "tokens": list(v.tokens),
        "rowPay": [list(r) for r in v.row_pay],
        "colPay": [list(r) for r in v.col_pay],
        "bestResponseRow": list(v.best_response_row),
        "bestResponseCol": list(v.best_response_col),
        "tokenCap": st.token_cap,
        "endowment": [1] * v.k,
        "beamRange": st.beam_range,
        "freezeTicks": st.freeze_ticks,
        "stepCooldownTicks": st.step_cooldown_ticks,
        "beamResetCooldown": st.beam_reset_cooldown,
        "beamMissCooldown": st.beam_miss_cooldown,
        "tokenRespawnTicks": st.token_respawn_ticks,
        "viewRadius": st.view_radius,
        "crossCampOnly": v.cross_camp_only,
    }


def zones_json(sim: Sim) -> list[dict[str, Any]]:
    out = []
    for zone in sim.zones:
        if zone.token >= 0:
            left = sum(
                1
                for i, sp in enumerate(sim.spawners)
                if sim.sp_has[i] and sp.token == zone.token and zone.contains(sp.x, sp.y)
            )
        else:
            left = sum(1 for i, sp in enumerate(sim.spawners) if sim.sp_has[i] and 6 <= sp.y <= 7)
        out.append(
            {
                "token": sim.variant.tokens[zone.token] if zone.token >= 0 else "mixed",
                "x0": zone.x0,
                "y0": zone.y0,
                "x1": zone.x1,
                "y1": zone.y1,
                "cx": zone.cx,
                "cy": zone.cy,
                "tokensLeft": left,
            }
        )
    return out


def public_log(sim: Sim) -> list[dict[str, Any]]:
    """Every resolution so far, as seats see it."""
    tokens = sim.variant.tokens
    return [
        {
            "beat": e.beat,
            "tick": e.t,
            "row": ALIASES[e.row],
            "col": ALIASES[e.col],
            "cell": [tokens[e.cell_row], tokens[e.cell_col]],
            "rowMix": list(e.row_mix),
            "colMix": list(e.col_mix),
            "rowCp": e.row_cp,
            "colCp": e.col_cp,
        }
        for e in sim.interacts
    ]


class BeatShared:
    """The parts of an observation that are the same for every seat at one beat boundary,
    built once and shared by the eight observations (treat them as read-only)."""

    __slots__ = ("log", "rules", "walls", "zones")

    def __init__(self, sim: Sim) -> None:
        self.rules = rules_json(sim)
        self.zones = zones_json(sim)
        self.log = public_log(sim)
        self.walls = list(WALLS)


def build_observation(sim: Sim, slot: int, shared: BeatShared | None = None) -> dict[str, Any]:
    """The seat's ``state`` frame, key for key as the reference builds it."""
    if shared is None:
        shared = BeatShared(sim)
    v = sim.variant
    cross = v.cross_camp_only
    here = sim.pos[slot]
    hx, hy = CELL_X[here], CELL_Y[here]
    sight = sim._sight[here]

    # The sight table already applies the Chebyshev view radius.
    has = sim.sp_has
    visible_tokens = [
        {"x": sp.x, "y": sp.y, "token": v.tokens[sp.token]}
        for i, sp in enumerate(sim.spawners)
        if has[i] and sight[sim.sp_cell[i]]
    ]

    cogs = []
    for other in range(SEATS):
        if other == slot:
            continue
        key = slot * SEATS + other
        mem = sim.mem_cell[key]
        cx, cy = CELL_X[mem], CELL_Y[mem]
        seen = sim.visible(slot, other)
        mem_tick = sim.mem_tick[key]
        cogs.append(
            {
                "alias": ALIASES[other],
                "camp": camp_label(other, cross),
                "x": cx,
                "y": cy,
                "dist": max(abs(hx - cx), abs(hy - cy)),
                "seenTicksAgo": -1 if mem_tick < 0 else sim.tick - mem_tick,
                "scoreCp": sim.score[other],
                "interactions": sim.interactions[other],
                "frozen": sim.freeze[other] > 0,
                "eligible": sim.eligible(slot, other),
                "inv": list(sim.inv[other]) if seen else None,
                "mix": mix_permille(sim.inv[other]) if seen else None,
            }
        )

    idx = sim.indices
    tokens = list(v.tokens)
    return {
        "type": "state",
        "protocol": PLAYER_PROTOCOL,
        "slot": slot,
        "name": ALIASES[slot],
        "camp": camp_label(slot, cross),
        "variant": v.name,
        "beat": sim.beat,
        "beats": sim.settings.beats,
        "ticksPerBeat": sim.settings.ticks_per_beat,
        "tick": sim.tick,
        "board": {"w": BOARD_W, "h": BOARD_H, "walls": shared.walls},
        "rules": shared.rules,
        "you": {
            "x": hx,
            "y": hy,
            "facing": sim.facing[slot],
            "inv": list(sim.inv[slot]),
            "mix": mix_permille(sim.inv[slot]),
            "scoreCp": sim.score[slot],
            "freeze": sim.freeze[slot],
            "beamCd": sim.beam_cd[slot],
            "interactions": sim.interactions[slot],
            "fixedType": sim.fixed_type[slot],
        },
        "zones": shared.zones,
        "visibleTokens": visible_tokens,
        "cogs": cogs,
        "log": shared.log,
        "indices": {
            "interactions": idx.interactions,
            "coopRate": idx.coop_rate(v),
            "conventionCounts": idx.conventions(),
            "yourExploitabilityCp": idx.exploitability_cp(v, slot),
        },
        "legal": {
            "tokens": tokens,
            "targets": [ALIASES[o] for o in range(SEATS) if sim.eligible(slot, o)],
        },
        "notes": sim.orders[slot].notes,
    }


def welcome_message(sim: Sim, slot: int) -> dict[str, Any]:
    """Sent to a seat on connect."""
    return {
        "type": "welcome",
        "protocol": PLAYER_PROTOCOL,
        "slot": slot,
        "name": ALIASES[slot],
        "camp": camp_label(slot, sim.variant.cross_camp_only),
        "variant": sim.variant.name,
        "beats": sim.settings.beats,
        "ticksPerBeat": sim.settings.ticks_per_beat,
    }


def final_message(sim: Sim, slot: int) -> dict[str, Any]:
    """Sent to a seat at the end; ``result`` is the results object (a key the reference's code
    sends although its docs omit it)."""
    return {
        "type": "final",
        "done": True,
        "slot": slot,
        "scores": scores(sim),
        "names": list(ALIASES),
        "beats": sim.beat,
        "reason": sim.reason,
        "ending": sim.ending,
        "result": results_json(sim),
    }
