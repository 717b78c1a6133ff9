"""Each viewer's pushes, made where the state is, published on ``arena.match.views``.

After every append the worker makes, with the match's game's ``views``, what each viewer is
shown for each new event (on the state after that event), and the ack of each answered command
for its sender, and publishes them as one ``arena.v1.ViewBatch`` per stream (docs/games.md,
"views"). The gateway only relays them. A viewer is a person's seat or the spectators (the
Maze's observers): AI and scripted seats have nobody to push to.

Pushes are compact JSON, as the gateway writes every message, so that what a game hides
(``views.hidden``) is checked on the very bytes a socket gets.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from arena_games import contract
from arena_runtime import telemetry
from arena_runtime.envelope import TYPE_HEADER, Event
from arena_runtime.eventlog import OutgoingRecord
from arena_runtime.proto_gen.arena.v1 import views_pb2 as pb
from arena_runtime.streams import REJECTED_TYPE, Answer
from pydantic import ValidationError

from arena_match.state import MatchState

log = telemetry.get_logger(__name__)

SPECTATOR = contract.Viewer(0, "spectator")
BATCH_TYPE = pb.ViewBatch.DESCRIPTOR.full_name
JSON = "application/json"


#: ``json.dumps(value, separators=(",", ":"))`` without building an encoder for each push.
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def compact(message: dict[str, Any]) -> bytes:
    if type(message) is contract.EncodedPush:
        return message.text.encode()
    return _COMPACT.encode(message).encode()


def viewers_of(state: MatchState, spectated: bool = True) -> list[contract.Viewer]:
    """Who may watch the match: each person's seat, and the spectators (unless nobody is known
    to watch as one)."""
    seats = [contract.Viewer(seat.number) for seat in state.seats if seat.human]
    return [*seats, SPECTATOR] if spectated else seats


def viewer_proto(state: MatchState, viewer: contract.Viewer) -> pb.Viewer:
    player = state.seat(viewer.seat).player_id if viewer.seat else ""
    return pb.Viewer(seat=viewer.seat, role=viewer.role, player_id=player)


def viewer_of(message: pb.Viewer) -> contract.Viewer:
    return contract.Viewer(message.seat, message.role)


def event_pushes(
    state: MatchState, event: Event, now_ms: int, viewers: Iterable[contract.Viewer]
) -> dict[contract.Viewer, list[dict[str, Any]]]:
    """What each viewer is pushed for one event, ``state`` being the match after it."""
    module = state.module
    if module is None or state.game is None or event.type == REJECTED_TYPE:
        return {}
    table = state.table(event.sequence)
    shown: dict[contract.Viewer, list[dict[str, Any]]] = {}
    for viewer in viewers:
        try:
            made = module.views.push(table, state.game, event.payload, viewer, now_ms)
        except Exception:
            # The events are in the log already: a view that cannot be made must not stop the
            # match. The viewer redraws from the next snapshot.
            log.exception("a push could not be made", stream=event.stream, type=event.type)
            continue
        if made:
            shown[viewer] = made
    return shown


def grouped(
    state: MatchState, shown: dict[contract.Viewer, list[dict[str, Any]]]
) -> list[pb.ViewPush]:
    """The pushes, viewers shown the same messages together (most games show every viewer the
    same thing), in viewer order."""
    groups: list[tuple[list[dict[str, Any]], pb.ViewPush]] = []
    for viewer, messages in shown.items():
        # Compared as values first: each group's messages are written as JSON once.
        push = next((p for m, p in groups if m == messages), None)
        if push is None:
            push = pb.ViewPush(messages=[compact(m) for m in messages])
            groups.append((messages, push))
        push.viewers.append(viewer_proto(state, viewer))
    return [push for _, push in groups]


def batch(
    state: MatchState,
    kind: int,
    after_sequence: int,
    sequence: int,
    now_ms: int,
    pushes: Sequence[pb.ViewPush] = (),
    answers: Sequence[pb.CommandAnswer] = (),
    request_id: str = "",
) -> pb.ViewBatch:
    info = state.info
    return pb.ViewBatch(
        match_id=info.match_id if info is not None else "",
        game=info.game if info is not None else "",
        kind=kind,  # type: ignore[arg-type]
        after_sequence=after_sequence,
        sequence=sequence,
        answers=answers,
        pushes=pushes,
        request_id=request_id,
        over=state.over,
        time_ms=now_ms,
        away=[seat for seat, _ in state.away],
        seats=[viewer_proto(state, contract.Viewer(s.number)) for s in state.seats if s.human],
        room_code=info.room_code if info is not None else "",
    )


def snapshots(
    state: MatchState, sequence: int, now_ms: int, viewers: Iterable[contract.Viewer]
) -> list[pb.ViewPush]:
    """Each viewer's snapshot of the match now."""
    module = state.module
    if module is None or state.game is None:
        return []
    table = state.table(sequence)
    shown = {}
    for viewer in viewers:
        try:
            shown[viewer] = module.views.snapshot(table, state.game, viewer, now_ms)
        except Exception:
            log.exception("a snapshot could not be made", match=table.match_id)
    return grouped(state, shown)


