"""The gateway's in-memory hub: local sockets, what each watches, commands awaiting their answer,
and the folds of the match streams those sockets play in.

Everything here is disposable: it is rebuilt from the log (and the clients' reconnects) after a
restart. The hub never decides anything; it sends commands and reads their answers in the log.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from arena_runtime import telemetry, topics
from arena_runtime.envelope import CODEC, Command, EnvelopeError, Event, new_command
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.streams import REJECTED_TYPE
from google.protobuf.json_format import MessageToDict

from arena_gateway import matches
from arena_gateway.matches import MATCH_PREFIX, MatchView
from arena_gateway.protocol import ErrorCode, GatewayError

log = telemetry.get_logger(__name__)

READ_BATCH = 1000
ROOM_PREFIX = "room-"
PLAYER_PREFIX = "player-"
#: Waiting keys of requests answered by an event naming the request rather than caused by it.
REQUEST = "request:"
ANSWERED_BY_REQUEST = frozenset({"room_opened", "room_request_failed"})
ROOM_STATUS = {
    "room_opened": "waiting",
    "room_match_started": "playing",
    "room_match_finished": "finished",
    "room_closed": "closed",
}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Client(Protocol):
    """What the hub needs of a connected socket (arena_gateway.connection.Connection)."""

    player_id: str
    match_id: str | None
    watching: set[str]

    def push(self, message: dict[str, Any]) -> None: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """A command's answer as read from the log: its events, or its rejection."""

    events: tuple[Event, ...]
    rejection_code: str = ""
    rejection_message: str = ""

    @property
    def accepted(self) -> bool:
        return not self.rejection_code


def outcome_of(events: Iterable[Event]) -> Outcome:
    found = tuple(events)
    if found and found[0].type == REJECTED_TYPE:
        payload = found[0].payload
        return Outcome(found, payload.code, payload.message)
    return Outcome(found)


def short_type(type_: str) -> str:
    """``arena.v1.RoomOpened`` -> ``room_opened``."""
    name = type_.rsplit(".", 1)[-1]
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def payload_dict(event: Event) -> dict[str, Any]:
    payload = event.payload
    if hasattr(payload, "DESCRIPTOR"):
        return MessageToDict(payload, preserving_proto_field_name=True)
    return dict(payload) if isinstance(payload, dict) else {"value": payload}


