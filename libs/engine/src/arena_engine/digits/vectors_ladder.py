"""Rule-vector ops for what the services decide around games (format in docs/rules/digits.md):
ghost selection, schedules, the ladder and its take-backs, leaderboards, duels, credits."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from . import credits, duels, ladder, leaderboards, schedules
from .ghost_selection import Ghost, GhostIndex, GhostPick, GhostQuery, select_ghost
from .vector_input import (
    Case,
    VectorInputError,
    dict_field,
    int_field,
    list_field,
    optional_int,
    str_field,
)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__, **dataclasses.asdict(value)}
    return value


def _ghost(raw: Any) -> Ghost:
    if not isinstance(raw, dict):
        raise VectorInputError("bad_ghost")
    return Ghost(
        int_field(raw, "position"),
        str_field(raw, "owner"),
        int_field(raw, "round"),
        int_field(raw, "wins"),
        int_field(raw, "losses"),
        int_field(raw, "rating"),
    )


def _pools(case: Case) -> list[GhostIndex]:
    pools = list_field(case, "pools")
    if not all(isinstance(pool, list) for pool in pools):
        raise VectorInputError("bad_pools")
    return [GhostIndex.from_ghosts(_ghost(raw) for raw in pool) for pool in pools]


def _pick(pick: GhostPick) -> dict[str, Any]:
    return {
        "tier": pick.tier,
        "band": pick.band,
        "pool": pick.pool,
        "position": pick.position,
        "owner": pick.owner,
        "house": pick.house,
        "round": pick.round_no,
        "wins": pick.wins,
        "losses": pick.losses,
    }


def _ghost_select(case: Case) -> dict[str, Any]:
    raw = dict_field(case, "query")
    record = raw.get("record")
    if record is not None and not (
        isinstance(record, list) and len(record) == 2 and all(isinstance(x, int) for x in record)
    ):
        raise VectorInputError("bad_record")
    exclude = raw.get("exclude", [])
    if not isinstance(exclude, list):
        raise VectorInputError("bad_exclude")
    query = GhostQuery(
        int_field(raw, "round"),
        None if record is None else (record[0], record[1]),
        int_field(raw, "rating"),
        frozenset(map(str, exclude)),
    )
    return _pick(select_ghost(_pools(case), query, int_field(case, "seed")))


def _duel_opponents(case: Case) -> dict[str, Any]:
    ratings, owners = list_field(case, "ratings"), list_field(case, "owners")
    if len(ratings) != 2 or len(owners) != 2:
        raise VectorInputError("bad_players")
    picks = schedules.duel_opponents(
        _pools(case),
        (int(ratings[0]), int(ratings[1])),
        (str(owners[0]), str(owners[1])),
        int_field(case, "seed"),
    )
    return {"picks": [_pick(p) for p in picks]}


def _room_schedule(case: Case) -> dict[str, Any]:
    players = [str(p) for p in list_field(case, "players")]
    return {"opponents": schedules.room_opponents(players, int_field(case, "round"))}


def _entries(case: Case, cls: type[Any]) -> list[Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    out = []
    for raw in list_field(case, "entries"):
        if not isinstance(raw, dict) or not set(raw) <= names:
            raise VectorInputError("bad_entry")
        try:
            out.append(cls(**raw))
        except TypeError as exc:
            raise VectorInputError("bad_entry") from exc
    return out


def _season_leaderboard(case: Case) -> dict[str, Any]:
    places = leaderboards.season_leaderboard(
        _entries(case, leaderboards.SeasonEntry),
        int_field(case, "min_games", leaderboards.SEASON_MIN_RANKED_GAMES),
    )
    return {"places": [dataclasses.asdict(p) for p in places]}


def _ranked_game_counts(case: Case) -> dict[str, Any]:
    return {
        "counts": leaderboards.ranked_game_counts(str(case.get("status")), str(case.get("reason")))
    }


def _placed(rows: list[Any]) -> list[dict[str, Any]]:
    return [{"place": r.place, **dataclasses.asdict(r.entry)} for r in rows]


def _daily_leaderboard(case: Case) -> dict[str, Any]:
    entries = _entries(case, leaderboards.DailyEntry)
    return {
        "places": _placed(leaderboards.daily_leaderboard(entries)),
        "podium": [r.entry.player for r in leaderboards.daily_podium(entries)],
    }


def _room_standings(case: Case) -> dict[str, Any]:
    return {"places": _placed(leaderboards.room_standings(_entries(case, leaderboards.RoomEntry)))}


def _side(case: Case, key: str) -> duels.DuelSide:
    raw = dict_field(case, key)
    try:
        return duels.DuelSide(**raw)
    except TypeError as exc:
        raise VectorInputError(f"bad_{key}") from exc


def _duel_outcome(case: Case) -> dict[str, Any]:
    a, b = _side(case, "a"), _side(case, "b")
    outcome = duels.duel_outcome(a, b, bool(case.get("at_deadline")))
    if outcome is None:
        return {"result": None}
    out = dataclasses.asdict(outcome)
    stake = optional_int(case, "stake")
    if stake is not None:
        settled = duels.settle_stakes(outcome, "duel", stake, (a.player, b.player))
        out["stakes"] = {p: [_plain(c) for c in cmds] for p, cmds in settled.items()}
    return out


def _ladder(case: Case) -> dict[str, Any]:
    """Steps: {"combat": {player, game, round, season, army_rating, result}}, {"season": S}
    (every rated player enters S), {"void": [game ids]} (voided so far, taken back)."""
    events: list[ladder.LadderEvent] = []
    voided: set[str] = set()
    last: list[ladder.LadderEvent] = []
    for step in list_field(case, "steps"):
        standings = ladder.fold(events)
        if not isinstance(step, dict) or len(step) != 1:
            raise VectorInputError("bad_step")
        if "combat" in step:
            c = dict_field(step, "combat")
            player = str_field(c, "player")
            last = ladder.rate_combat(
                standings.get(player, ladder.Standing()),
                player,
                str_field(c, "game"),
                int_field(c, "round", 1),
                str_field(c, "season"),
                int_field(c, "army_rating"),
                str_field(c, "result"),
            )
        elif "season" in step:
            season = str_field(step, "season")
            last = [
                e for p in sorted(standings) for e in ladder.enter_season(standings[p], p, season)
            ]
        elif "void" in step:
            voided |= {str(x) for x in list_field(step, "void")}
            last = list(ladder.take_back(events, voided))
        else:
            raise VectorInputError("bad_step")
        events += last
    return {
        "standings": {p: dataclasses.asdict(s) for p, s in sorted(ladder.fold(events).items())},
        "last_events": [_plain(e) for e in last],
    }


_LEDGER_COMMANDS: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (credits.Credit, credits.Debit, credits.Hold, credits.Release, credits.Capture)
}


def _credits(case: Case) -> dict[str, Any]:
    state = credits.Ledger()
    results = []
    for raw in list_field(case, "steps"):
        if not isinstance(raw, dict) or raw.get("type") not in _LEDGER_COMMANDS:
            raise VectorInputError("bad_step")
        try:
            command = _LEDGER_COMMANDS[raw["type"]](**{k: v for k, v in raw.items() if k != "type"})
        except TypeError as exc:
            raise VectorInputError("bad_step") from exc
        decided = credits.decide(state, command)
        if isinstance(decided, list):
            for event in decided:
                state = credits.apply(state, event)
            results.append("ok" if decided else "none")
        else:
            results.append(decided.code)
    return {"results": results, "balance": state.balance, "held": state.held}


LADDER_OPS: dict[str, Callable[[Case], dict[str, Any]]] = {
    "ghost_select": _ghost_select,
    "duel_opponents": _duel_opponents,
    "room_schedule": _room_schedule,
    "season_leaderboard": _season_leaderboard,
    "ranked_game_counts": _ranked_game_counts,
    "daily_leaderboard": _daily_leaderboard,
    "room_standings": _room_standings,
    "duel_outcome": _duel_outcome,
    "ladder": _ladder,
    "credits": _credits,
}
