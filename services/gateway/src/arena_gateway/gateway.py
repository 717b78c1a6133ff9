"""The gateway proper: WebSocket sessions, client messages turned into commands, and the timers
that keep sockets honest (heartbeat) and clocks in sync (time_sync).

Commands carry ``<session id>:<message id>`` as their id, so a message a client repeats (after a
lost ack, or a reconnect) is the same command, answered once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import itertools
import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any

from arena_games.contract import ClientError, SettingsError, pack
from arena_games.registry import STANDARD
from arena_runtime import metrics, telemetry, topics
from arena_runtime.cache import Cache
from arena_runtime.config import Settings
from arena_runtime.envelope import Event, new_command
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as lobby
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import views_pb2 as vpb
from arena_runtime.schemas.match import MODE_NAMES
from arena_runtime.schemas.match import MODES as MATCH_MODES
from arena_runtime.streams import REJECTED_TYPE
from fastapi import WebSocket, WebSocketDisconnect
from opentelemetry import trace
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags

from arena_gateway import metrics as gateway_metrics
from arena_gateway import protocol as p
from arena_gateway.connection import (
    POLICY_VIOLATION,
    SERVICE_RESTART,
    SESSION_ENDED,
    SHUTDOWN_REASON,
    TRY_AGAIN_LATER,
    Connection,
    direct_receive,
    message_id,
    parse,
)
from arena_gateway.hub import (
    REQUEST,
    ROOM_STATUS,
    Hub,
    Outcome,
    Relayed,
    now_ms,
    short_type,
)
from arena_gateway.identity import Principal, PrincipalKind, SessionStore
from arena_gateway.limits import (
    RateLimiter,
    origin_allowed,
    parse_origins,
)
from arena_gateway.protocol import ErrorCode, GatewayError

log = telemetry.get_logger(__name__)
#: This module's standard-library logger, whose level telemetry.configure_logging sets to the
#: structlog loggers' (ARENA_LOG_LEVEL): asked before the per-message debug line, since every
#: call of ``log`` builds a logger, level filtered or not (a few microseconds).
_stdlib_log = logging.getLogger(__name__)
#: The ids of the messages' traces while spans are not exported (the SDK's own generator).
_TRACE_IDS = RandomIdGenerator()

#: ``{"session_id", "reason"}`` of every session signed out, ended or upgraded, on any instance.
SESSION_END_CHANNEL = "gateway.session-ends"
#: How often a lost cache channel is subscribed to again.
CACHE_RETRY_SECONDS = 1.0
#: Session lookups in flight at once when checking every open socket's session.
SESSION_CHECK_BATCH = 100
QUEUE_STREAM = f"queue-{p.DEFAULT_GAME}-casual"
MODES = {"casual": match_pb2.MATCH_MODE_CASUAL, "ranked": match_pb2.MATCH_MODE_RANKED}
#: What matchmaking needs to know of the caller for ranked play (docs/online-play.md).
PLAYER_KINDS = {
    PrincipalKind.GUEST: lobby.PLAYER_KIND_GUEST,
    PrincipalKind.ACCOUNT: lobby.PLAYER_KIND_ACCOUNT,
}
#: What a handler returns that has sent its own ack (reconnect: the ack, then the snapshot).
ANSWERED: dict[str, Any] = {}
#: The match each session last sent a move to, kept a while in the cache: a message repeated from
#: a new socket of that session (which has not sent ``reconnect``) is answered from it.
SESSION_MATCH = "session-match:"
AI_LEVELS = {
    "easy": match_pb2.AI_LEVEL_EASY,
    "medium": match_pb2.AI_LEVEL_MEDIUM,
    "hard": match_pb2.AI_LEVEL_HARD,
    "impossible": match_pb2.AI_LEVEL_IMPOSSIBLE,
}


DUEL_PREFIX = "duel-"
#: Pauses between the asks of a watch whose match is not open yet (3.15 s in all).
OPENING_PAUSES = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


async def _no_accounts(username: str) -> tuple[str, str] | None:
    return None


class Gateway:
    def __init__(self, settings: Settings, hub: Hub, cache: Cache) -> None:
        #: The account named ``username``: its player id and username (the accounts' lookup,
        #: set when the accounts are attached); None if there is none.
        self.find_account: Callable[[str], Awaitable[tuple[str, str] | None]] = _no_accounts
        self.settings = settings
        self.hub = hub
        self.cache = cache
        self.sessions = SessionStore(cache, settings.session_ttl_seconds)
        self.limiter = RateLimiter(cache, settings.ws_rate_limit)
        self.origins = parse_origins(settings.allowed_origins)
        self.connections: set[Connection] = set()
        #: Open sockets per client address (ARENA_WS_MAX_SOCKETS_PER_ADDRESS).
        self.sockets_from: Counter[str] = Counter()
        #: Set when the process starts to stop (drain): no new socket, no new message.
        self.draining = False

    # -- a socket's life -------------------------------------------------------------------

    async def serve(self, websocket: WebSocket) -> None:
        headers = websocket.headers
        if not origin_allowed(
            headers.get("origin"), self.origins, headers.get("host"), websocket.url.scheme
        ):
            await websocket.close(POLICY_VIOLATION, reason="origin not allowed")
            return
        address = websocket.client.host if websocket.client else ""
        if self.draining:  # this instance is going: the client reconnects to another
            await websocket.accept()
            await websocket.close(SERVICE_RESTART, reason=SHUTDOWN_REASON)
            return
        if self.sockets_from[address] >= self.settings.ws_max_sockets_per_address:
            # Accepted to be closed: a browser sees a close code and reason, never an HTTP status.
            await websocket.accept()
            await websocket.close(TRY_AGAIN_LATER, reason="too_many_sockets")
            return
        self.sockets_from[address] += 1
        try:
            # The socket's life in a task of its own: each time it wakes (a frame, an answer)
            # only its own few frames resume, not the twenty of the ASGI stack above this one.
            await asyncio.get_running_loop().create_task(self._serve(websocket))
        finally:
            self.sockets_from[address] -= 1
            if not self.sockets_from[address]:
                del self.sockets_from[address]

    async def _serve(self, websocket: WebSocket) -> None:
        await websocket.accept()
        connection = await self._authenticate(websocket)
        if connection is None:
            return
        receive = direct_receive(websocket)
        try:
            while True:
                frame = await receive()
                if frame["type"] == "websocket.disconnect":
                    break
                connection.last_seen = time.monotonic()
                await self._on_frame(connection, frame.get("text"))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            await self._gone(connection)

    async def _authenticate(self, websocket: WebSocket) -> Connection | None:
        """The first message (or ``?token=``, or ``Authorization: Bearer`` on the handshake, which
        is how the browser's session cookie arrives) must be ``auth`` or ``reconnect``."""
        token = websocket.query_params.get("token") or bearer_token(websocket.headers)
        first: p.ClientMessage | None = None
        if token is None:
            text: str | None = None
            try:
                frame = await asyncio.wait_for(
                    websocket.receive(), self.settings.ws_auth_timeout_seconds
                )
                if frame["type"] == "websocket.disconnect":
                    return None
                text = frame.get("text")
                first = parse(text, self.settings.ws_max_message_bytes)
            except TimeoutError:
                await self._refuse(websocket, None, ErrorCode.UNAUTHENTICATED, "auth timed out")
                return None
            except GatewayError as exc:
                await self._refuse(websocket, message_id(text), exc.code, exc.message)
                return None
            except (WebSocketDisconnect, RuntimeError):
                return None
            if not isinstance(first, p.Auth | p.Reconnect):
                await self._refuse(
                    websocket, first.id, ErrorCode.UNAUTHENTICATED, "authenticate first"
                )
                return None
            token = first.token or ""
        principal = await self.sessions.resolve(token)
        if principal is None or (
            isinstance(first, p.Reconnect) and first.player_id != principal.player_id
        ):
            await self._refuse(
                websocket, first.id if first else None, ErrorCode.AUTH_FAILED, "unknown session"
            )
            return None
        connection = Connection(websocket, principal, token)
        connection.start_writer()
        self.connections.add(connection)
        gateway_metrics.SOCKETS_OPEN.inc()
        self.hub.add(connection)
        # A session that ended between the resolve above and the add was announced to nobody
        # here; its token is refused by now (the tombstone precedes the announcement).
        if await self.sessions.resolve(token) is None:
            connection.hang_up(SESSION_ENDED, "session_ended")
            return connection
        if isinstance(first, p.Reconnect):
            await self._answer(connection, first)
        elif first is not None:
            connection.ack(first.id, {"player_id": principal.player_id, "name": principal.name})
        return connection

    async def _refuse(
        self, websocket: WebSocket, message_id: str | None, code: str, message: str
    ) -> None:
        with contextlib.suppress(Exception):
            await websocket.send_text(
                json.dumps({"type": "error", "id": message_id, "code": code, "message": message})
            )
            await websocket.close(POLICY_VIOLATION)

    async def _gone(self, connection: Connection) -> None:
        """The socket closed: tell the services what a dropped player means for them."""
        if connection in self.connections:
            gateway_metrics.SOCKETS_OPEN.dec()
        self.connections.discard(connection)
        self.hub.remove(connection)
        await connection.close()
        if self.hub.local(connection.player_id) or self.draining:
            # Another socket of this player is still here; or this instance is stopping and
            # the player reconnects to another, which a PlayerDisconnected landing after that
            # reconnect would mark away (and forfeit). The move clock still runs meanwhile.
            return
        player = connection.player_id
        with contextlib.suppress(Exception):
            relay = self.hub.relays.get(connection.match_id) if connection.match_id else None
            if relay is not None and not relay.over and relay.seat_of(player) is not None:
                payload = match_pb2.PlayerDisconnected(player_id=player)
                await self._tell(topics.MATCH_COMMANDS, relay.stream, payload)
            code = connection.room_code
            if code is not None:
                if self.hub.room_status.get(code) == "waiting":
                    await self._tell(
                        topics.MATCHMAKING_COMMANDS,
                        f"room-{code}",
                        lobby.LeaveRoom(player_id=player),
                    )
                else:
                    presence = lobby.RoomPresence(player_id=player, connected=False)
                    await self._tell(topics.MATCHMAKING_COMMANDS, f"room-{code}", presence)
            if connection.queued:
                await self._tell(
                    topics.MATCHMAKING_COMMANDS,
                    connection.queued,
                    lobby.Dequeue(player_id=player),
                )
        if connection.match_id is not None:
            self.hub.forget(connection.match_id)

    async def _tell(self, topic: str, stream: str, payload: Any) -> None:
        await self.hub.tell(topic, new_command(stream, payload, command_id=f"gw:{uuid.uuid4()}"))

    # -- messages --------------------------------------------------------------------------

    async def _on_frame(self, connection: Connection, text: str | None) -> None:
        """One frame after authentication (``text`` None: a binary one): answered, or refused.

        Every frame is counted against the player's rate, a refused one too: a flood of garbage
        costs its sender as much as one of messages. Only the pong an outstanding ping waits for
        is free, so the heartbeat is never starved by the limit.
        """
        if self.draining:
            return  # after server_shutdown: the client sends it again once reconnected
        message: p.ClientMessage | None = None
        refused: GatewayError | None = None
        try:
            message = parse(text, self.settings.ws_max_message_bytes)
        except GatewayError as exc:
            refused = exc
        if not (isinstance(message, p.Pong) and connection.ping_outstanding):
            try:
                await self.limiter.check(connection.player_id)
            except GatewayError as exc:
                refused = exc
        if refused is not None:
            answer_id = message.id if message is not None else message_id(text)
            connection.error(answer_id, refused.code, refused.message)
            kind = message.type if message is not None else "unreadable"
            metrics.series(gateway_metrics.MESSAGES, kind, refused.code).inc()
            return
        assert message is not None
        await self._answer(connection, message)

    async def _answer(self, connection: Connection, message: p.ClientMessage) -> None:
        """Answer one message, in a trace of its own: the commands it sends carry its span, so
        the services that decide them, the events they write and the pushes of those events
        are in that trace (docs/operations.md, "Traces")."""
        outcome = "ack"
        span, current = message_span(message, connection.player_id)
        with current:
            try:
                result = await self.handle(connection, message)
            except GatewayError as exc:
                outcome = exc.code
                connection.error(message.id, exc.code, exc.message)
            except Exception:
                outcome = ErrorCode.UNAVAILABLE
                log.exception("message failed", type=message.type, player=connection.player_id)
                connection.error(message.id, ErrorCode.UNAVAILABLE, "the gateway could not do that")
            else:
                if result is not ANSWERED:
                    connection.ack(message.id, result)
            finally:
                span.set_attribute("arena.outcome", outcome)
                metrics.series(gateway_metrics.MESSAGES, message.type, outcome).inc()
                if _stdlib_log.isEnabledFor(logging.DEBUG):  # as the level set at start-up
                    log.debug("message answered", type=message.type, id=message.id, outcome=outcome)

    async def handle(self, c: Connection, m: p.ClientMessage) -> dict[str, Any] | p.JsonText:
        """Carry out one client message; the result goes into its ack."""
        if m.type in p.TO_MATCH:  # a move: no lobby message's checks before it
            return await self._match_message(c, m)
        who = c.principal
        me = lobby.LobbyPlayer(
            player_id=who.player_id, display_name=who.name, kind=PLAYER_KINDS[who.kind]
        )
        mm = topics.MATCHMAKING_COMMANDS
        if isinstance(m, p.Pong):
            c.ping_outstanding = False
            return {}
        if isinstance(m, p.Auth):
            again = await self.sessions.resolve(m.token)
            if again is None or again.player_id != who.player_id:
                raise GatewayError(ErrorCode.AUTH_FAILED, "not this socket's session")
            return {"player_id": who.player_id, "name": who.name}
        if isinstance(m, p.CreateRoom):
            cid = self._cid(c, m)
            payload = lobby.CreateRoom(request_id=cid, host=me, settings=game_room_settings(m))
            command = new_command(f"player-{who.player_id}", payload, command_id=cid)
            opened = _accepted(await self.hub.send(mm, command, answer_key=REQUEST + cid))
            answer = opened.events[0]
            if short_type(answer.type) != "room_opened":  # RoomRequestFailed{reason}
                raise GatewayError(
                    answer.payload.reason or "room_failed", "no room could be opened"
                )
            code = answer.payload.code
            self._enter_room(c, code)
            return {"code": code}
        if isinstance(m, p.JoinRoom):
            code = m.code.upper()
            await self._send(c, m, mm, f"room-{code}", lobby.JoinRoom(player=me))
            self._enter_room(c, code)
            return {"code": code}
        if isinstance(m, p.FillSeat):
            code = self._room(c)
            fill = lobby.FillSeat(player_id=who.player_id, seat=m.seat, policy=m.policy)
            await self._send(c, m, mm, f"room-{code}", fill)
            return {"code": code}
        if isinstance(m, p.StartRoom):
            code = self._room(c)
            outcome = await self._send(
                c, m, mm, f"room-{code}", lobby.StartRoom(player_id=who.player_id)
            )
            return {"code": code, "match_id": outcome.events[-1].payload.match_id}
        if isinstance(m, p.WatchRoom):
            return await self._watch_room(c, m.code.upper())
        if isinstance(m, p.WatchMatch):
            return await self._watch_match(c, m)
        if isinstance(m, p.LeaveRoom):
            code = self._room(c)
            await self._send(c, m, mm, f"room-{code}", lobby.LeaveRoom(player_id=who.player_id))
            self.hub.unwatch(c, f"room-{code}")
            c.room_code = None
            return {"code": code}
        if isinstance(m, p.Queue):
            queue = f"queue-{m.game}-{m.mode}"
            enqueue = lobby.Enqueue(player=me, game=m.game, mode=MODES[m.mode])
            await self._send(c, m, mm, queue, enqueue)
            c.queued = queue
            return {"queue": queue}
        if isinstance(m, p.LeaveQueue):
            queue = c.queued or QUEUE_STREAM
            await self._send(c, m, mm, queue, lobby.Dequeue(player_id=who.player_id))
            c.queued = ""
            return {"queue": queue}
        if isinstance(m, p.PlayAi):
            cid = self._cid(c, m)
            play_ai = lobby.PlayAi(
                request_id=cid,
                player=me,
                level=AI_LEVELS[m.level],
                settings=game_room_settings(m),
                policy=m.level,
            )
            outcome = await self._send(c, m, mm, f"player-{who.player_id}", play_ai)
            return {"match_id": outcome.events[0].payload.match_id}
        if isinstance(m, p.PlaySolo):
            settings = lobby.RoomSettings(game=m.game, mode=MATCH_MODES[m.mode])
            solo = lobby.PlaySolo(request_id=self._cid(c, m), player=me, settings=settings)
            requested = (await self._send(c, m, mm, f"player-{who.player_id}", solo)).events[0]
            return {
                "match_id": requested.payload.match_id,
                "mode": MODE_NAMES[requested.payload.settings.mode],
                "counted": requested.payload.counted,
            }
        if isinstance(m, p.GhostSharing):
            ghosts = STANDARD.find(m.game).ghosts
            assert ghosts is not None  # the message's validator checked it
            await self._send(c, m, mm, ghosts.stream, ghosts.sharing(who.player_id, m.sharing))
            return {"sharing": m.sharing}
        if isinstance(m, p.ChallengeDuel | p.AcceptDuel | p.DeclineDuel):
            return await self._duel(c, m, me)
        if isinstance(m, p.RematchRequest | p.RematchAccept | p.RematchDecline):
            code = self._room(c)
            kind = {
                "rematch_request": lobby.RematchRequest,
                "rematch_accept": lobby.RematchAccept,
                "rematch_decline": lobby.RematchDecline,
            }[m.type]
            await self._send(c, m, mm, f"room-{code}", kind(player_id=who.player_id))
            return {"code": code}
        if isinstance(m, p.Reconnect):
            return await self._reconnect(c, m)
        return await self._match_message(c, m)

    async def _duel(
        self,
        c: Connection,
        m: p.ChallengeDuel | p.AcceptDuel | p.DeclineDuel,
        me: lobby.LobbyPlayer,
    ) -> dict[str, Any]:
        """A duel's messages: its stream is followed by the socket (the lobby pushes of the duel
        accepted, started with both games' ids, settled) once the message is accepted. A
        challenge's duel id is drawn from its command id: the message repeated is the same duel."""
        mm = topics.MATCHMAKING_COMMANDS
        if isinstance(m, p.ChallengeDuel):
            found = await self.find_account(m.opponent)
            if found is None:
                raise GatewayError(ErrorCode.UNKNOWN_PLAYER, f"no account {m.opponent!r}")
            opponent = lobby.LobbyPlayer(
                player_id=found[0], display_name=found[1], kind=lobby.PLAYER_KIND_ACCOUNT
            )
            duel_id = "d_" + hashlib.sha256(self._cid(c, m).encode()).hexdigest()[:24]
            challenge = lobby.ChallengeDuel(
                challenger=me,
                opponent=opponent,
                stake=m.stake,
                settings=lobby.RoomSettings(game=m.game, mode=match_pb2.MATCH_MODE_DUEL),
            )
            await self._send(c, m, mm, DUEL_PREFIX + duel_id, challenge)
        elif isinstance(m, p.AcceptDuel):
            duel_id = m.duel_id
            accept = lobby.AcceptDuel(player_id=c.player_id)
            await self._send(c, m, mm, DUEL_PREFIX + duel_id, accept)
        else:
            duel_id = m.duel_id
            decline = lobby.DeclineDuel(player_id=c.player_id)
            await self._send(c, m, mm, DUEL_PREFIX + duel_id, decline)
            self.hub.unwatch(c, DUEL_PREFIX + duel_id)
            return {"duel_id": duel_id}
        self.hub.watch(c, DUEL_PREFIX + duel_id)
        return {"duel_id": duel_id}

    async def _match_message(
        self, c: Connection, m: p.ClientMessage
    ) -> dict[str, Any] | p.JsonText:
        """A seat's message to its match: the command its game's client makes of it (or, for a
        message the game only relays, a ClientRelay), answered with the ack the match service
        made for the sender. The shape is checked first: it needs no match."""
        player = c.player_id
        game = p.GAME_OF_MESSAGE.get(m.type)
        payload: Any = None
        if isinstance(m, p.Resign):
            payload = match_pb2.Resign(player_id=player)
        elif game is None:
            raise GatewayError(ErrorCode.BAD_MESSAGE, f"{m.type} is not handled here")
        else:
            client = STANDARD.find(game).client
            if not isinstance(m, client.relayed):
                try:
                    payload = client.command(m, player)
                except ClientError as exc:
                    raise GatewayError(exc.code, exc.message) from None
        try:
            relay = await self._match_of_message(c, m)
        except GatewayError as exc:
            # A repeat of a message another instance answered (this one relays no match of the
            # session's): its answer as that instance gave it, kept in the shared cache.
            kept = (
                await self.hub.kept(self._cid(c, m)) if exc.code == ErrorCode.NOT_IN_MATCH else None
            )
            if kept is None:
                raise
            return _accepted(kept).ack_result or {}
        if game is not None and relay.game != game:
            raise GatewayError(ErrorCode.BAD_MESSAGE, f"{m.type} is not a move of this game")
        if payload is None:
            message = m.model_dump_json().encode()
            payload = vpb.ClientRelay(match_id=relay.match_id, player_id=player, message=message)
        outcome = await self._send(c, m, topics.MATCH_COMMANDS, relay.stream, payload)
        # The game's ack; a command accepted without one (none made) still names its match.
        return outcome.ack_result or {"match_id": relay.match_id, "events": []}

    async def _watch_match(self, c: Connection, m: p.WatchMatch) -> dict[str, Any]:
        """Watch a match: as its seat for a player who holds one, else as a spectator. The ack
        first, then the snapshot, as for a reconnect."""
        viewer = [(c.player_id, "spectator")]
        answer = await self.hub.snapshot(m.match_id, viewer)
        # A room announces its match before matchmaking's StartMatch reaches the match service
        # (it follows the room's event): a watcher told of it at once asks again briefly.
        for pause in OPENING_PAUSES:
            if answer.sequence:
                break
            await asyncio.sleep(pause)
            answer = await self.hub.snapshot(m.match_id, viewer)
        if not answer.sequence:
            raise GatewayError("match_not_found", f"no match {m.match_id} to watch")
        relay = self.hub.relayed(answer)
        seated = relay.seat_of(c.player_id) is not None
        if seated:
            c.match_id = relay.match_id
            self.hub.watch(c, relay.stream)
        else:
            self.hub.spectate(c, relay.stream)
        c.ack(m.id, {"match_id": relay.match_id, "game": relay.game, "seat": seated})
        self._push_snapshot(c, answer)
        return ANSWERED

    def _push_snapshot(self, c: Connection, answer: Any) -> None:
        for push in answer.pushes:
            for message in push.messages:
                c.push_text(message.decode())

    async def _send(
        self, c: Connection, m: p.ClientMessage, topic: str, stream: str, payload: Any
    ) -> Outcome:
        command = new_command(stream, payload, command_id=self._cid(c, m))
        return _accepted(await self.hub.send(topic, command))

    def _cid(self, c: Connection, m: p.ClientMessage) -> str:
        return f"{c.principal.session_id}:{m.id}"

    def _enter_room(self, c: Connection, code: str) -> None:
        c.room_code = code
        self.hub.watch(c, f"room-{code}")
        self.hub.room_status.setdefault(code, "waiting")

    def _room(self, c: Connection) -> str:
        if c.room_code is None:
            raise GatewayError(ErrorCode.NOT_IN_ROOM, "join or create a room first")
        return c.room_code

    async def _match_of_message(self, c: Connection, m: p.ClientMessage) -> Relayed:
        """The match a move goes to: the socket's; or, for a message its session sent before
        (the same id from a new socket), the match that answered it, so it gets that answer."""
        session_key = SESSION_MATCH + c.principal.session_id
        relay = self.hub.relays.get(c.match_id) if c.match_id else None
        if relay is None or relay.seat_of(c.player_id) is None:
            earlier = await self.cache.get(session_key)
            relay_of = self.hub.relays.get(earlier.decode()) if earlier else None
            if relay_of is None or self._cid(c, m) not in relay_of.answers:
                raise GatewayError(ErrorCode.NOT_IN_MATCH, "you are not playing a match")
            return relay_of
        if c.session_match != relay.match_id:
            await self.cache.set(
                session_key, relay.match_id.encode(), self.settings.session_ttl_seconds
            )
            c.session_match = relay.match_id
        return relay

    async def _reconnect(self, c: Connection, m: p.Reconnect) -> dict[str, Any]:
        # Without a token the socket's own session (authenticated on the handshake) vouches.
        if m.player_id != c.player_id or (
            m.token is not None and await self.sessions.resolve(m.token) is None
        ):
            raise GatewayError(ErrorCode.AUTH_FAILED, "player id and token do not match")
        match_id = m.match_id or (await self._match_of_room(m.code) if m.code else None)
        answer = await self.hub.snapshot(match_id, [(c.player_id, "")]) if match_id else None
        relay = self.hub.relayed(answer) if answer is not None and answer.sequence else None
        seat = relay.seat_of(c.player_id) if relay is not None else None
        if relay is None or seat is None:
            raise GatewayError(ErrorCode.NOT_IN_MATCH, "no match of yours to reconnect to")
        c.match_id = relay.match_id
        self.hub.watch(c, relay.stream)
        if relay.room_code:
            self._enter_room(c, relay.room_code)
            presence = lobby.RoomPresence(player_id=c.player_id, connected=True)
            await self._tell(topics.MATCHMAKING_COMMANDS, f"room-{relay.room_code}", presence)
        if seat in relay.away and not relay.over:
            payload = match_pb2.PlayerReconnected(player_id=c.player_id)
            await self._send(c, m, topics.MATCH_COMMANDS, relay.stream, payload)
        # Asked again now the socket follows the match (and its player is back): nothing
        # between this snapshot and the pushes that follow it is missed.
        answer = await self.hub.snapshot(relay.match_id, [(c.player_id, "")])
        self.hub.relayed(answer)
        # The ack first, then the snapshot (docs/protocol.md): what follows the ack is current.
        c.ack(m.id, {"match_id": relay.match_id, "code": relay.room_code})
        self._push_snapshot(c, answer)
        return ANSWERED

    async def _watch_room(self, c: Connection, code: str) -> dict[str, Any]:
        """Follow room ``code`` without a seat: its lobby pushes from now on, and in the ack the
        room's status, its current (or last) match id, for watching the match, and its seats
        taken, which a socket arriving after the room opened has seen no push of."""
        events = await self.hub.read_stream(topics.MATCHMAKING_EVENTS, f"room-{code}")
        kinds = [short_type(e.type) for e in events if e.type != REJECTED_TYPE]
        if not kinds or kinds[-1] == "room_closed":
            raise GatewayError("room_not_found", f"no open room {code}")
        self.hub.watch(c, f"room-{code}")
        status = next((ROOM_STATUS[k] for k in reversed(kinds) if k in ROOM_STATUS), "waiting")
        return {
            "code": code,
            "status": status,
            "match_id": await self._match_of_room(code),
            "seats": room_seats(events),
        }

    async def _match_of_room(self, code: str) -> str | None:
        code = code.upper()
        if code in self.hub.room_matches:
            return self.hub.room_matches[code]
        started = [
            e
            for e in await self.hub.read_stream(topics.MATCHMAKING_EVENTS, f"room-{code}")
            if short_type(e.type) == "room_match_started"
        ]
        return started[-1].payload.match_id if started else None

    # -- cache channels ----------------------------------------------------------------------

    async def _follow(
        self, channel: str, handle: Callable[[dict[str, Any]], object], stopping: asyncio.Event
    ) -> None:
        """Hand every JSON message of a cache channel to ``handle`` until ``stopping`` is set.

        Instances publish to each other through these channels; a garbled message is dropped,
        never allowed to end the loop, and a lost cache is subscribed to again until it is back.
        """
        lost = False
        while not stopping.is_set():
            try:
                subscription = await self.cache.subscribe(channel)
            except Exception as exc:
                lost = _cache_lost(lost, channel, exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stopping.wait(), CACHE_RETRY_SECONDS)
                continue
            try:
                if lost:
                    log.info("following the cache channel again", channel=channel)
                    lost = False
                while not stopping.is_set():
                    received = await subscription.get(wait=0.5)
                    if received is None:
                        continue
                    with contextlib.suppress(ValueError, KeyError, TypeError):
                        handle(json.loads(received.data))
            except Exception as exc:
                # Redis went away: what it carried meanwhile (previews, session ends on other
                # instances) is lost; sessions are still checked every ARENA_WS_SESSION_CHECK.
                lost = _cache_lost(lost, channel, exc)
            finally:
                with contextlib.suppress(Exception):
                    await subscription.close()

    # -- sessions ending ---------------------------------------------------------------------

    async def end_session(self, session_id: str, reason: str) -> None:
        """Close the WebSockets of a session that has ended, on every gateway instance.

        The token is already refused everywhere; this only reaches sockets authenticated before.
        A cache that cannot publish is logged, not raised: the session did end.
        """
        envelope = json.dumps({"session_id": session_id, "reason": reason}).encode()
        try:
            await self.cache.publish(SESSION_END_CHANNEL, envelope)
        except Exception:
            log.exception("could not announce a session's end", session=session_id)

    def close_session_sockets(self, session_id: str, reason: str) -> int:
        ended = [c for c in self.connections if c.principal.session_id == session_id]
        for connection in ended:
            connection.hang_up(SESSION_ENDED, reason)
        return len(ended)

    async def session_ends(self, stopping: asyncio.Event) -> None:
        """Close this instance's sockets of the sessions any instance announces ended."""
        await self._follow(
            SESSION_END_CHANNEL,
            lambda envelope: self.close_session_sockets(envelope["session_id"], envelope["reason"]),
            stopping,
        )

    async def check_sessions(self) -> int:
        """Close the sockets whose session has expired; returns how many.

        Looking a guest's token up renews it, so a guest stays signed in while connected (a
        guest whose token lapsed mid-game could not reconnect to it). An account's session ends
        at a fixed time: its socket is closed then, within one check.
        """
        open_now = [c for c in self.connections if c.token and not c.closed]
        expired = 0
        for start in range(0, len(open_now), SESSION_CHECK_BATCH):
            batch = open_now[start : start + SESSION_CHECK_BATCH]
            found = await asyncio.gather(
                *(self.sessions.resolve(c.token) for c in batch), return_exceptions=True
            )
            # A look-up that failed (the cache is down) is no verdict: it is tried next time.
            for connection, principal in zip(batch, found, strict=True):
                if principal is None:
                    connection.hang_up(SESSION_ENDED, "session_expired")
                    expired += 1
        return expired

    # -- shutdown ----------------------------------------------------------------------------

    async def drain(self) -> None:
        """Stop serving before the process stops (docs/protocol.md, "Server shutdown").

        Every socket is told ``server_shutdown``; messages it sends after that are not read.
        The commands already sent are given ``ARENA_WS_DRAIN_SECONDS`` to be answered (the
        fan-out still runs), then every socket is closed with 1012 and its client reconnects
        to another instance, sending again what was not answered (same ids: same commands).
        """
        self.draining = True
        sockets = [c for c in self.connections if not c.closed]
        for connection in sockets:
            connection.push({"type": SHUTDOWN_REASON, "reconnect": True})
        in_flight = self.hub.in_flight()
        if in_flight:
            await asyncio.wait(in_flight, timeout=self.settings.ws_drain_seconds)
        unanswered = sum(not answer.done() for answer in in_flight)
        log.info("draining: closing sockets", sockets=len(sockets), unanswered=unanswered)
        for connection in list(self.connections):
            connection.hang_up(SERVICE_RESTART, SHUTDOWN_REASON)
        await asyncio.gather(*(c.close(SERVICE_RESTART) for c in list(self.connections)))

    # -- timers ----------------------------------------------------------------------------

    def beat(self) -> None:
        """Heartbeat: close sockets that left the last ping unanswered, ping the others."""
        for connection in list(self.connections):
            if connection.ping_outstanding:
                log.info("no pong: closing", player=connection.player_id)
                connection.hang_up(POLICY_VIOLATION)
                continue
            connection.ping_outstanding = True
            connection.push({"type": "ping", "id": f"ping-{now_ms()}"})


def message_span(
    message: p.ClientMessage, player_id: str
) -> tuple[trace.Span, AbstractContextManager[object]]:
    """The span of one client message, at the root of a trace of its own, and the context
    manager making it current (and ending it).

    While this process exports no spans nothing records it: only its ids matter (the commands
    sent carry them on, log lines name them). It is then made here as the SDK makes a span it
    does not sample (random ids, flags 00), without the sampler's and the attributes' work,
    which cost several times the rest of answering a message's trace.
    """
    if telemetry.exporting():
        span = telemetry.tracer().start_span(
            f"ws {message.type}",
            context=telemetry.new_trace(),
            kind=SpanKind.SERVER,
            attributes={
                "arena.message.type": message.type,
                "arena.message.id": message.id,
                "arena.player": player_id,
            },
        )
        return span, trace.use_span(span, end_on_exit=True)
    unsampled = SpanContext(
        _TRACE_IDS.generate_trace_id(),
        _TRACE_IDS.generate_span_id(),
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.DEFAULT),
    )
    span = NonRecordingSpan(unsampled)
    return span, telemetry.within(trace.set_span_in_context(span, telemetry.new_trace()))