class Hub:
    def __init__(self, log: EventLog, command_timeout: float) -> None:
        self.log = log
        self.command_timeout = command_timeout
        self.clients: dict[str, set[Client]] = {}
        self.views: dict[str, MatchView] = {}
        #: Room code -> match id, for reconnects by code.
        self.room_matches: dict[str, str] = {}
        #: Room code -> waiting | playing | finished | closed, as last seen.
        self.room_status: dict[str, str] = {}
        self._waiting: dict[str, asyncio.Future[Outcome]] = {}
        self._loading: dict[str, list[Event]] = {}
        self._settling: dict[str, list[Event] | tuple[Event, ...]] = {}
        #: Stream -> the local sockets watching it (an index of each socket's ``watching``).
        self._watchers: dict[str, set[Client]] = {}

    # -- sockets ---------------------------------------------------------------------------

    def add(self, client: Client) -> None:
        self.clients.setdefault(client.player_id, set()).add(client)
        for stream in client.watching:
            self._watchers.setdefault(stream, set()).add(client)

    def remove(self, client: Client) -> None:
        local = self.clients.get(client.player_id)
        if local is not None:
            local.discard(client)
            if not local:
                del self.clients[client.player_id]
        for stream in list(client.watching):
            self._drop_watcher(stream, client)

    def watch(self, client: Client, stream: str) -> None:
        client.watching.add(stream)
        self._watchers.setdefault(stream, set()).add(client)

    def unwatch(self, client: Client, stream: str) -> None:
        client.watching.discard(stream)
        self._drop_watcher(stream, client)

    def _drop_watcher(self, stream: str, client: Client) -> None:
        watchers = self._watchers.get(stream)
        if watchers is not None:
            watchers.discard(client)
            if not watchers:
                del self._watchers[stream]

    def local(self, player_id: str) -> set[Client]:
        return self.clients.get(player_id, set())

    # -- commands --------------------------------------------------------------------------

    async def send(self, topic: str, command: Command, *, answer_key: str = "") -> Outcome:
        """Append ``command`` and wait for its answer in the log (by command id, or by
        ``answer_key`` for flows whose answer carries the request id instead)."""
        key = answer_key or command.command_id
        view = self._view_of(command.stream)
        if view is not None and command.command_id in view.answers:
            return outcome_of(view.answers[command.command_id])  # a retried message
        future = self._waiting.get(key)
        if future is None:
            future = self._waiting[key] = asyncio.get_running_loop().create_future()
        try:
            await self.log.append(topic, [CODEC.command_record(command)])
            return await asyncio.wait_for(asyncio.shield(future), self.command_timeout)
        except TimeoutError:
            raise GatewayError(ErrorCode.TIMEOUT, "no answer from the service in time") from None
        finally:
            if future.done() or not future.cancelled():
                self._waiting.pop(key, None)

    async def tell(self, topic: str, command: Command) -> None:
        """Send a command whose answer nobody waits for (disconnects, leaving)."""
        await self.log.append(topic, [CODEC.command_record(command)])

    def _resolve(self, key: str, events: list[Event] | tuple[Event, ...]) -> None:
        """Answer a waiting command once the records read with this event are all folded: the
        events of one command are appended together, so they arrive in one read."""
        if key in self._waiting:
            self._settling[key] = events

    def settle(self) -> None:
        """After each read from the log: answer the commands whose answers arrived in it."""
        settling, self._settling = self._settling, {}
        for key, events in settling.items():
            future = self._waiting.pop(key, None)
            if future is not None and not future.done():
                future.set_result(outcome_of(events))

    # -- events ----------------------------------------------------------------------------

    async def deliver(self, event: Event) -> None:
        """One event from the fan-out reader, in log order per stream."""
        if event.stream.startswith(MATCH_PREFIX):
            self._match_event(event)
        else:
            self._lobby_event(event)

    def _match_event(self, event: Event) -> None:
        match_id = event.stream[len(MATCH_PREFIX) :]
        if match_id in self._loading:
            self._loading[match_id].append(event)
            return
        view = self.views.get(match_id)
        if view is None:
            if event.type != matches.MATCH_CREATED or event.sequence != 1:
                return
            if not any(self.local(s.player_id) for s in event.payload.seats):
                return
            view = self.views[match_id] = MatchView(match_id)
        if not view.observe(event):
            return
        caused = view.answers.get(event.causation_id) if event.causation_id else None
        if caused is not None and len(caused) == 1:
            # The command's first event (a batch may hold several commands' events); the list
            # grows with the rest of them before settle() reads it.
            self._resolve(event.causation_id, caused)
        self._push_match(view, event)

    def _push_match(self, view: MatchView, event: Event) -> None:
        if event.type == matches.MATCH_CREATED:
            if view.room_code:
                self.room_matches[view.room_code] = view.match_id
            for seat in view.seats:
                for client in self.local(seat.player_id):
                    previous = client.match_id
                    client.match_id = view.match_id
                    self.watch(client, view.stream)
                    if previous is not None and previous != view.match_id:
                        self.unwatch(client, MATCH_PREFIX + previous)  # e.g. after a rematch
                        self.forget(previous)
            return
        if event.type == REJECTED_TYPE:
            return  # answered to its sender only
        message = match_push(view, event)
        if message is None:
            return
        for client in self.watchers(view.stream):
            if event.type in (matches.PLAYER_DISCONNECTED, matches.PLAYER_RECONNECTED) and (
                view.seat_of(client.player_id) == event.payload.seat
            ):
                continue  # the opponent is told, not the player himself
            client.push(message)

    def watchers(self, stream: str) -> list[Client]:
        return list(self._watchers.get(stream, ()))

    def _lobby_event(self, event: Event) -> None:
        if event.type == REJECTED_TYPE:
            command_id = event.payload.command_id or event.causation_id
            self._resolve(command_id, (event,))
            self._resolve(REQUEST + command_id, (event,))
            return
        self._resolve(event.causation_id, (event,))
        request_id = getattr(event.payload, "request_id", "")
        if request_id and short_type(event.type) in ANSWERED_BY_REQUEST:
            self._resolve(REQUEST + request_id, (event,))
        kind = short_type(event.type)
        if event.stream.startswith(ROOM_PREFIX) and kind in ROOM_STATUS:
            self.room_status[event.stream.removeprefix(ROOM_PREFIX)] = ROOM_STATUS[kind]
        message = {
            "type": "lobby",
            "event": kind,
            "stream": event.stream,
            "data": payload_dict(event),
        }
        targets = set(self.watchers(event.stream))
        if event.stream.startswith(PLAYER_PREFIX):
            targets |= self.local(event.stream.removeprefix(PLAYER_PREFIX))
        for client in targets:
            client.push(message)

    # -- folds from the log ----------------------------------------------------------------

    def _view_of(self, stream: str) -> MatchView | None:
        if stream.startswith(MATCH_PREFIX):
            return self.views.get(stream[len(MATCH_PREFIX) :])
        return None

    async def match_view(self, match_id: str) -> MatchView | None:
        """The fold of a match, read from the log if this instance has not followed it."""
        view = self.views.get(match_id)
        if view is not None:
            return view
        self._loading.setdefault(match_id, [])
        try:
            view = MatchView(match_id)
            for event in await self.read_stream(topics.MATCH_EVENTS, view.stream):
                view.observe(event)
        finally:
            live = self._loading.pop(match_id, [])
        for event in live:
            view.observe(event)
        if view.sequence == 0:
            return None
        self.views[match_id] = view
        if view.room_code:
            self.room_matches.setdefault(view.room_code, match_id)
        return view

    async def read_stream(self, topic: str, stream: str) -> list[Event]:
        """Every event of one stream, read from its partition (a scan: for rare look-ups)."""
        partition = partition_for(stream.encode(), await self.log.partitions(topic))
        end = (await self.log.end_offsets(topic)).get(partition, 0)
        key = stream.encode()
        found: list[Event] = []
        offset = 0
        while offset < end:
            records = await self.log.read(topic, partition, offset, READ_BATCH)
            if not records:
                break
            for record in records:
                offset = record.offset + 1
                if record.key != key:
                    continue
                try:
                    found.append(CODEC.decode_event(record.value))
                except EnvelopeError:
                    continue
        return found

    def forget(self, match_id: str) -> None:
        """Drop a fold nobody here watches any more (it can always be read again)."""
        stream = MATCH_PREFIX + match_id
        if not self.watchers(stream):
            self.views.pop(match_id, None)


