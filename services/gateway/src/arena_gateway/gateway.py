"""The gateway proper: WebSocket sessions, client messages turned into commands, and the timers
that keep sockets honest (heartbeat) and clocks in sync (time_sync).

Commands carry ``<session id>:<message id>`` as their id, so a message a client repeats (after a
lost ack, or a reconnect) is the same command, answered once.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from arena_engine.maths_warriors.errors import MathsWarriorsError
from arena_engine.maths_warriors.expression import evaluate_integer
from arena_runtime import telemetry, topics
from arena_runtime.cache import Cache
from arena_runtime.config import Settings
from arena_runtime.envelope import new_command
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as lobby
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as mpb
from arena_runtime.schemas import lobby as _lobby_schemas  # noqa: F401  (registers)
from fastapi import WebSocket, WebSocketDisconnect

from arena_gateway import protocol as p
from arena_gateway.connection import (
    POLICY_VIOLATION,
    SESSION_ENDED,
    Connection,
    message_id,
    parse,
)
from arena_gateway.hub import REQUEST, Hub, Outcome, match_push, now_ms, short_type
from arena_gateway.identity import Principal, PrincipalKind, SessionStore
from arena_gateway.limits import (
    DieToken,
    RateLimiter,
    check_die,
    check_tokens,
    origin_allowed,
    parse_origins,
)
from arena_gateway.matches import MatchView
from arena_gateway.protocol import ErrorCode, GatewayError

log = telemetry.get_logger(__name__)

PREVIEW_CHANNEL = "gateway.previews"
#: ``{"session_id", "reason"}`` of every session signed out, ended or upgraded, on any instance.
SESSION_END_CHANNEL = "gateway.session-ends"
#: Session lookups in flight at once when checking every open socket's session.
SESSION_CHECK_BATCH = 100
QUEUE_STREAM = "queue-maths-warriors-casual"
MODES = {"casual": mpb.MATCH_MODE_CASUAL, "ranked": mpb.MATCH_MODE_RANKED}
#: What matchmaking needs to know of the caller for ranked play (docs/online-play.md).
PLAYER_KINDS = {
    PrincipalKind.GUEST: lobby.PLAYER_KIND_GUEST,
    PrincipalKind.ACCOUNT: lobby.PLAYER_KIND_ACCOUNT,
}
AI_LEVELS = {
    "easy": mpb.AI_LEVEL_EASY,
    "medium": mpb.AI_LEVEL_MEDIUM,
    "hard": mpb.AI_LEVEL_HARD,
    "impossible": mpb.AI_LEVEL_IMPOSSIBLE,
}


class Gateway:
    def __init__(self, settings: Settings, hub: Hub, cache: Cache) -> None:
        self.settings = settings
        self.hub = hub
        self.cache = cache
        self.sessions = SessionStore(cache, settings.session_ttl_seconds)
        self.limiter = RateLimiter(cache, settings.ws_rate_limit)
        self.origins = parse_origins(settings.allowed_origins)
        self.connections: set[Connection] = set()

    # -- a socket's life -------------------------------------------------------------------

    async def serve(self, websocket: WebSocket) -> None:
        if not origin_allowed(websocket.headers.get("origin"), self.origins):
            await websocket.close(POLICY_VIOLATION, reason="origin not allowed")
            return
        await websocket.accept()
        connection = await self._authenticate(websocket)
        if connection is None:
            return
        try:
            while True:
                frame = await websocket.receive()
                if frame["type"] == "websocket.disconnect":
                    break
                connection.last_seen = time.monotonic()
                text = frame.get("text")
                if text is None:  # a binary frame: the protocol is JSON text
                    connection.error(None, ErrorCode.BAD_MESSAGE, "send JSON in text frames")
                    continue
                await self._on_text(connection, text)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            await self._gone(connection)

    async def _authenticate(self, websocket: WebSocket) -> Connection | None:
        """The first message (or ``?token=``) must be ``auth`` or ``reconnect``."""
        token = websocket.query_params.get("token")
        first: p.ClientMessage | None = None
        if token is None:
            try:
                text = await asyncio.wait_for(
                    websocket.receive_text(), self.settings.ws_auth_timeout_seconds
                )
                first = parse(text, self.settings.ws_max_message_bytes)
            except TimeoutError:
                await self._refuse(websocket, None, ErrorCode.UNAUTHENTICATED, "auth timed out")
                return None
            except GatewayError as exc:
                await self._refuse(websocket, None, exc.code, exc.message)
                return None
            except (WebSocketDisconnect, RuntimeError):
                return None
            if not isinstance(first, p.Auth | p.Reconnect):
                await self._refuse(
                    websocket, first.id, ErrorCode.UNAUTHENTICATED, "authenticate first"
                )
                return None
            token = first.token
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
        self.connections.discard(connection)
        self.hub.remove(connection)
        await connection.close()
        if self.hub.local(connection.player_id):
            return  # another socket of this player is still here
        player = connection.player_id
        with contextlib.suppress(Exception):
            view = self.hub.views.get(connection.match_id) if connection.match_id else None
            if view is not None and view.game.status.value == "playing":
                payload = mpb.PlayerDisconnected(player_id=player)
                await self._tell(topics.MATCH_COMMANDS, view.stream, payload)
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

    async def _on_text(self, connection: Connection, text: str) -> None:
        try:
            message = parse(text, self.settings.ws_max_message_bytes)
            if not isinstance(message, p.Pong):  # the heartbeat is never starved by the limit
                await self.limiter.check(connection.player_id)
        except GatewayError as exc:
            connection.error(message_id(text), exc.code, exc.message)
            return
        await self._answer(connection, message)

    async def _answer(self, connection: Connection, message: p.ClientMessage) -> None:
        try:
            result = await self.handle(connection, message)
        except GatewayError as exc:
            connection.error(message.id, exc.code, exc.message)
        except Exception:
            log.exception("message failed", type=message.type, player=connection.player_id)
            connection.error(message.id, ErrorCode.UNAVAILABLE, "the gateway could not do that")
        else:
            connection.ack(message.id, result)

    async def handle(self, c: Connection, m: p.ClientMessage) -> dict[str, Any]:
        """Carry out one client message; the result goes into its ack."""
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
            payload = lobby.CreateRoom(request_id=cid, host=me, settings=room_settings(m.settings))
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
                settings=room_settings(m.settings),
            )
            outcome = await self._send(c, m, mm, f"player-{who.player_id}", play_ai)
            return {"match_id": outcome.events[0].payload.match_id}
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

    async def _match_message(self, c: Connection, m: p.ClientMessage) -> dict[str, Any]:
        player = c.player_id
        if isinstance(m, p.Preview):
            tokens = check_tokens(m.tokens)
            return await self._preview(c, await self._match(c), m, tokens)
        payload: Any
        if isinstance(m, p.StrengthMove):
            payload = mpb.Strength(
                player_id=player,
                attacker=check_die(m.attacker, "attacker"),
                target=check_die(m.target, "target"),
            )
        elif isinstance(m, p.MindMove):
            payload = mpb.Mind(
                player_id=player,
                target=check_die(m.target, "target"),
                tokens=[_mind_token(t) for t in check_tokens(m.tokens)],
            )
        elif isinstance(m, p.SkipMove):
            payload = mpb.Skip(player_id=player)
        elif isinstance(m, p.Resign):
            payload = mpb.Resign(player_id=player)
        else:
            raise GatewayError(ErrorCode.BAD_MESSAGE, f"{m.type} is not handled here")
        view = await self._match(c)  # after the shape checks, which need no match
        outcome = await self._send(c, m, topics.MATCH_COMMANDS, view.stream, payload)
        pushed = [match_push(view, e) for e in outcome.events]
        return {"match_id": view.match_id, "events": [e for e in pushed if e is not None]}

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

    async def _match(self, c: Connection) -> MatchView:
        view = await self.hub.match_view(c.match_id) if c.match_id else None
        if view is None or view.seat_of(c.player_id) is None:
            raise GatewayError(ErrorCode.NOT_IN_MATCH, "you are not playing a match")
        return view

    async def _reconnect(self, c: Connection, m: p.Reconnect) -> dict[str, Any]:
        if m.player_id != c.player_id or await self.sessions.resolve(m.token) is None:
            raise GatewayError(ErrorCode.AUTH_FAILED, "player id and token do not match")
        match_id = m.match_id or (await self._match_of_room(m.code) if m.code else None)
        view = await self.hub.match_view(match_id) if match_id else None
        if view is None or view.seat_of(c.player_id) is None:
            raise GatewayError(ErrorCode.NOT_IN_MATCH, "no match of yours to reconnect to")
        c.match_id = view.match_id
        self.hub.watch(c, view.stream)
        if view.room_code:
            self._enter_room(c, view.room_code)
            presence = lobby.RoomPresence(player_id=c.player_id, connected=True)
            await self._tell(topics.MATCHMAKING_COMMANDS, f"room-{view.room_code}", presence)
        if view.seat_of(c.player_id) in view.away:
            payload = mpb.PlayerReconnected(player_id=c.player_id)
            await self._send(c, m, topics.MATCH_COMMANDS, view.stream, payload)
        c.push({"type": "snapshot", **view.snapshot(now_ms())})
        return {"match_id": view.match_id, "code": view.room_code}

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

    # -- live preview ----------------------------------------------------------------------

    async def _preview(
        self, c: Connection, view: MatchView, m: p.Preview, tokens: list[DieToken | str]
    ) -> dict[str, Any]:
        if not view.preview:
            raise GatewayError(ErrorCode.PREVIEW_OFF, "this match has no live preview")
        seat = view.seat_of(c.player_id)
        assert seat is not None
        evaluation = _evaluate(tokens)
        opponent = view.seats[2 - seat] if len(view.seats) == 2 else None
        message = {
            "type": "preview",
            "match_id": view.match_id,
            "seat": seat,
            "target": m.target,
            "tokens": [
                t if isinstance(t, str) else {"die": t.die, "value": t.value} for t in tokens
            ],
            **evaluation,
        }
        delivered = 0
        if opponent is not None and opponent.kind == "human":
            envelope = {"to": opponent.player_id, "message": message}
            delivered = await self.cache.publish(PREVIEW_CHANNEL, json.dumps(envelope).encode())
        return {**evaluation, "delivered": delivered > 0}

    async def previews(self, stopping: asyncio.Event) -> None:
        """Deliver previews published by any gateway instance to this instance's sockets."""

        def deliver(envelope: dict[str, Any]) -> None:
            for client in self.hub.local(envelope["to"]):
                client.push(envelope["message"])

        await self._follow(PREVIEW_CHANNEL, deliver, stopping)

    async def _follow(
        self, channel: str, handle: Callable[[dict[str, Any]], object], stopping: asyncio.Event
    ) -> None:
        """Hand every JSON message of a cache channel to ``handle`` until ``stopping`` is set.

        Instances publish to each other through these channels; a garbled message is dropped,
        never allowed to end the loop.
        """
        subscription = await self.cache.subscribe(channel)
        try:
            while not stopping.is_set():
                received = await subscription.get(wait=0.5)
                if received is None:
                    continue
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    handle(json.loads(received.data))
        finally:
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

    def time_sync(self) -> None:
        now = now_ms()
        for connection in list(self.connections):
            view = self.hub.views.get(connection.match_id) if connection.match_id else None
            if view is not None and view.game.status.value == "playing":
                connection.push(
                    {"type": "time_sync", "match_id": view.match_id, **view.clocks(now)}
                )


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


