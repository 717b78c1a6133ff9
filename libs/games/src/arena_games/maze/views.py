"""What the Maze shows each viewer: the engine's view records, pushed as they are.

A view is the engine's projection for a role (``project``: rebuilt from the state every time)
cut into records of at most 512 bytes (``view_records``), each one push, so that a client that
reassembles by ``chunk`` and ``chunks`` needs nothing else. The records are handed over as
objects carrying their text (``EncodedPush``): the match service sends each record's exact
bytes, without parsing the text and writing it again.

Who is pushed what (docs/rules/maze.md, "Online"): every viewer a view when the match starts,
when play starts and when it is decided; a mover their own view after each accepted command, and
``maze_refused`` after each refused one (their view did not change); the other player a view only
when the change lies in their square (the mover left or entered it, or dropped or took something
there); observers every change. Snapshots (a start, a reconnect) lead with ``maze_match``: the
seats, the settings and the deadlines, which records do not carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from arena_engine.maze import MazeState, Role, project, view_record_values
from arena_engine.maze.geometry import chebyshev
from arena_engine.maze.views import radius_of
from arena_runtime.proto_gen.arena.v1 import match_pb2
from google.protobuf.message import Message
from pydantic import BaseModel

from arena_games.contract import EncodedPush, GameError, Table, Viewer, unpack
from arena_games.maze import lobby, wire
from arena_games.maze.rules import MazeMatch
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as pb

RECORD: Final = "maze_view"
OBSERVER: Final = "observer"


def role_of(viewer: Viewer) -> Role:
    """A seat's player, or an observer (any viewer without a seat: observers, spectators)."""
    if viewer.seat == 1:
        return 1
    if viewer.seat == 2:
        return 2
    return OBSERVER


def records(game: MazeState, role: Role) -> list[dict[str, Any]]:
    """The role's view of the match now, as its records (in chunk order), each with its text."""
    return [EncodedPush(value, text) for text, value in view_record_values(project(game, role))]


def sees(game: MazeState, player: int, cell: int) -> bool:
    """Whether ``cell`` is in the square ``player`` sees (around the exit they left by, once
    out)."""
    me = game.position.player(player)
    centre = me.cell if me.cell is not None else game.setup.exit_of(player)[0]
    return chebyshev(game.setup.width, centre, cell) <= radius_of(me)


def match_message(table: Table, state: MazeMatch, viewer: Viewer, now_ms: int) -> dict[str, Any]:
    """The match around the records: seats, settings, deadlines and the server's time."""
    game = state.game
    timing = None if game is None else game.timing
    return {
        "type": "maze_match",
        "match_id": table.match_id,
        "room_code": table.room_code,
        "mode": table.mode,
        "sequence": table.sequence,
        "role": str(role_of(viewer)),
        "seats": [
            {
                "seat": seat.number,
                "player_id": seat.player_id,
                "name": seat.display_name,
                "kind": seat.kind.value,
                "connected": seat.number not in table.away,
                "reconnect_deadline_ms": table.away.get(seat.number),
            }
            for seat in table.seats
        ],
        # The form as a room is created with it, its mode too (the match's, not a setting's).
        "settings": {**lobby.to_form(state.settings), "mode": table.mode},
        "started_at_ms": None if timing is None else timing.started_at_ms,
        "countdown_end_ms": None if timing is None else timing.countdown_end_ms,
        "ends_at_ms": None if timing is None else timing.ends_at_ms,
        "server_time_ms": now_ms,
    }


def _presence(table: Table, event: Message, viewer: Viewer) -> list[dict[str, Any]]:
    """The other players and observers are told; a player is not told of their own."""
    if not isinstance(event, match_pb2.PlayerDisconnected | match_pb2.PlayerReconnected):
        return []
    if viewer.seat == event.seat:
        return []
    base = {"match_id": table.match_id, "sequence": table.sequence, "seat": event.seat}
    if isinstance(event, match_pb2.PlayerDisconnected):
        deadline = event.reconnect_deadline_ms
        return [{"type": "opponent_disconnected", **base, "reconnect_deadline_ms": deadline}]
    return [{"type": "opponent_reconnected", **base}]


