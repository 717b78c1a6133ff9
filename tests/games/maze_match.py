"""A Maze match played through its game module alone, as the match service and the gateway will
play it: each command decided by ``rules.decide`` at its server time, each event folded and
pushed in turn to both seats and an observer (the state after that event), the one timer fired
when due, and the two players the module's bot (the Explorer, fed only its seat's pushes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena_engine.maze import MazeState
from arena_games.contract import (
    RANKED,
    Inputs,
    MatchInfo,
    Result,
    Seat,
    ServiceSettings,
    Table,
    Viewer,
)
from arena_games.maze import MODULE
from arena_games.maze.bot import MazeBot
from arena_games.maze.rules import MazeMatch
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message
from pydantic import TypeAdapter

START_MS = 1_800_000_000_000
P1, P2, OBSERVER = Viewer(1), Viewer(2), Viewer(role="observer")
VIEWERS = (P1, P2, OBSERVER)
INFO = MatchInfo("m-maze", "maze", (Seat(1, "p_1", "Ann"), Seat(2, "p_2", "Bob")), RANKED, "ABCD")
RULES, VIEWS = MODULE.rules, MODULE.views
CLIENT_MESSAGES: TypeAdapter[Any] = TypeAdapter(
    MODULE.client.messages[0] | MODULE.client.messages[1]
)


@dataclass(frozen=True)
class Decided:
    """One decision: on which state, by whom (0: a timer), what, when, and its events."""

    before: MazeMatch
    seat: int
    command: Message
    inputs: Inputs
    events: tuple[Message, ...]


@dataclass
class Match:
    settings: pb.MazeSettings = field(default_factory=pb.MazeSettings)
    seed: int = 1
    now: int = START_MS
    info: MatchInfo = INFO

    def __post_init__(self) -> None:
        played = RULES.settings(self.settings)
        assert isinstance(played, pb.MazeSettings), played
        self.settings = played
        self.state: MazeMatch = RULES.initial(self.info, played, ServiceSettings())
        self.initial = self.state
        #: (server time, event) of every event, in order.
        self.log: list[tuple[int, Message]] = []
        self.decisions: list[Decided] = []
        self.bots = {viewer: MazeBot(viewer) for viewer in VIEWERS}
        #: Every push, with the event it was for and the state it was made for.
        self.pushes: dict[Viewer, list[tuple[Message, MazeMatch, dict[str, Any]]]] = {
            viewer: [] for viewer in VIEWERS
        }
        self.away: dict[int, int] = {}
        opening = RULES.start(self.state, Inputs(self.now, self.seed))
        assert not isinstance(opening, Rejection), opening
        self.commit(opening, self.now)

    @property
    def game(self) -> MazeState:
        assert self.state.game is not None
        return self.state.game

    @property
    def result(self) -> Result | None:
        return RULES.result(self.state)

    def table(self) -> Table:
        i = self.info
        return Table(
            i.match_id, i.game, i.seats, i.mode, i.room_code, dict(self.away), len(self.log) + 1
        )

    def commit(self, events: list[Message] | tuple[Message, ...], time_ms: int) -> None:
        """Fold each event and push it, with the state after it, to every viewer."""
        for event in events:
            self.state = RULES.apply(self.state, event, time_ms)
            self.log.append((time_ms, event))
            for viewer, bot in self.bots.items():
                for message in VIEWS.push(self.table(), self.state, event, viewer, time_ms):
                    self.pushes[viewer].append((event, self.state, message))
                    bot.observe(message)

    def decide(self, seat: int, command: Message, at: int) -> list[Message] | Rejection:
        inputs = Inputs(at, seed=at)
        before = self.state
        decided = RULES.decide(before, seat, command, inputs)
        if not isinstance(decided, Rejection):
            self.decisions.append(Decided(before, seat, command, inputs, tuple(decided)))
            self.commit(decided, at)
        return decided

    def send(self, seat: int, reply: dict[str, Any] | None, at: int) -> list[Message] | Rejection:
        """A client message of the seat's player, as the gateway turns it into a command."""
        assert reply is not None
        message = CLIENT_MESSAGES.validate_python({"id": f"m{at}", **reply})
        return self.decide(seat, MODULE.client.command(message, f"p_{seat}"), at)

    def fire_timers(self, until: int) -> None:
        """Every timer due by ``until``, each at its due time."""
        while self.result is None:
            due = [t for t in RULES.timers(self.state) if t.due_ms <= until]
            if not due:
                return
            timer = min(due)
            decided = self.decide(0, timer.payload, timer.due_ms)
            assert not isinstance(decided, Rejection), (timer, decided)

    def forfeit(self, seat: int, at: int) -> list[Message] | Rejection:
        decided = RULES.forfeit(self.state, seat, Inputs(at))
        if not isinstance(decided, Rejection):
            self.commit(decided, at)
        return decided

    def disconnect(self, seat: int, at: int, window_ms: int = 30_000) -> None:
        """The match service's presence event: the seat's reconnect window opens."""
        deadline = at + window_ms
        self.away[seat] = deadline
        event = match_pb2.PlayerDisconnected(
            player_id=f"p_{seat}", seat=seat, reconnect_deadline_ms=deadline
        )
        self.commit([event], at)

    def reconnect(self, seat: int, at: int) -> None:
        self.away.pop(seat, None)
        self.commit([match_pb2.PlayerReconnected(player_id=f"p_{seat}", seat=seat)], at)

    def ready_to_exit(self, seat: int) -> bool:
        """The seat's bot stands on its open exit: its next move takes it out."""
        bot = self.bots[Viewer(seat)]
        view, explorer = bot.view, bot.explorer
        return (
            view is not None
            and explorer is not None
            and explorer.exit is not None
            and view.status.exit == "open"
            and view.status.cell == explorer.exit[0]
        )

    def play(
        self, rounds: int = 4_000, hold_exits: bool = False, until_result: bool = True
    ) -> None:
        """Each round (one cooldown), timers due first, then each bot's reply (player 1 one
        millisecond before player 2). ``hold_exits``: a bot ready to go out waits there."""
        cooldown = self.settings.cooldown_ms
        for _ in range(rounds):
            if self.result is not None:
                return
            self.fire_timers(self.now)
            for seat in (1, 2):
                if hold_exits and self.ready_to_exit(seat):
                    continue
                reply = self.bots[Viewer(seat)].reply(self.now)
                if reply is not None and self.result is None:
                    decided = self.send(seat, reply, self.now + seat)
                    assert not isinstance(decided, Rejection), (reply, decided)
            if hold_exits and self.ready_to_exit(1) and self.ready_to_exit(2):
                return
            self.now += cooldown
        assert not until_result, "the match did not end"


def refold(log: list[tuple[int, Message]], initial: MazeMatch) -> MazeMatch:
    state = initial
    for time_ms, event in log:
        state = RULES.apply(state, event, time_ms)
    return state
