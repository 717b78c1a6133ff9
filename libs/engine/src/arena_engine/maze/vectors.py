"""The ``maze`` op of the rule-vector format (shared/vectors/README.md, section "maze").

``play``: an explicit maze and a script of timestamped commands in; what happened out. Beyond
the shared format, the output also has ``records`` (each role's view records, parsed) and
``record_bytes`` (their sizes in bytes), which the project's own vectors check
(docs/rules/maze.md, "Rule vectors").
"""

from __future__ import annotations

import json
from typing import Any

from .commands import Action, Advance, Context, Drop, Enqueue, Move, ProcessNext, Role, Start
from .errors import ErrorCode, MazeError, Rejection
from .events import CommandRefused, Event, Exited, KeyDropped, Moved
from .game import apply, decide
from .layout import Setup
from .records import view_records
from .settings import MazeSettings
from .state import MazeState
from .views import ObserverView, PlayerView, project

Case = dict[str, Any]
ROLES: dict[str, Role] = {"1": 1, "2": 2, "observer": "observer"}


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MazeError(ErrorCode.BAD_COMMAND, f"{name} must be an integer")
    return value


def _command(raw: Any) -> tuple[int, Role, Action]:
    if not isinstance(raw, dict) or raw.get("role") not in ROLES:
        raise MazeError(ErrorCode.BAD_COMMAND, f"malformed command {raw!r}")
    t = _int(raw.get("t"), "t")
    kind = raw.get("kind")
    if kind == "move":
        return t, ROLES[raw["role"]], Move(str(raw.get("dir")))
    if kind == "drop":
        return t, ROLES[raw["role"]], Drop()
    raise MazeError(ErrorCode.BAD_COMMAND, f"unknown command kind {kind!r}")


def _step(state: MazeState, events: list[Event] | Rejection) -> MazeState:
    if isinstance(events, Rejection):
        raise MazeError(events.code, events.message)
    for event in events:
        state = apply(state, event)
    return state


def _batch(state: MazeState, raws: list[Any], results: list[str]) -> MazeState:
    """Enqueue every command, then process the FIFO; one result per command, in order."""
    slots: dict[int, int] = {}  # command sequence -> position in ``results``
    for raw in raws:
        t, role, action = _command(raw)
        outcome = decide(state, Enqueue(role, action), Context(now_ms=t))
        results.append("")
        if isinstance(outcome, Rejection):
            if outcome.code not in (ErrorCode.OBSERVER, ErrorCode.QUEUE_FULL):
                raise MazeError(outcome.code, outcome.message)
            results[-1] = outcome.code.value
            continue
        slots[state.next_command_seq] = len(results) - 1
        state = _step(state, outcome)
    while state.queue:
        events = decide(state, ProcessNext(), Context())
        state = _step(state, events)
        for event in events if isinstance(events, list) else ():
            if isinstance(event, CommandRefused):
                results[slots[event.command_seq]] = event.code
            elif isinstance(event, (Moved, KeyDropped, Exited)):
                results[slots[event.command_seq]] = "ok"
    return state


def _players(state: MazeState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pos = state.position
    for n, p in enumerate(pos.players, 1):
        common: dict[str, Any] = {
            "carrying": pos.carrying(n),
            "exit_open": p.exit_open,
            "exited": p.exited,
        }
        if not p.exited:
            common = {"cell": p.cell, "vision": p.vision, "compass": p.compass, **common}
        out[str(n)] = common
    return out


def _vector_view(view: PlayerView | ObserverView) -> dict[str, Any]:
    cells = [i for i, _ in view.cells]
    objects = [[o.kind, o.owner, o.cell] for o in view.objects]
    if isinstance(view, ObserverView):
        players = {
            str(n): {"cell": p.cell, "carrying": p.carrying, "vision": p.vision}
            | {"exit_open": p.exit in ("open", "exited")}
            for n, p in enumerate(view.players, 1)
        }
        return {"cells": cells, "objects": objects, "players": players}
    s = view.status
    opponent = view.opponent
    return {
        "cells": cells,
        "objects": objects,
        "opponent": None
        if opponent is None
        else {"cell": opponent.cell, "carrying": opponent.carrying},
        "self": {
            "cell": s.cell,
            "carrying": s.carrying,
            "vision": s.vision,
            "compass": s.compass,
            "exit_open": s.exit in ("open", "exited"),
        },
    }


def _play(case: Case) -> dict[str, Any]:
    setup = Setup.from_dict(case)
    settings = MazeSettings(
        cooldown_ms=_int(case.get("cooldown_ms"), "cooldown_ms"),
        countdown_ms=_int(case.get("countdown_end_ms"), "countdown_end_ms"),
        time_limit_ms=None,
    )
    started = decide(None, Start(settings, setup), Context(now_ms=0))
    if isinstance(started, Rejection):
        raise MazeError(started.code, started.message)
    state: MazeState | None = None
    for event in started:
        state = apply(state, event)
    assert state is not None
    results: list[str] = []
    commands = case.get("commands")
    if not isinstance(commands, list):
        raise MazeError(ErrorCode.BAD_COMMAND, "commands must be a list")
    for step in commands:
        if isinstance(step, dict) and "batch" in step:
            batch = step["batch"]
            if not isinstance(batch, list):
                raise MazeError(ErrorCode.BAD_COMMAND, "a batch is a list of commands")
            state = _batch(state, batch, results)
        elif isinstance(step, dict) and step.get("kind") == "advance":
            t = _int(step.get("t"), "t")
            state = _step(state, decide(state, Advance(), Context(now_ms=t)))
        else:
            state = _batch(state, [step], results)
    views = {role: project(state, role) for role in ROLES}
    records = {role: view_records(view) for role, view in views.items()}
    return {
        "results": results,
        "players": _players(state),
        "keys": {str(n): k.to_dict() for n, k in enumerate(state.position.keys, 1)},
        "meetings": state.position.meetings,
        "result": None if state.result is None else state.result.to_dict(),
        "views": {role: _vector_view(view) for role, view in views.items()},
        "records": {role: [json.loads(r) for r in rs] for role, rs in records.items()},
        "record_bytes": {role: [len(r.encode()) for r in rs] for role, rs in records.items()},
    }


OPS = {"play": _play}


def run_case(case: Case) -> dict[str, Any]:
    op = OPS.get(str(case.get("op")))
    if op is None:
        return {"error": "unknown_op"}
    try:
        return op(case)
    except MazeError as exc:
        return {"error": exc.code.value}