def _touches(game: MazeState, event: Message, viewer: Viewer) -> bool:
    """Whether a player's accepted command changed what ``viewer`` sees."""
    assert isinstance(event, pb.Moved | pb.KeyDropped | pb.Exited)
    if viewer.seat not in (1, 2) or viewer.seat == event.player:
        return True
    cells = (event.src, event.dst) if isinstance(event, pb.Moved) else (event.cell,)
    return any(sees(game, viewer.seat, cell) for cell in cells)


def hidden_fragments(game: MazeState, player: int) -> frozenset[str]:
    """What ``player``'s views of this state must not contain, as compact JSON: every cell
    outside their square (``[index,flags]``), anything lying there (``null,cell]`` for keys,
    compasses and artifacts, ``"E",cell]`` for exits), and ``"opponent":`` unless the opponent
    stands inside it. Worked out from the distances, not from the engine's projection."""
    setup = game.setup
    them = game.position.player(3 - player)
    secrets = set()
    for cell, flags in enumerate(setup.cells):
        if not sees(game, player, cell):
            secrets.add(f"[{cell},{flags}]")
            secrets.add(f"null,{cell}]")
            secrets.update(f'"{side}",{cell}]' for side in "NESW")
    if them.cell is None or not sees(game, player, them.cell):
        secrets.add('"opponent":')
    return frozenset(secrets)


class MazeViews:
    def snapshot(
        self, table: Table, state: MazeMatch, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        head = match_message(table, state, viewer, now_ms)
        if state.game is None:
            return [head]
        return [head, *records(state.game, role_of(viewer))]

    def push(
        self, table: Table, state: MazeMatch, event: Message, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        if isinstance(event, match_pb2.MatchEnded):
            if not event.detail.Is(pb.MazeDecided.DESCRIPTOR):
                return []
            event = unpack(event.detail, pb.MazeDecided)
        game = state.game
        if game is None:
            return _presence(table, event, viewer)
        if isinstance(event, pb.MazeStarted):
            return self.snapshot(table, state, viewer, now_ms)
        if isinstance(event, pb.PlayStarted | pb.MazeDecided):
            return records(game, role_of(viewer))
        if isinstance(event, pb.CommandRefused):
            if viewer.seat != event.player:
                return []
            return [
                {
                    "type": "maze_refused",
                    "match_id": table.match_id,
                    "command_seq": event.command_seq,
                    "code": wire.REFUSAL_OF[event.code],
                    "t": event.t,
                }
            ]
        if isinstance(event, pb.Moved | pb.KeyDropped | pb.Exited):
            return records(game, role_of(viewer)) if _touches(game, event, viewer) else []
        return _presence(table, event, viewer)

    def tick(
        self, table: Table, state: MazeMatch, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        return []  # the deadlines are in maze_match; clients count down from its server time

    def ack(self, table: Table, pushed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The sender's pushes but its view records (which go out alone, one per message), and
        the state sequence of the view its command led to (None: refused)."""
        seqs = [m["seq"] for m in pushed if m.get("type") == RECORD]
        return {
            "match_id": table.match_id,
            "events": [m for m in pushed if m.get("type") != RECORD],
            "seq": seqs[-1] if seqs else None,
        }

    def relay(
        self, table: Table, state: MazeMatch, viewer: Viewer, message: BaseModel, now_ms: int
    ) -> tuple[dict[Viewer, list[dict[str, Any]]], dict[str, Any]]:
        raise GameError("bad_message", "this game relays no message")

    def hidden(self, state: MazeMatch, viewer: Viewer) -> frozenset[str]:
        if state.game is None or role_of(viewer) == OBSERVER:
            return frozenset()
        return hidden_fragments(state.game, viewer.seat)
