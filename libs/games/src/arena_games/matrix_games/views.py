"""What Matrix Games shows each viewer (docs/protocol.md, "Matrix Games").

A person's seat gets the reference's player messages (``matrix.player.v1``): the ``welcome`` when
the episode starts and in every snapshot (a socket attaching is the reference's seat connecting;
the client answers ``matrix_join``), its own ``state`` observation at every beat boundary (with
the beat's ``deadline_ms``) and once after the episode settled, and the ``final`` message at the
end; each is the engine's, key for key, with Arena's ``match_id`` (and in ``state`` the deadline
and ``server_time_ms``) appended. An accepted order is confirmed to its seat alone
(``order_accepted``). Spectators get ``matrix.global.v1`` snapshots (:mod:`.spectator`) at the
start, at each beat (after the orders and after the ticks) and at the end. Scripted seats have
nobody to push to.

A seat is never shown another seat's intent, say, notes or policy name, the seed, or where a cog
out of its sight really is or what it holds: ``hidden`` lists that text for the contract tests.
The ``final`` message's ``result`` is the reference's results object without its ``names`` (the
policy names).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from arena_engine.matrix_games import Sim
from arena_engine.matrix_games.constants import ALIASES, SEATS
from arena_engine.matrix_games.observation import (
    BeatShared,
    build_observation,
    final_message,
    welcome_message,
)
from google.protobuf.message import Message
from pydantic import BaseModel

from arena_games.contract import GameError, Table, Viewer
from arena_games.matrix_games import spectator, wire
from arena_games.matrix_games.rules import MatrixGamesState, Phase
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb

#: The parts of an observation every seat shares, built once per Sim (a Sim in a state is never
#: changed again, so what is built from it stays true).
_SHARED: WeakKeyDictionary[Sim, BeatShared] = WeakKeyDictionary()


def _shared(sim: Sim) -> BeatShared:
    shared = _SHARED.get(sim)
    if shared is None:
        shared = _SHARED[sim] = BeatShared(sim)
    return shared


def welcome(state: MatrixGamesState, slot: int, match_id: str) -> dict[str, Any]:
    assert state.sim is not None
    return {**welcome_message(state.sim, slot), "match_id": match_id}


def observation(state: MatrixGamesState, slot: int, match_id: str, now_ms: int) -> dict[str, Any]:
    """The seat's ``state`` frame; ``deadline_ms`` is when orders for the beat close (null
    once the episode settled)."""
    sim = state.sim
    assert sim is not None
    return {
        **build_observation(sim, slot, _shared(sim)),
        "match_id": match_id,
        "deadline_ms": state.deadline_ms if state.phase is Phase.PLAYING else None,
        "server_time_ms": now_ms,
    }


def final(state: MatrixGamesState, slot: int, match_id: str) -> dict[str, Any]:
    assert state.sim is not None
    message = final_message(state.sim, slot)
    message["result"] = {k: v for k, v in message["result"].items() if k != "names"}
    return {**message, "match_id": match_id}


def order_accepted(event: pb.OrderGiven, match_id: str) -> dict[str, Any]:
    order = event.order
    return {
        "type": "order_accepted",
        "slot": event.seat - 1,
        "beat": event.beat,
        "intent": order.intent,
        "token": order.token,
        "target": order.target,
        "say": order.say,
        "notes": order.notes,
        "match_id": match_id,
    }


def spectator_frame(
    table: Table, state: MatrixGamesState, sim: Sim, installed: pb.BeatPlayed | None = None
) -> dict[str, Any]:
    orders = None if installed is None else [wire.engine_order(o) for o in installed.orders]
    return spectator.snapshot(sim, state.seats, state.connected, table.match_id, orders)


class MatrixGamesViews:
    def snapshot(
        self, table: Table, state: MatrixGamesState, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        if state.sim is None:
            return []
        if viewer.seat == 0:
            return [spectator_frame(table, state, state.sim)]
        slot = viewer.seat - 1
        shown = [welcome(state, slot, table.match_id)]
        if state.phase is not Phase.CONNECTING:
            shown.append(observation(state, slot, table.match_id, now_ms))
        if state.phase is Phase.OVER:
            shown.append(final(state, slot, table.match_id))
        return shown

    def push(
        self,
        table: Table,
        state: MatrixGamesState,
        event: Message,
        viewer: Viewer,
        now_ms: int,
    ) -> list[dict[str, Any]]:
        event = wire.unwrapped(event)
        if state.sim is None:
            return []
        if viewer.seat == 0:
            return self._spectator(table, state, event)
        slot = viewer.seat - 1
        if not 0 <= slot < len(state.seats) or not state.seats[slot].human:
            return []
        match_id = table.match_id

        def boundary() -> list[dict[str, Any]]:
            return [observation(state, slot, match_id, now_ms)]

        if isinstance(event, pb.EpisodeStarted):
            opened = state.phase is Phase.PLAYING
            return [welcome(state, slot, match_id), *(boundary() if opened else [])]
        if isinstance(event, pb.SeatJoined):
            # The first beat opening, for everyone; or, for a seat joining later, the open one.
            joiner = event.seat == viewer.seat and state.phase is Phase.PLAYING
            return boundary() if event.opens_first_beat or joiner else []
        if isinstance(event, pb.ConnectWaitEnded):
            return boundary()
        if isinstance(event, pb.OrderGiven):
            return [order_accepted(event, match_id)] if event.seat == viewer.seat else []
        if isinstance(event, pb.BeatPlayed):
            return [] if event.last else boundary()
        if isinstance(event, pb.EpisodeEnded):
            return [*boundary(), final(state, slot, match_id)]
        return []

    def _spectator(
        self, table: Table, state: MatrixGamesState, event: Message
    ) -> list[dict[str, Any]]:
        assert state.sim is not None
        if isinstance(event, pb.EpisodeStarted | pb.EpisodeEnded):
            return [spectator_frame(table, state, state.sim)]
        if isinstance(event, pb.BeatPlayed):
            assert state.before is not None
            return [
                spectator_frame(table, state, state.before, installed=event),
                spectator_frame(table, state, state.sim),
            ]
        return []

    def tick(
        self, table: Table, state: MatrixGamesState, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        return []  # the observation carries the beat's deadline; nothing counts down between

    def ack(self, table: Table, pushed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {"match_id": table.match_id, "events": list(pushed)}

    def relay(
        self, table: Table, state: MatrixGamesState, viewer: Viewer, message: BaseModel, now_ms: int
    ) -> tuple[dict[Viewer, list[dict[str, Any]]], dict[str, Any]]:
        raise GameError("bad_message", "this game relays no message")

    def hidden(self, state: MatrixGamesState, viewer: Viewer) -> frozenset[str]:
        return hidden(state, viewer)


def _text(value: str) -> str:
    return json.dumps(value)


def hidden(state: MatrixGamesState, viewer: Viewer) -> frozenset[str]:
    """Text the viewer's views must never contain, as it would appear in JSON (``json.dumps``'
    defaults): the seed; for a seat, other seats' say, notes, policy names and orders, and any
    cog out of its sight where it really is or with what it holds; for spectators, notes and
    intents."""
    sim = state.sim
    if sim is None:
        return frozenset()
    secrets = {'"seed"'}
    if len(str(sim.settings.seed)) >= 7:  # a short number could be any count in a view
        secrets.add(str(sim.settings.seed))
    orders = [(b, slot, order) for b, beat in enumerate(state.played) for slot, order in
              enumerate(beat)]  # fmt: skip
    orders += [(state.beat, slot, o) for slot, o in enumerate(state.pending) if o is not None]
    if viewer.seat == 0:
        for _, slot, order in orders:
            if order.notes:
                secrets.add(_text(order.notes))
            secrets.add(f'"seat": {slot}, "intent": {_text(order.intent)}')
            secrets.add(f'"source": {_text(order.source)}, "intent": {_text(order.intent)}')
        return frozenset(secrets)
    own = viewer.seat - 1
    mine = {text for _, slot, order in orders if slot == own for text in (order.say, order.notes)}
    for _, slot, order in orders:
        if slot == own:
            continue
        for text in (order.say, order.notes):
            if text and text not in mine:
                secrets.add(_text(text))
        secrets.add(f'"seat": {slot}, "intent": {_text(order.intent)}')
    for seat in state.seats:
        other = seat.number - 1
        if other == own:
            continue
        secrets.add(f'"type": "order_accepted", "slot": {other},')
        if not seat.human:
            secrets.add(_text(seat.policy))
    secrets.add('"inv": null, "mix": [')  # a cog's mix told, its inventory not
    secrets.update(_out_of_sight(sim, own))
    return frozenset(secrets)


def _out_of_sight(sim: Sim, own: int) -> set[str]:
    """How the observation's entry of each cog out of the seat's sight would read if it told
    where the cog really is, or what it holds."""
    secrets = set()
    entries = {e["alias"]: e for e in build_observation(sim, own, _shared(sim))["cogs"]}
    here_x, here_y = sim.xy(own)
    for other in range(SEATS):
        if other == own or sim.visible(own, other):
            continue
        entry = entries[ALIASES[other]]
        x, y = sim.xy(other)
        if (x, y) != (entry["x"], entry["y"]):
            dist = max(abs(x - here_x), abs(y - here_y))
            secrets.add(json.dumps({**entry, "x": x, "y": y, "dist": dist})[1:-1])
        leak = json.dumps({**entry, "inv": list(sim.inv[other])})
        secrets.add(leak[1 : leak.index(', "mix"')])
    return secrets
