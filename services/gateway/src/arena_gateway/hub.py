"""The gateway's in-memory hub: local sockets, what each watches, commands awaiting their answer,
and the matches whose views it relays.

Everything here is disposable: it is rebuilt from the log (and the clients' reconnects) after a
restart. The hub never decides anything and folds no game: it sends commands, reads the lobby's
answers in the log and the matches' in ``arena.match.views``, where the match service (which
holds each match's state) wrote every viewer's pushes (docs/games.md).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena_runtime import metrics, telemetry, topics
from arena_runtime.cache import Cache, CacheUnavailableError
from arena_runtime.envelope import CODEC, Command, EnvelopeError, Event, new_command
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import views_pb2 as vpb
from arena_runtime.streams import REJECTED_TYPE
from google.protobuf.descriptor import Descriptor, EnumDescriptor
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError

from arena_gateway import metrics as gateway_metrics
from arena_gateway.limits import CACHE_DOWN_WARNING_SECONDS
from arena_gateway.protocol import COMPACT, ErrorCode, GatewayError, JsonText

log = telemetry.get_logger(__name__)

READ_BATCH = 1000
MATCH_PREFIX = "match-"
ROOM_PREFIX = "room-"
PLAYER_PREFIX = "player-"
DUEL_PREFIX = "duel-"
#: A duel's last event: its players are forgotten after it.
DUEL_ENDS = frozenset({"duel_declined", "duel_settled"})
#: What a duel's pushes leave out: the seeds its games share and their settings (the seeds
#: and the armies), which the games' own views keep from their players.
DUEL_SECRETS = frozenset({"player_seed", "shop_seed"})
DUEL_STARTED_SECRETS = DUEL_SECRETS | {"settings"}
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

    def push_text(self, text: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """A command's answer as read from the log: its events, or its rejection."""

    events: tuple[Event, ...]
    rejection_code: str = ""
    rejection_message: str = ""
    #: A relayed game's answer: the ack's result the match service made for the sender, as the
    #: compact JSON it wrote it in ("{}" for an empty one), relayed to the sender as it is
    #: rather than read and written again; None for an answer without one.
    ack_json: str | None = None

    @property
    def accepted(self) -> bool:
        return not self.rejection_code

    @property
    def ack(self) -> dict[str, Any] | None:
        """The ack's result, read."""
        return None if self.ack_json is None else json.loads(self.ack_json)

    @property
    def ack_result(self) -> JsonText | None:
        """The ack's result for the sender's ``ack`` message, as written; None if it has none
        or an empty one."""
        text = self.ack_json
        return JsonText(text) if text is not None and text != "{}" else None


def outcome_of(events: Iterable[Event]) -> Outcome:
    found = tuple(events)
    if found and found[0].type == REJECTED_TYPE:
        payload = found[0].payload
        return Outcome(found, payload.code, payload.message)
    return Outcome(found)


