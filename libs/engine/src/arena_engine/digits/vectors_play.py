"""Rule-vector ops for whole games and for Paris time (format in docs/rules/digits.md).

`play` starts a game and runs a script of timed commands through `decide`/`apply`; a step is a
command dict of the codec (`{"type": "Buy", "offer": 0}`) with its time `t` and, for EndShop and
ShopTimeout, the `opponent` slate. `"answer": "right"` or `"wrong"` answers the question shown
without the vector having to know it, and `{"t", "focus": N, "gap_ms"}` plays a whole Focus with
its first N answers right.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import game as g
from . import paris
from .codec import command_from_dict, event_to_dict
from .slate import slate_from_json
from .vector_input import Case, VectorInputError, int_field, list_field, str_field

#: State fields a `play` case may check, by their name in the vector.
STATE_FIELDS = {
    "phase": "phase",
    "status": "status",
    "round": "round_no",
    "wins": "wins",
    "losses": "losses",
    "draws": "draws",
    "margin": "margin",
    "right": "right",
    "focus_right_total": "focus_right_total",
    "gold": "gold",
    "carried": "carried",
    "question_index": "question_index",
    "arrangement": "arrangement",
    "voided": "voided",
    "ends_ms": "ends_ms",
    "shop_deadline_ms": "shop_deadline_ms",
    "faceoff_deadline_ms": "faceoff_deadline_ms",
    "expires_ms": "expires_ms",
}


class _Play:
    def __init__(self) -> None:
        self.state: g.GameState | None = None
        self.events: list[g.Event] = []
        self.last: list[g.Event] = []

    def run(self, command: g.Command, now: int, opponent: Any = None) -> str:
        ctx = g.Context(now, opponent=opponent)
        self.state, decided = g.execute(self.state, command, ctx)
        if isinstance(decided, g.Rejection):
            return decided.code
        self.events += decided
        self.last = decided
        return "ok" if decided else "none"


def _answer(play: _Play, raw: Any, training: bool) -> Any:
    if raw not in ("right", "wrong"):
        return raw
    state = play.state
    question = None if state is None else state.training_question if training else state.question
    if question is None:
        return 1  # nothing open: the engine gives its own rejection
    return question.answer if raw == "right" else question.answer % 16 + 1


def _focus(play: _Play, step: Case) -> str:
    t, right = int_field(step, "t"), int_field(step, "focus")
    gap = int_field(step, "gap_ms", 1000)
    state = play.state
    results = []
    if state is None or state.question is None:
        results.append(play.run(g.StartFocus(), t))
    for i in range(play.state.settings.focus_questions if play.state else 0):
        answer = _answer(play, "right" if i < right else "wrong", training=False)
        results.append(play.run(g.AnswerFocus(answer), t + gap * (i + 1)))
    return next((r for r in results if r != "ok"), "ok")


def _step(play: _Play, step: Any) -> str:
    if not isinstance(step, dict):
        raise VectorInputError("bad_step")
    if "focus" in step:
        return _focus(play, step)
    body = {k: v for k, v in step.items() if k not in ("t", "opponent")}
    if body.get("type") in ("AnswerFocus", "AnswerTraining"):
        body["answer"] = _answer(play, body.get("answer"), body["type"] == "AnswerTraining")
    command = command_from_dict(body)
    opponent = slate_from_json(step["opponent"]) if step.get("opponent") is not None else None
    return play.run(command, int_field(step, "t"), opponent)


def _play(case: Case) -> dict[str, Any]:
    start: dict[str, Any] = {
        "type": "StartGame",
        "mode": str_field(case, "mode"),
        "player_seed": int_field(case, "player_seed", 1),
        "shop_seed": int_field(case, "shop_seed", 1),
    }
    for key in ("room_rounds", "settings", "missed_rounds", "ends_ms"):
        if key in case:
            start[key] = case[key]
    play = _Play()
    started = play.run(command_from_dict(start), int_field(case, "start_ms", 0))
    if started != "ok":
        return {"error": started}
    results = [_step(play, step) for step in list_field(case, "steps")]
    state = play.state
    assert state is not None
    return {
        "results": results,
        "state": {name: getattr(state, attr) for name, attr in STATE_FIELDS.items()},
        "slate": [None if d is None else d.to_json() for d in state.slate],
        "events": [type(e).__name__ for e in play.events],
        "last_events": [event_to_dict(e) for e in play.last],
    }


def _paris(case: Case) -> dict[str, Any]:
    ms = int_field(case, "ms")
    return {
        "offset_ms": paris.offset_ms(ms),
        "summer": paris.summer_time(ms),
        "date": paris.day_key(ms),
        "day_start_ms": paris.day_start_ms(ms),
        "next_midnight_ms": paris.next_midnight_ms(ms),
        "season": paris.season_of(ms),
    }


def _season_bounds(case: Case) -> dict[str, Any]:
    season = case.get("season")
    if not isinstance(season, str):
        raise paris.ParisTimeError("bad_season")
    return {
        "start_ms": paris.season_start_ms(season),
        "end_ms": paris.season_end_ms(season),
        "next": paris.next_season(season),
    }


PLAY_OPS: dict[str, Callable[[Case], dict[str, Any]]] = {
    "play": _play,
    "paris": _paris,
    "season_bounds": _season_bounds,
}
