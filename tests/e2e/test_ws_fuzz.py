"""Random and hostile WebSocket frames against a real `arena serve`, before and after auth: JSON
of every shape, known and unknown types with fields of the wrong types, text that is not JSON,
binary frames, JSON nested thousands deep, frames over the size limit, and floods.

Every frame gets a typed answer (an ``ack``, or an ``error`` with a code) or a documented close
(1008 before auth, 1009 over the size limit); the process never logs a traceback; and a game in
progress between two players, one of whom sends the frames from a second socket, is unchanged.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from arena_gateway import protocol
from arena_gateway.connection import MESSAGE_TOO_BIG, POLICY_VIOLATION
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.processes.arena_process import ArenaProcess, serving

MAX_BYTES = 4096  # ARENA_WS_MAX_MESSAGE_BYTES, the default
WAIT = 15.0
EXAMPLES = 100
CODE = re.compile(r"^[a-z_]{3,40}$")
#: The valid messages the player whose game must stay as it was may send: none changes a game, a
#: room or a queue (auth and reconnect with a token of their own making are refused). Every other
#: valid one, of today's types or tomorrow's, is left out.
HARMLESS = {None, "pong", "auth", "reconnect", "preview"}
MOVES = {"strength_attacked", "mind_attacked", "turn_skipped", "game_over"}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(["D4", "D20", "+", "(", "casual", "easy"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
types = st.sampled_from([*sorted(protocol.CLIENT_TYPES), "fly", "", "ACK", "ping", "error"])
messages = st.fixed_dictionaries(
    {"type": types | json_values, "id": st.text(max_size=70) | json_values},
    optional={
        name: json_values
        for name in ("token", "tokens", "target", "attacker", "code", "settings", "level")
    }
    | {"player_id": st.text(max_size=70), "match_id": st.text(max_size=70)},
)
deep = st.integers(100, 3000).map(lambda n: "[" * n) | st.integers(50, 1500).map(
    lambda n: '{"a":' * n
)
huge = st.integers(MAX_BYTES + 1, 200_000).map(lambda n: "x" * n)
frames: st.SearchStrategy[str | bytes] = st.one_of(
    messages.map(json.dumps),
    json_values.map(json.dumps),
    st.text(max_size=200),
    st.binary(max_size=200),
    deep,
    huge,
)
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def valid_type(frame: str | bytes) -> str | None:
    """The type of a frame that is a valid client message, else None."""
    if not isinstance(frame, str):
        return None
    try:
        return protocol.CLIENT_MESSAGES.validate_json(frame).type
    except (ValidationError, ValueError, RecursionError):
        return None


def too_big(frame: str | bytes) -> bool:
    return len(frame.encode() if isinstance(frame, str) else frame) > MAX_BYTES


def answer(ws: ClientConnection, frame: str | bytes) -> dict[str, Any] | int:
    """The ack or error a frame got (pushes in between are skipped), or the code of the close
    it got instead."""
    try:
        ws.send(frame)
        while True:
            message = json.loads(ws.recv(timeout=WAIT))
            if message["type"] in ("ack", "error"):
                return dict(message)
    except ConnectionClosed:
        assert ws.close_code is not None
        return ws.close_code


def assert_typed(reply: dict[str, Any] | int) -> dict[str, Any]:
    assert isinstance(reply, dict), f"closed with {reply} instead of an answer"
    if reply["type"] == "error":
        assert CODE.match(reply["code"]) and isinstance(reply["message"], str), reply
    return reply


class Game:
    """Two guests in a room game with no move clock, and a second socket of the first."""

    def __init__(self, url: str, sockets: ExitStack) -> None:
        self.ws_url = url.replace("http://", "ws://") + "/v1/ws"
        self.sockets = sockets
        http = httpx.Client(base_url=url, timeout=WAIT)
        self.a, self.b = (http.post("/v1/guests").json() for _ in range(2))
        self.a_ws = sockets.enter_context(connect(f"{self.ws_url}?token={self.a['token']}"))
        self.b_ws = sockets.enter_context(connect(f"{self.ws_url}?token={self.b['token']}"))
        room = {"game_seconds": 3600, "move_seconds": 0}
        code = assert_typed(answer(self.a_ws, self.message("create_room", settings=room)))
        joined = answer(self.b_ws, self.message("join_room", code=code["result"]["code"]))
        assert assert_typed(joined)["type"] == "ack"
        self.snapshot = self.next_push(self.b_ws, "snapshot")
        self.fuzzing = self.second_socket()

    def second_socket(self) -> ClientConnection:
        url = f"{self.ws_url}?token={self.a['token']}"
        return self.sockets.enter_context(connect(url, max_size=None))

    @staticmethod
    def message(type_: str, **fields: Any) -> str:
        return json.dumps({"type": type_, "id": type_, **fields})

    @staticmethod
    def next_push(ws: ClientConnection, type_: str) -> dict[str, Any]:
        while True:
            message = json.loads(ws.recv(timeout=WAIT))
            if message["type"] == type_:
                return dict(message)

    def state_now(self) -> tuple[dict[str, Any], list[str]]:
        """The match as a fresh snapshot says, and what B was pushed since the game began."""
        reconnect = self.message(
            "reconnect",
            player_id=self.b["player_id"],
            token=self.b["token"],
            match_id=self.snapshot["match_id"],
        )
        self.b_ws.send(reconnect)
        pushed, acked, snapshot = [], False, None
        while not (acked and snapshot):
            message = json.loads(self.b_ws.recv(timeout=WAIT))
            pushed.append(message["type"])
            acked = acked or (message["type"] == "ack" and message["id"] == "reconnect")
            snapshot = message if message["type"] == "snapshot" else snapshot
        return snapshot, pushed


GAME_FIELDS = ("match_id", "sequence", "status", "dice", "to_move", "move_count", "winner")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArenaProcess]:
    with serving(
        tmp_path_factory.mktemp("fuzz"),
        ARENA_WS_RATE_LIMIT="50",
        ARENA_WS_HEARTBEAT_SECONDS="600",
        ARENA_SERVE_PROJECTIONS="inline",
    ) as process:
        yield process


@pytest.fixture(scope="module")
def game(server: ArenaProcess) -> Iterator[Game]:
    with ExitStack() as sockets:
        yield Game(server.url, sockets)


@FUZZ
@given(frame=frames)
def test_a_frame_before_auth_is_refused_typed_and_closed(game: Game, frame: str | bytes) -> None:
    with connect(game.ws_url, max_size=None) as ws:
        reply = answer(ws, frame)
        if too_big(frame):
            assert reply == MESSAGE_TOO_BIG
            return
        refusal = assert_typed(reply)
        assert refusal["type"] == "error"
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=WAIT)
        assert ws.close_code == POLICY_VIOLATION


@FUZZ
@given(frame=frames)
def test_a_frame_from_a_player_in_a_game_gets_a_typed_answer(
    game: Game, frame: str | bytes
) -> None:
    assume(valid_type(frame) in HARMLESS)
    reply = answer(game.fuzzing, frame)
    if too_big(frame):
        assert reply == MESSAGE_TOO_BIG
        game.fuzzing = game.second_socket()
        return
    assert_typed(reply)
    if isinstance(frame, bytes):
        assert isinstance(reply, dict) and reply["code"] in ("bad_message", "rate_limited")


def test_a_flood_is_answered_frame_by_frame_and_limited(game: Game) -> None:
    ws = game.fuzzing
    # The tests before this one may have spent the player's budget (10 a second): let it refill,
    # so that the flood's first frames are read (bad_message) and the rest limited.
    time.sleep(1.5)
    for n in range(300):
        ws.send("{not json" if n % 2 else b"\x00binary")
    codes = []
    while len(codes) < 300:
        message = json.loads(ws.recv(timeout=WAIT))
        if message["type"] == "error":
            codes.append(message["code"])
    assert set(codes) == {"bad_message", "rate_limited"}


def test_the_game_is_unchanged_and_the_process_logged_no_traceback(
    server: ArenaProcess, game: Game
) -> None:
    # Runs after the fuzzing above (pytest keeps the order of a module's tests).
    snapshot, pushed = game.state_now()
    assert {k: snapshot[k] for k in GAME_FIELDS} == {k: game.snapshot[k] for k in GAME_FIELDS}
    assert not MOVES & set(pushed), pushed
    output = server.output()
    assert "Traceback" not in output and "Exception in ASGI application" not in output, output