def match_push(view: MatchView, event: Event) -> dict[str, Any] | None:
    """The client message for one match event (None for the match's own bookkeeping)."""
    p = event.payload
    base: dict[str, Any] = {"match_id": view.match_id, "sequence": event.sequence}
    if event.type == matches.GAME_STARTED:
        return {"type": "snapshot", **view.snapshot(now_ms())}
    if event.type == matches.STRENGTH_ATTACKED:
        return {
            "type": "strength_attacked",
            **base,
            "player": p.player,
            "attacker": p.attacker,
            "target": p.target,
            "rerolls": {r.die: r.value for r in p.rerolls},
            "to_move": view.game.to_move,
            "clocks": view.clocks(now_ms()),
        }
    if event.type == matches.MIND_ATTACKED:
        return {
            "type": "mind_attacked",
            **base,
            "player": p.player,
            "target": p.target,
            "tokens": list(p.tokens),
            "value": p.value,
            "rerolls": {r.die: r.value for r in p.rerolls},
            "to_move": view.game.to_move,
            "clocks": view.clocks(now_ms()),
        }
    if event.type == matches.TURN_SKIPPED:
        return {
            "type": "turn_skipped",
            **base,
            "player": p.player,
            "reason": p.reason,
            "to_move": view.game.to_move,
            "clocks": view.clocks(now_ms()),
        }
    if event.type == matches.GAME_ENDED:
        winner = view.seats[p.winner - 1].player_id if len(view.seats) >= p.winner else ""
        return {
            "type": "game_over",
            **base,
            "winner": p.winner,
            "winner_player_id": p.winner_player_id or winner,
            "reason": p.reason,
            "remaining": {"1": p.remaining1, "2": p.remaining2},
        }
    if event.type == matches.PLAYER_DISCONNECTED:
        return {
            "type": "opponent_disconnected",
            **base,
            "seat": p.seat,
            "reconnect_deadline_ms": p.reconnect_deadline_ms,
        }
    if event.type == matches.PLAYER_RECONNECTED:
        return {"type": "opponent_reconnected", **base, "seat": p.seat}
    return None


def command(stream: str, payload: Any, command_id: str) -> Command:
    return new_command(stream, payload, command_id=command_id)