class PreviewRelay:
    name = "gateway:previews"

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        pass

    async def run(self) -> None:
        await self._gateway.previews(self._stopping)

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return True


class SessionEndRelay(PreviewRelay):
    name = "gateway:session-ends"

    async def run(self) -> None:
        await self._gateway.session_ends(self._stopping)


def _accepted(outcome: Outcome) -> Outcome:
    if not outcome.accepted:
        raise GatewayError(outcome.rejection_code, outcome.rejection_message or "refused")
    if not outcome.events:
        raise GatewayError(ErrorCode.UNAVAILABLE, "the command changed nothing")
    return outcome


def _mind_token(token: DieToken | str) -> mpb.MindToken:
    if isinstance(token, DieToken):
        return mpb.MindToken(die=mpb.MindDie(die=token.die, value=token.value))
    return mpb.MindToken(symbol=token)


def _evaluate(tokens: list[DieToken | str]) -> dict[str, Any]:
    """The engine's reading of a partial expression: its value, or why it has none yet."""
    values: list[int | str] = [t.value if isinstance(t, DieToken) else t for t in tokens]
    try:
        return {"value": evaluate_integer(values), "error": None}
    except MathsWarriorsError as exc:
        return {"value": None, "error": exc.code.value}


def room_settings(settings: p.RoomSettings) -> lobby.RoomSettings:
    rules = mpb.MatchRuleset(**{k: v for k, v in settings.rules.items() if k in _RULE_NAMES})
    unknown = set(settings.rules) - _RULE_NAMES
    if unknown:
        raise GatewayError(ErrorCode.BAD_MESSAGE, f"unknown rule options {sorted(unknown)}")
    return lobby.RoomSettings(
        game_seconds=settings.game_seconds,
        move_seconds=settings.move_seconds,
        ruleset=rules,
        preview=settings.preview,
        mode=MODES[settings.mode],
    )


_RULE_NAMES = frozenset(
    {"first_player_penalty", "timeout_winner", "first_player_compare", "all_equal_start"}
)

__all__ = ["Gateway", "PreviewRelay", "Principal", "SessionEndRelay", "Ticker"]