def ticks(
    state: MatchState, sequence: int, now_ms: int, spectated: bool = True
) -> list[pb.ViewPush]:
    """The periodic pushes of a live match (empty: none)."""
    module = state.module
    if module is None or state.game is None or state.over:
        return []
    table = state.table(sequence)
    shown = {}
    for viewer in viewers_of(state, spectated):
        try:
            made = module.views.tick(table, state.game, viewer, now_ms)
        except Exception:
            log.exception("a tick could not be made", match=table.match_id)
            continue
        if made:
            shown[viewer] = made
    return grouped(state, shown)


def relayed_message(module: contract.GameModule[Any], data: bytes) -> Any:
    """The game's relayed client message in ``data`` (JSON); GameError(bad_message) if it is
    none of ``client.relayed``."""
    try:
        loaded = json.loads(data)
        kind = loaded["type"]
        for model in module.client.relayed:
            if model.model_fields["type"].annotation.__args__[0] == kind:  # type: ignore[union-attr]
                return model.model_validate(loaded)
    except (ValueError, KeyError, TypeError, ValidationError):
        pass
    raise contract.GameError("bad_message", "not a message this game relays")


def sender_seat(state: MatchState, payload: Any) -> int:
    """The seat whose player sent a command (0: a timer, another service, a stranger)."""
    player = getattr(payload, "player_id", "")
    return (state.seat_of(player) or 0) if player else 0


def answer_of(
    answer: Answer, state: MatchState, pushed: list[dict[str, Any]], seat: int
) -> pb.CommandAnswer:
    """A command's answer for the gateway: a refusal, or the sender's ack (made by the game from
    what the sender was pushed for the command's events)."""
    if answer.rejection is not None:
        return pb.CommandAnswer(
            command_id=answer.command_id,
            code=answer.rejection.code,
            message=answer.rejection.message,
            repeated=answer.repeated,
        )
    ack = b""
    module = state.module
    # An accepted command that appended nothing (a repeat, a no-op) gets the game's ack with
    # nothing pushed, so its shape is the game's either way (docs/protocol.md).
    if module is not None and seat and state.info is not None:
        last = answer.events[-1].sequence if answer.events else 0
        try:
            ack = compact(module.views.ack(state.table(last), pushed))
        except Exception:
            log.exception("an ack could not be made", stream=answer.stream)
    return pb.CommandAnswer(command_id=answer.command_id, ack=ack, repeated=answer.repeated)


def record(
    stream: str, message: pb.ViewBatch, traceparent: str = "", tracestate: str = ""
) -> OutgoingRecord:
    """The batch's record; with the trace of the command it answers, so its relay is in it."""
    headers = [(TYPE_HEADER, BATCH_TYPE.encode())]
    if traceparent:
        headers.append((telemetry.TRACEPARENT, traceparent.encode()))
    if tracestate:
        headers.append((telemetry.TRACESTATE, tracestate.encode()))
    return OutgoingRecord(
        value=message.SerializeToString(), key=stream.encode(), headers=tuple(headers)
    )


__all__ = [
    "SPECTATOR",
    "answer_of",
    "batch",
    "event_pushes",
    "grouped",
    "record",
    "sender_seat",
    "snapshots",
    "ticks",
    "viewer_of",
    "viewers_of",
]
