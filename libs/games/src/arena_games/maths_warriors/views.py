"""What Maths Warriors shows: the snapshot, the push of each event, the clocks (docs/protocol.md).

Maths Warriors hides nothing: every viewer (either seat, a spectator) gets the same view, except
that a player is not told of their own disconnect or reconnect. The JSON is exactly what clients
got before the game seam (the gateway built it then; the tests of tests/e2e and
tests/services/gateway pin it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena_engine import maths_warriors as mw
from arena_runtime.proto_gen.arena.v1 import match_pb2
from google.protobuf.message import Message
from pydantic import BaseModel

from arena_games.contract import GameError, Table, Viewer, unpack
from arena_games.maths_warriors import client, wire
from arena_games.maths_warriors.rules import MathsWarriorsState
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb


def _remaining(deadline: int | None, now_ms: int) -> int | None:
    return None if deadline is None else max(0, deadline - now_ms)


def _protocol_reason(reason: mw.WinReason | None) -> str | None:
    if reason is None:
        return None
    return wire.PROTOCOL_REASON[reason.value]


def dice_dict(dice: tuple[int | None, ...]) -> dict[str, int | None]:
    return {die.value: value for die, value in zip(mw.DICE, dice, strict=False)}


def clocks(game: mw.GameState, now_ms: int) -> dict[str, Any]:
    """The clocks of a game as every push carries them."""
    playing = game.status is mw.Status.PLAYING
    return {
        "server_time_ms": now_ms,
        "game_seconds": game.clocks.game_seconds,
        "move_seconds": game.clocks.move_seconds,
        "game_remaining_ms": _remaining(game.game_deadline_ms, now_ms) if playing else None,
        "move_remaining_ms": _remaining(game.move_deadline_ms, now_ms) if playing else None,
        "game_deadline_ms": game.game_deadline_ms,
        "move_deadline_ms": game.move_deadline_ms,
    }


def snapshot_body(table: Table, state: MathsWarriorsState, now_ms: int) -> dict[str, Any]:
    """The full state a client needs to draw the game (the snapshot push without its type)."""
    game = state.game
    return {
        "match_id": table.match_id,
        "room_code": table.room_code,
        "mode": table.mode,
        "preview": state.settings.preview,
        "sequence": table.sequence,
        "status": game.status.value,
        "seats": [
            {
                "seat": seat.number,
                "player_id": seat.player_id,
                "name": seat.display_name,
                "kind": "human" if seat.human else "ai",
                "connected": seat.number not in table.away,
                "reconnect_deadline_ms": table.away.get(seat.number),
            }
            for seat in table.seats
        ],
        "dice": {"1": dice_dict(game.dice1), "2": dice_dict(game.dice2)},
        "first": game.first,
        "to_move": game.to_move,
        "move_count": game.move_count,
        "winner": game.winner,
        "win_reason": _protocol_reason(game.win_reason),
        "rules": game.ruleset.to_dict(),
        "clocks": clocks(game, now_ms),
    }


def event_push(
    table: Table, state: MathsWarriorsState, event: Message, now_ms: int
) -> dict[str, Any] | None:
    """The client message for one match event (None for the match's own bookkeeping)."""
    game = state.game
    base: dict[str, Any] = {"match_id": table.match_id, "sequence": table.sequence}
    if isinstance(event, match_pb2.MatchEnded):
        event = unpack(event.detail, pb.GameEnded)
    if isinstance(event, pb.GameStarted):
        return {"type": "snapshot", **snapshot_body(table, state, now_ms)}
    if isinstance(event, pb.StrengthAttacked):
        return {
            "type": "strength_attacked",
            **base,
            "player": event.player,
            "attacker": event.attacker,
            "target": event.target,
            "rerolls": {r.die: r.value for r in event.rerolls},
            "to_move": game.to_move,
            "clocks": clocks(game, now_ms),
        }
    if isinstance(event, pb.MindAttacked):
        return {
            "type": "mind_attacked",
            **base,
            "player": event.player,
            "target": event.target,
            "tokens": list(event.tokens),
            "value": event.value,
            "rerolls": {r.die: r.value for r in event.rerolls},
            "to_move": game.to_move,
            "clocks": clocks(game, now_ms),
        }
    if isinstance(event, pb.TurnSkipped):
        return {
            "type": "turn_skipped",
            **base,
            "player": event.player,
            "reason": event.reason,
            "to_move": game.to_move,
            "clocks": clocks(game, now_ms),
        }
    if isinstance(event, pb.GameEnded):
        seats = table.seats
        winner = seats[event.winner - 1].player_id if len(seats) >= event.winner else ""
        return {
            "type": "game_over",
            **base,
            "winner": event.winner,
            "winner_player_id": event.winner_player_id or winner,
            "reason": event.reason,
            "remaining": {"1": event.remaining1, "2": event.remaining2},
        }
    if isinstance(event, match_pb2.PlayerDisconnected):
        return {
            "type": "opponent_disconnected",
            **base,
            "seat": event.seat,
            "reconnect_deadline_ms": event.reconnect_deadline_ms,
        }
    if isinstance(event, match_pb2.PlayerReconnected):
        return {"type": "opponent_reconnected", **base, "seat": event.seat}
    return None


def _about_viewer(event: Message, viewer: Viewer) -> bool:
    """A player's own disconnect or reconnect: the opponent is told, not the player himself."""
    presence = (match_pb2.PlayerDisconnected, match_pb2.PlayerReconnected)
    return isinstance(event, presence) and viewer.seat != 0 and event.seat == viewer.seat


class MathsWarriorsViews:
    def snapshot(
        self, table: Table, state: MathsWarriorsState, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        return [{"type": "snapshot", **snapshot_body(table, state, now_ms)}]

    def push(
        self,
        table: Table,
        state: MathsWarriorsState,
        event: Message,
        viewer: Viewer,
        now_ms: int,
    ) -> list[dict[str, Any]]:
        if _about_viewer(event, viewer):
            return []
        message = event_push(table, state, event, now_ms)
        return [] if message is None else [message]

    def tick(
        self, table: Table, state: MathsWarriorsState, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        if state.game.status is not mw.Status.PLAYING:
            return []
        return [{"type": "time_sync", "match_id": table.match_id, **clocks(state.game, now_ms)}]

    def ack(self, table: Table, pushed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {"match_id": table.match_id, "events": list(pushed)}

    def relay(
        self,
        table: Table,
        state: MathsWarriorsState,
        viewer: Viewer,
        message: BaseModel,
        now_ms: int,
    ) -> tuple[dict[Viewer, list[dict[str, Any]]], dict[str, Any]]:
        """A live preview: the expression checked against the whitelist, evaluated by the
        rules, shown to the opponent when the match has previews on (``preview_off`` else)."""
        if not isinstance(message, client.Preview):
            raise GameError("bad_message", "only a preview is relayed")
        tokens = client.check_tokens(message.tokens)
        if message.target is not None:  # shown to the opponent: only a die may be named
            client.check_die(message.target, "target")
        if not state.settings.preview:
            raise GameError("preview_off", "this match has no live preview")
        evaluation = client.evaluate(tokens)
        pushed = {
            "type": "preview",
            "match_id": table.match_id,
            "seat": viewer.seat,
            "target": message.target,
            "tokens": [
                t if isinstance(t, str) else {"die": t.die, "value": t.value} for t in tokens
            ],
            **evaluation,
        }
        others = [s for s in table.seats if s.number != viewer.seat and s.human]
        shown = {Viewer(s.number): [pushed] for s in others}
        return shown, {**evaluation, "delivered": bool(others)}

    def hidden(self, state: MathsWarriorsState, viewer: Viewer) -> frozenset[str]:
        return frozenset()  # open information: both seats' dice are on the table