@functools.lru_cache(maxsize=1024)
def short_type(type_: str) -> str:
    """``arena.v1.RoomOpened`` -> ``room_opened``."""
    name = type_.rsplit(".", 1)[-1]
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def payload_dict(event: Event) -> dict[str, Any]:
    """A lobby event's fields in the words the snapshots use: ``name`` (not ``display_name``),
    enum values as lower-case words without their type's prefix (``guest``, ``casual``,
    ``easy``, not ``PLAYER_KIND_GUEST``, ``MATCH_MODE_CASUAL``, ``AI_LEVEL_EASY``). Every field is
    there, a default too (``connected: false``, a draw's ``winner: 0``): protobuf's JSON leaves
    them out, and a client would read a missing ``connected`` as unknown, not false."""
    payload = event.payload
    if hasattr(payload, "DESCRIPTOR"):
        plain = MessageToDict(
            payload, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        return _client_words(payload.DESCRIPTOR, plain)
    return dict(payload) if isinstance(payload, dict) else {"value": payload}


def _enum_word(enum: EnumDescriptor, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
    return value.removeprefix(prefix).lower()


def _client_words(descriptor: Descriptor, data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        field = descriptor.fields_by_name.get(key)
        if field is not None and field.enum_type is not None:
            value = (
                [_enum_word(field.enum_type, v) for v in value]
                if isinstance(value, list)
                else _enum_word(field.enum_type, value)
            )
        elif (
            field is not None
            and field.message_type is not None
            and field.message_type.full_name != "google.protobuf.Any"
        ):
            if isinstance(value, list):
                value = [_client_words(field.message_type, v) for v in value]
            elif isinstance(value, dict):
                value = _client_words(field.message_type, value)
        out["name" if key == "display_name" else key] = value
    return out


#: Answers kept per relayed match, for a message its sender repeats.
KEPT_ANSWERS = 64
#: Lobby answers this instance keeps (by command id or request key): a message repeated after a
#: lost ack gets its answer again; the services answer a repeat from their log but append
#: nothing new, so nothing else would answer it.
KEPT_LOBBY_ANSWERS = 4096


#: Every answer is also kept this long in the shared cache (Redis when distributed), under
#: ``ANSWER_KEY`` + its waiting key: a message repeated to another gateway instance (a new socket
#: of the session behind a load balancer, after a lost ack) gets the earlier answer from there,
#: not a timeout. Long enough for a client's reconnect and resend, short enough that the cache
#: holds only the last minutes' answers.
KEPT_ANSWER_SECONDS = 600.0
ANSWER_KEY = "gateway-answer:"


_RELAYED_HEAD = COMPACT.encode({"events": [], "code": "", "message": ""})


def encode_outcome(outcome: Outcome) -> bytes:
    """An answer as the shared cache keeps it (JSON: the events as logged, base64; the ack as
    the match service wrote it, without writing it again)."""
    if not outcome.events and not outcome.rejection_code and not outcome.rejection_message:
        # A relayed game's accepted answer, nearly every one kept: the same head each time.
        head = _RELAYED_HEAD
    else:
        head = COMPACT.encode(
            {
                "events": [
                    base64.b64encode(CODEC.encode_event(e)).decode() for e in outcome.events
                ],
                "code": outcome.rejection_code,
                "message": outcome.rejection_message,
            }
        )
    ack = "null" if outcome.ack_json is None else outcome.ack_json
    return f'{head[:-1]},"ack":{ack}}}'.encode()


def decode_outcome(data: bytes) -> Outcome:
    kept = json.loads(data)
    events = tuple(CODEC.decode_event(base64.b64decode(e)) for e in kept["events"])
    ack = None if kept["ack"] is None else COMPACT.encode(kept["ack"])
    return Outcome(events, kept["code"], kept["message"], ack_json=ack)


@dataclass
class Relayed:
    """A match whose views this instance relays, as its ViewBatches describe it."""

    match_id: str
    game: str
    #: The stream's sequence of the last views relayed.
    sequence: int = 0
    #: Seat -> player id of the people's seats.
    seats: dict[int, str] = field(default_factory=dict)
    room_code: str = ""
    over: bool = False
    away: frozenset[int] = frozenset()
    answers: OrderedDict[str, Outcome] = field(default_factory=OrderedDict)

    @property
    def stream(self) -> str:
        return MATCH_PREFIX + self.match_id

    def seat_of(self, player_id: str) -> int | None:
        for seat, player in self.seats.items():
            if player == player_id:
                return seat
        return None

    def learn(self, batch: vpb.ViewBatch) -> None:
        if batch.seats:
            self.seats = {v.seat: v.player_id for v in batch.seats}
        self.room_code = batch.room_code or self.room_code
        self.over = self.over or batch.over
        self.away = frozenset(batch.away)


def answer_outcome(answer: vpb.CommandAnswer) -> Outcome:
    ack = None if answer.code else answer.ack.decode() or "{}"
    return Outcome((), answer.code, answer.message, ack_json=ack)


class Answer(asyncio.Future[Outcome]):
    """A command's answer, which each of its senders awaits through :func:`answer_of`.

    Its result wakes every sender's own waiter at once, on the turn of the loop that sets it (the
    fan-out's): a done callback would run on the next turn and only then wake the sender, one
    turn later again, for every ack."""

    def __init__(self) -> None:
        super().__init__()
        self.waiters: list[asyncio.Future[None]] = []

    def set_result(self, result: Outcome) -> None:
        super().set_result(result)
        for waiter in self.waiters:
            _wake(waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def answer_of(answer: Answer, seconds: float) -> Outcome:
    """``asyncio.wait_for(asyncio.shield(answer), seconds)``: the answer, or TimeoutError; a
    caller cancelled or timed out leaves ``answer`` to the other senders of the same command.
    One future of the caller's own, woken by the answer or by the timer: wait_for and shield
    took three turns of the loop and twice the CPU to hand an answer over."""
    if not answer.done():
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        answer.waiters.append(waiter)
        timer = loop.call_later(seconds, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            answer.waiters.remove(waiter)
        if not answer.done():
            raise TimeoutError
    return answer.result()


class Hub:
    def __init__(self, log: EventLog, command_timeout: float, cache: Cache | None = None) -> None:
        self.log = log
        #: Where answers are kept for the other instances (None: this instance's memory only).
        self.cache = cache
        self._cache_warned = -CACHE_DOWN_WARNING_SECONDS
        self.command_timeout = command_timeout
        #: Whether each command topic's service answers (logged, on /readyz and in metrics).
        self.answering = gateway_metrics.Answering(command_timeout)
        self.clients: dict[str, set[Client]] = {}
        #: Room code -> match id, for reconnects by code.
        self.room_matches: dict[str, str] = {}
        #: Room code -> waiting | playing | finished | closed, as last seen.
        self.room_status: dict[str, str] = {}
        self._waiting: dict[str, Answer] = {}
        self._settling: dict[str, list[Event] | tuple[Event, ...]] = {}
        #: Stream -> the local sockets watching it (an index of each socket's ``watching``).
        self._watchers: dict[str, set[Client]] = {}
        #: Matches whose views the match service makes and this instance relays, by id.
        self.relays: dict[str, Relayed] = {}
        #: Stream -> the local sockets watching it as spectators (no seat).
        self._spectators: dict[str, set[Client]] = {}
        #: ViewRequest id -> its answer, awaited.
        self._requests: dict[str, asyncio.Future[vpb.ViewBatch]] = {}
        #: The latest lobby commands' answers, by their key (KEPT_LOBBY_ANSWERS).
        self._answered: OrderedDict[str, Outcome] = OrderedDict()
        #: Answers being written to the shared cache (off the ack's path).
        self._keeping: set[asyncio.Task[None]] = set()
        #: Duel stream -> its two players (from its DuelOffered), until it is declined or
        #: settled: every event of a duel is pushed to both players' sockets here.
        self._duels: dict[str, tuple[str, ...]] = {}

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
        for stream in list(self._spectators):
            self._drop_spectator(stream, client)

    def spectate(self, client: Client, stream: str) -> None:
        """Watch a match's stream as a spectator (the spectators' view)."""
        self.watch(client, stream)
        self._spectators.setdefault(stream, set()).add(client)

    def _drop_spectator(self, stream: str, client: Client) -> None:
        spectators = self._spectators.get(stream)
        if spectators is not None:
            spectators.discard(client)
            if not spectators:
                del self._spectators[stream]

    def watch(self, client: Client, stream: str) -> None:
        client.watching.add(stream)
        self._watchers.setdefault(stream, set()).add(client)

    def unwatch(self, client: Client, stream: str) -> None:
        client.watching.discard(stream)
        self._drop_watcher(stream, client)
        self._drop_spectator(stream, client)

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
        relay = self.relays.get(command.stream.removeprefix(MATCH_PREFIX))
        if relay is not None and command.command_id in relay.answers:
            self.answering.answered(topic)  # a retried message, answered meanwhile
            return relay.answers[command.command_id]
        if relay is None and key in self._answered:
            return self._answered[key]  # a lobby message repeated
        if relay is None:
            kept = await self.kept(key)
            if kept is not None:  # repeated here after its answer was given by another instance
                self._remember(key, kept)
                return kept
        future = self._waiting.get(key)
        if future is None:
            future = self._waiting[key] = Answer()
        kind = gateway_metrics.short(command.type)
        waiting = metrics.series(gateway_metrics.COMMANDS_WAITING, topic)
        waiting.inc()
        outcome = "unavailable"
        try:
            await self.log.append(topic, [CODEC.command_record(command)])
            sent = time.perf_counter()
            answer = await answer_of(future, self.command_timeout)
            metrics.series(gateway_metrics.COMMAND_SECONDS, topic, kind).observe(
                time.perf_counter() - sent
            )
            outcome = "accepted" if answer.accepted else "rejected"
            self.answering.answered(topic)
            if relay is None:
                self._remember(key, answer)
            if self.cache is not None:  # kept for the other instances, without delaying the ack
                keeping = asyncio.get_running_loop().create_task(self._keep(key, answer))
                self._keeping.add(keeping)
                keeping.add_done_callback(self._keeping.discard)
            return answer
        except TimeoutError:
            outcome = "timeout"
            self.answering.timed_out(topic)
            raise GatewayError(ErrorCode.TIMEOUT, "no answer from the service in time") from None
        finally:
            waiting.dec()
            metrics.series(gateway_metrics.COMMANDS, topic, kind, outcome).inc()
            if future.done() or not future.cancelled():
                self._waiting.pop(key, None)

    def _remember(self, key: str, answer: Outcome) -> None:
        self._answered[key] = answer
        while len(self._answered) > KEPT_LOBBY_ANSWERS:
            self._answered.popitem(last=False)

    async def kept(self, key: str) -> Outcome | None:
        """The answer another instance (or this one) gave to the command waited for by ``key``,
        from the shared cache; None if none is kept (or the cache cannot say)."""
        if self.cache is None:
            return None
        try:
            data = await self.cache.get(ANSWER_KEY + key)
            return None if data is None else decode_outcome(data)
        except CacheUnavailableError as exc:
            self._cache_down(exc)
            return None
        except Exception:
            log.warning("a kept answer could not be read", exc_info=True)
            return None

    async def _keep(self, key: str, answer: Outcome) -> None:
        assert self.cache is not None
        try:
            await self.cache.set(ANSWER_KEY + key, encode_outcome(answer), KEPT_ANSWER_SECONDS)
        except CacheUnavailableError as exc:
            self._cache_down(exc)
        except Exception:  # the answer is given all the same; only a repeat elsewhere loses it
            log.warning("an answer could not be kept", exc_info=True)

    def _cache_down(self, exc: CacheUnavailableError) -> None:
        """Redis down is an outage the operator is told of, at most once a minute, without a
        traceback per message: answers are still given, only repeats on another instance miss."""
        now = time.monotonic()
        if now - self._cache_warned >= CACHE_DOWN_WARNING_SECONDS:
            self._cache_warned = now
            log.warning(
                "the cache cannot be reached: answers are not kept for other instances until it "
                "is back. Check Redis (ARENA_REDIS_URL; docs/operations.md#redis-is-flushed)",
                error=str(exc),
            )

    def in_flight(self) -> list[Answer]:
        """The answers of the commands sent and not answered yet."""
        return list(self._waiting.values())

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
        """One lobby event from the fan-out reader, in log order per stream."""
        self._lobby_event(event)

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
        targets = set(self.watchers(event.stream))
        if event.stream.startswith(PLAYER_PREFIX):
            targets |= self.local(event.stream.removeprefix(PLAYER_PREFIX))
        elif event.stream.startswith(DUEL_PREFIX):
            for player in self._duel_players(event, kind):
                targets |= self.local(player)
        if not targets:
            return  # nobody here to tell: the push is not made
        data = payload_dict(event)
        if event.stream.startswith(DUEL_PREFIX):
            hidden = DUEL_STARTED_SECRETS if kind == "duel_started" else DUEL_SECRETS
            data = {k: v for k, v in data.items() if k not in hidden}
        message = {"type": "lobby", "event": kind, "stream": event.stream, "data": data}
        text = COMPACT.encode(message)  # written once for every socket it goes to
        for client in targets:
            client.push_text(text)

    def _duel_players(self, event: Event, kind: str) -> tuple[str, ...]:
        """The two players of the duel an event is of: the challenged player learns of the
        challenge (``duel_offered``), and both of its answer, start and end, on every socket."""
        payload = event.payload
        players: tuple[str, ...]
        if kind == "duel_offered":
            players = (payload.challenger.player_id, payload.opponent.player_id)
            self._duels[event.stream] = players
        else:
            players = self._duels.get(event.stream, ())
            if not players and getattr(payload, "players", None):
                named = payload.players  # a duel offered before this instance started
                players = tuple(getattr(p, "player_id", p) for p in named)
        if kind in DUEL_ENDS:
            self._duels.pop(event.stream, None)
        return players

    # -- views relayed ------------------------------------------------------------------------

    async def deliver_views(self, record: Record) -> None:
        """One ViewBatch from arena.match.views (every partition, in order per match)."""
        try:
            batch = vpb.ViewBatch.FromString(record.value)
        except DecodeError:
            log.warning("fan-out skipped a view batch it cannot read", offset=record.offset)
            return
        if batch.request_id:
            future = self._requests.pop(batch.request_id, None)
            if future is not None and not future.done():
                future.set_result(batch)
            return
        relay = self.relays.get(batch.match_id)
        opening = batch.kind == vpb.VIEW_KIND_EVENTS and batch.after_sequence == 0
        if relay is None and (opening or batch.kind == vpb.VIEW_KIND_SNAPSHOT):
            relay = self._opened(batch)
        if relay is not None:
            away = relay.away
            relay.learn(batch)
            if batch.resumed:
                # The spectators' pushes had stopped (their lease lapsed): their redraw, whatever
                # sequence the match's other viewers are at.
                self._push_views(relay, batch)
            elif self._current(relay, batch):
                self._push_views(relay, batch)
            if relay.away - away:
                await self._still_here(relay, relay.away - away, batch.sequence)
        for answer in batch.answers:
            outcome = answer_outcome(answer)
            if relay is not None:
                relay.answers[answer.command_id] = outcome
                while len(relay.answers) > KEPT_ANSWERS:
                    relay.answers.popitem(last=False)
            waiting = self._waiting.pop(answer.command_id, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(outcome)

    async def _still_here(self, relay: Relayed, gone: frozenset[int], sequence: int) -> None:
        """Seats just recorded away whose player's socket here plays the match (the match
        service recovered and does not know who is connected): record them back."""
        watching = {c.player_id for c in self.watchers(relay.stream)}
        for seat in sorted(gone):
            player = relay.seats.get(seat)
            if player is None or player not in watching:
                continue
            payload = match_pb2.PlayerReconnected(player_id=player)
            # One id per disconnection: every instance holding the player sends the same command.
            cid = f"gw:present:{sequence}:{player}"
            await self.tell(
                topics.MATCH_COMMANDS, new_command(relay.stream, payload, command_id=cid)
            )

    def _opened(self, batch: vpb.ViewBatch) -> Relayed | None:
        """A match that opened (or was redrawn) with a seat of a player connected here: relay
        it, and its seats' sockets here follow it."""
        seated = [v.player_id for v in batch.seats]
        if not any(self.local(player) for player in seated):
            return None
        relay = self.relays[batch.match_id] = Relayed(batch.match_id, batch.game)
        relay.learn(batch)
        if relay.room_code:
            self.room_matches[relay.room_code] = relay.match_id
        for player in seated:
            for client in self.local(player):
                previous = client.match_id
                client.match_id = relay.match_id
                self.watch(client, relay.stream)
                if previous is not None and previous != relay.match_id:
                    self.unwatch(client, MATCH_PREFIX + previous)
                    self.forget(previous)
        return relay

    def _current(self, relay: Relayed, batch: vpb.ViewBatch) -> bool:
        """Whether a batch is to be relayed (not one relayed before); a gap before it (views
        lost to a crash of their maker) has the local viewers redrawn."""
        if batch.kind == vpb.VIEW_KIND_TICK:
            return True
        if batch.kind == vpb.VIEW_KIND_SNAPSHOT:
            if batch.sequence <= relay.sequence:
                return False
            relay.sequence = batch.sequence
            return True
        if batch.sequence == batch.after_sequence:
            return True  # answers only
        if batch.sequence <= relay.sequence:
            return False
        if batch.after_sequence > relay.sequence and relay.sequence:
            asyncio.get_running_loop().create_task(self.redraw(relay))
        relay.sequence = batch.sequence
        return True

    def _push_views(self, relay: Relayed, batch: vpb.ViewBatch) -> None:
        stream = relay.stream
        watchers = self.watchers(stream)
        spectators = self._spectators.get(stream, set())
        for push in batch.pushes:
            texts = [message.decode() for message in push.messages]
            for viewer in push.viewers:
                if viewer.seat:
                    targets = [
                        c
                        for c in watchers
                        if c.player_id == viewer.player_id and c not in spectators
                    ]
                else:
                    targets = list(spectators)
                for client in targets:
                    for text in texts:
                        client.push_text(text)

    async def renew_spectators(self) -> None:
        """Tell the match service that the matches this instance's sockets watch as spectators
        are still watched (it makes spectators' pushes only while someone does): every third of
        ``ARENA_SPECTATOR_LEASE_SECONDS``."""
        spectator = vpb.Viewer(role="spectator")
        records = [
            CODEC.command_record(
                new_command(
                    stream,
                    vpb.ViewRequest(
                        match_id=stream.removeprefix(MATCH_PREFIX), viewers=[spectator], renew=True
                    ),
                    command_id=f"renew:{uuid.uuid4().hex}",
                )
            )
            for stream in sorted(self._spectators)
        ]
        if records:
            await self.log.append(topics.MATCH_COMMANDS, records)

    async def snapshot(self, match_id: str, viewers: Iterable[tuple[str, str]]) -> vpb.ViewBatch:
        """Ask the match service (the instance that owns the match) for the snapshots of these
        viewers, (player id, role) each: a player's seat view if they hold one."""
        request_id = uuid.uuid4().hex
        future = self._requests[request_id] = asyncio.get_running_loop().create_future()
        payload = vpb.ViewRequest(
            match_id=match_id,
            request_id=request_id,
            viewers=[vpb.Viewer(player_id=p, role=r) for p, r in viewers],
        )
        stream = MATCH_PREFIX + match_id
        try:
            await self.tell(
                topics.MATCH_COMMANDS, new_command(stream, payload, command_id=f"view:{request_id}")
            )
            return await asyncio.wait_for(future, self.command_timeout)
        except TimeoutError:
            raise GatewayError(ErrorCode.TIMEOUT, "no answer from the service in time") from None
        finally:
            self._requests.pop(request_id, None)

    def relayed(self, batch: vpb.ViewBatch) -> Relayed:
        """The relay of the match a snapshot answer describes (made if this instance had none)."""
        relay = self.relays.get(batch.match_id)
        if relay is None:
            relay = self.relays[batch.match_id] = Relayed(batch.match_id, batch.game)
        relay.learn(batch)
        relay.sequence = max(relay.sequence, batch.sequence)
        if relay.room_code:
            self.room_matches.setdefault(relay.room_code, relay.match_id)
        return relay

    async def redraw(self, relay: Relayed) -> None:
        """Send every local viewer of a match its snapshot (views were lost on the way)."""
        stream = relay.stream
        spectators = self._spectators.get(stream, set())
        seated = {c.player_id for c in self.watchers(stream) if c not in spectators}
        asked = [(player, "") for player in sorted(seated)]
        if spectators:
            asked.append(("", "spectator"))
        if not asked:
            return
        try:
            batch = await self.snapshot(relay.match_id, asked)
        except GatewayError:
            log.warning("a match's views could not be redrawn", match=relay.match_id)
            return
        self.relayed(batch)
        self._push_views(relay, batch)

    # -- the log -----------------------------------------------------------------------------

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
        """Stop relaying a match nobody here watches any more (a snapshot brings it back)."""
        stream = MATCH_PREFIX + match_id
        if not self.watchers(stream):
            self.relays.pop(match_id, None)


def command(stream: str, payload: Any, command_id: str) -> Command:
    return new_command(stream, payload, command_id=command_id)