def _cache_lost(already: bool, channel: str, exc: Exception) -> bool:
    """Log, once per outage, that a cache channel is lost; True."""
    if not already:
        log.warning(
            "the cache cannot be reached: previews and session ends from other instances are "
            f"not received until it is back (retried every {CACHE_RETRY_SECONDS:g} s). Check "
            "Redis (ARENA_REDIS_URL; docs/operations.md#redis-is-flushed)",
            channel=channel,
            error=f"{type(exc).__name__}: {exc}"[:300],
        )
    return True


class Ticker:
    """A worker calling ``tick`` every ``seconds`` (heartbeat, time sync, session check), and
    awaiting it when it is a coroutine function."""

    def __init__(self, name: str, seconds: float, tick: Any) -> None:
        self.name = name
        self._seconds = seconds
        self._tick = tick
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        pass

    async def run(self) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self._seconds)
            if not self._stopping.is_set():
                done = self._tick()
                if inspect.isawaitable(done):
                    await done

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return True


class SessionEndRelay:
    """Closes this instance's sockets of the sessions any instance announces ended."""

    name = "gateway:session-ends"

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        pass

    async def run(self) -> None:
        await self._gateway.session_ends(self._stopping)

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return True


def room_seats(events: list[Event]) -> list[dict[str, Any]]:
    """A room's seats taken, folded from its stream as matchmaking seats them: the host in seat 1,
    each joiner in the lowest free seat, the host's fills, then the seats of its latest match."""
    seats: dict[int, dict[str, Any]] = {}

    def taken(player: lobby.LobbyPlayer) -> dict[str, Any]:
        if player.policy:
            return {"player_id": "", "name": "", "policy": player.policy}
        return {"player_id": player.player_id, "name": player.display_name, "policy": ""}

    for event in events:
        if event.type == REJECTED_TYPE:
            continue
        payload = event.payload
        match short_type(event.type):
            case "room_opened":
                seats = {1: taken(payload.host)}
            case "room_joined":
                seats[next(n for n in itertools.count(1) if n not in seats)] = taken(payload.player)
            case "room_seat_filled":
                seats[payload.seat] = {"player_id": "", "name": "", "policy": payload.policy}
            case "room_left":
                seats = {n: s for n, s in seats.items() if s["player_id"] != payload.player_id}
            case "room_match_started":
                seats = {n: taken(player) for n, player in enumerate(payload.seats, 1)}
    return [{"seat": n, **seat} for n, seat in sorted(seats.items())]


