"""``matrix.replay.v1``: written byte for byte as the reference writes it, and read back.

One compact UTF-8 JSON document: keys in the reference's order, no whitespace, non-ASCII
emitted raw, floats in shortest round-trip form (Python's ``repr`` is the same algorithm).
"""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any, Final

from arena_engine.matrix_games.constants import (
    ALIASES,
    BOARD_H,
    BOARD_W,
    GAME,
    GAME_VERSION,
    LIVERIES,
    REPLAY_PROTOCOL,
    SEATS,
    TARGET_FPS,
    WALLS,
    camp_label,
)
from arena_engine.matrix_games.errors import ReplayError
from arena_engine.matrix_games.kernel import Event, Sim, Snapshot
from arena_engine.matrix_games.orders import Order
from arena_engine.matrix_games.results import results_json
from arena_engine.matrix_games.settings import Settings
from arena_engine.matrix_games.yard import CELL_X, CELL_Y

#: Event kind -> the names of its fields after ``k``, in replay order.
EVENT_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "pickup": ("t", "seat", "x", "y", "token"),
    "beam": ("t", "seat", "x", "y", "dir", "len", "hitSeat"),
    "nocontest": ("t", "seat", "target", "why"),
    "interact": (
        "t",
        "beat",
        "row",
        "col",
        "rowInv",
        "colInv",
        "rowMix",
        "colMix",
        "cellRow",
        "cellCol",
        "rowCp",
        "colCp",
    ),
    "reset": ("t", "seat"),
    "leadchange": ("t", "seat", "scoreCp"),
    "beatclose": ("t", "beat", "scoreCp", "interactions"),
    "end": ("t", "reason", "ending", "scoreCp"),
}


def event_json(event: Event, *, include_notes: bool = True) -> dict[str, Any]:
    kind = str(event[0])
    if kind == "order":
        _, t, beat, seat, order = event
        assert isinstance(order, Order)
        out: dict[str, Any] = {
            "k": "order",
            "t": t,
            "beat": beat,
            "seat": seat,
            "intent": order.intent,
            "token": order.token,
            "target": order.target,
            "source": order.source,
            "say": order.say,
        }
        if include_notes:
            out["notes"] = order.notes
        out["latencyMs"] = order.latency_ms
        return out
    out = {"k": kind}
    out.update(zip(EVENT_FIELDS[kind], event[1:], strict=True))
    return out


def frame_json(f: Snapshot) -> dict[str, Any]:
    """Frame t: the state after tick t; ``c`` is (x, y, facing, freeze) for each cog."""
    c: list[int] = []
    for s in range(SEATS):
        p = f.pos[s]
        c += (CELL_X[p], CELL_Y[p], f.facing[s], f.freeze[s])
    return {"t": f.t, "c": c, "inv": f.inv, "tok": f.tok, "sc": f.sc}


def share_row(f: Snapshot, k: int) -> list[int]:
    """[t, permille share of each token type across all eight inventories]."""
    totals = [sum(f.inv[i::k]) for i in range(k)]
    grand = sum(totals)
    return [f.t, *(v * 1000 // grand if grand else 0 for v in totals)]


def config_json(sim: Sim) -> dict[str, Any]:
    v = sim.variant
    st = sim.settings
    return {
        "matrix": st.matrix,
        "K": v.k,
        "tokens": list(v.tokens),
        "rowPay": [list(r) for r in v.row_pay],
        "colPay": [list(r) for r in v.col_pay],
        "coopToken": v.coop_token,
        "num_agents": st.num_agents,
        "beats": st.beats,
        "ticksPerBeat": st.ticks_per_beat,
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
        "fps": TARGET_FPS,
    }


def replay_json(sim: Sim, *, include_notes: bool = True) -> dict[str, Any]:
    """The replay document. Needs a Sim built with ``record_frames=True``.

    ``include_notes`` keeps the seats' notes in order events, as the stored golden replay
    does; the reference's newest writer drops them.
    """
    if not sim.record_frames:
        raise ReplayError("no_frames", "this episode was run without recording frames")
    v = sim.variant
    return {
        "protocol": REPLAY_PROTOCOL,
        "game": GAME,
        "gameVersion": GAME_VERSION,
        "variant": v.name,
        "seed": sim.settings.seed,
        "names": list(ALIASES),
        "policyNames": list(sim.policy_names),
        "liveries": list(LIVERIES),
        "camps": [camp_label(s, v.cross_camp_only) for s in range(SEATS)],
        "config": config_json(sim),
        "map": {"w": BOARD_W, "h": BOARD_H, "walls": list(WALLS)},
        "spawners": [{"x": s.x, "y": s.y, "token": s.token} for s in sim.spawners],
        "frames": [frame_json(f) for f in sim.frames],
        "series": {
            "share": [share_row(f, v.k) for f in sim.frames],
            "score": [[f.t, *f.sc] for f in sim.frames],
        },
        "indices": {
            "conventionCounts": sim.indices.conventions(),
            "coopRate": sim.indices.coop_rate(v),
            "exploitabilityCp": sim.indices.exploitability(v),
        },
        "events": [event_json(e, include_notes=include_notes) for e in sim.events],
        "results": results_json(sim),
    }


def write_replay(sim: Sim, *, include_notes: bool = True) -> bytes:
    """The replay as the bytes of the reference's ``.replay`` artifact."""
    doc = replay_json(sim, include_notes=include_notes)
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def read_replay(data: bytes | str) -> dict[str, Any]:
    """Parse a replay (strict UTF-8 JSON) and check its protocol. Like the reference viewer,
    it sniffs the magic bytes of the gzip- or zlib-compressed copies the platform serves."""
    try:
        if isinstance(data, bytes):
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            elif data[:1] == b"\x78":
                data = zlib.decompress(data)
            text = data.decode("utf-8")
        else:
            text = data
        doc = json.loads(text)
    except (OSError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReplayError("malformed_replay", f"not a UTF-8 JSON document: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("protocol") != REPLAY_PROTOCOL:
        raise ReplayError("wrong_protocol", f"not a {REPLAY_PROTOCOL} document")
    return doc


def settings_of_replay(doc: dict[str, Any]) -> Settings:
    """The rule settings a replay was played with."""
    cfg = doc.get("config")
    if not isinstance(cfg, dict):
        raise ReplayError("malformed_replay", "replay has no config object")
    keys = (
        "num_agents",
        "beats",
        "ticksPerBeat",
        "tokenCap",
        "tokenRespawnTicks",
        "beamRange",
        "freezeTicks",
        "stepCooldownTicks",
        "beamResetCooldown",
        "beamMissCooldown",
        "viewRadius",
    )
    config = {key: cfg[key] for key in keys if key in cfg}
    config["matrix"] = cfg.get("matrix", doc.get("variant"))
    config["seed"] = doc.get("seed", 0)
    return Settings.from_json(config)


def orders_of_replay(doc: dict[str, Any]) -> list[list[Order]]:
    """The orders recorded in a replay, one list of eight per beat, in recorded order."""
    beats: dict[int, list[Order]] = {}
    for event in doc.get("events", []):
        if isinstance(event, dict) and event.get("k") == "order":
            beats.setdefault(int(event["beat"]), []).append(Order.from_json(event))
    return [beats[b] for b in sorted(beats)]