def bearer_token(headers: Any) -> str | None:
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def _accepted(outcome: Outcome) -> Outcome:
    if not outcome.accepted:
        raise GatewayError(outcome.rejection_code, outcome.rejection_message or "refused")
    if not outcome.events and outcome.ack_json is None:
        raise GatewayError(ErrorCode.UNAVAILABLE, "the command changed nothing")
    return outcome


def game_room_settings(m: p.CreateRoom | p.PlayAi) -> lobby.RoomSettings:
    """The lobby's settings of a create_room: its game, the game's seat count, the mode (from
    the form, for a game whose form has one) and the settings message of the game's form. A game
    nobody registered is sent as named: matchmaking refuses it (``unknown_game``)."""
    if m.form is None:
        return lobby.RoomSettings(game=m.game)
    module = STANDARD.find(m.game)
    try:
        settings = module.lobby.from_form(m.form)
    except SettingsError as exc:
        raise GatewayError(exc.code, exc.message) from None
    mode = MODES[getattr(m.form, "mode", "casual")]
    if isinstance(m, p.CreateRoom) and module.seats.seats == 1:
        mode = match_pb2.MATCH_MODE_ROOM  # side by side: each player a game of their own
    elif getattr(m, "mode", None) == "room":
        raise GatewayError("mode_not_available", f"a room of {module.name} is not side by side")
    return lobby.RoomSettings(
        mode=mode, game=module.name, seats=module.seats.seats, settings=pack(settings)
    )


__all__ = ["Gateway", "Principal", "SessionEndRelay", "Ticker"]
