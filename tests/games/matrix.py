"""Driving one Matrix Games match through its module, as the match service will: decide,
apply, hand presence events, fire timers, push every viewer's views. No log, no sockets."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from arena_engine.matrix_games.constants import SEATS
from arena_games.contract import (
    Inputs,
    MatchInfo,
    Seat,
    SeatKind,
    ServiceSettings,
    Table,
    Viewer,
)
from arena_games.matrix_games import MODULE
from arena_games.matrix_games.rules import MatrixGamesState
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

START_MS = 1_800_000_000_000
SPECTATOR = Viewer(role="spectator")
RULES = MODULE.rules
VIEWS = MODULE.views


def seats(humans: dict[int, str], policies: dict[int, str] | None = None) -> tuple[Seat, ...]:
    """Seats 1-8: ``humans`` (seat -> display name), the rest scripted (``policies``, else
    counter)."""
    policies = policies or {}
    out = []
    for number in range(1, SEATS + 1):
        if number in humans:
            out.append(Seat(number, f"p_{number}", humans[number]))
        else:
            policy = policies.get(number, "counter")
            out.append(Seat(number, f"bot-{number}", policy, SeatKind.SCRIPTED, policy))
    return tuple(out)


@dataclass
class Match:
    """One match: its state, every event with the time it was written, every viewer's views."""

    info: MatchInfo
    settings: Message
    state: MatrixGamesState
    now: int = START_MS
    events: list[tuple[Message, int]] = field(default_factory=list)
    views: dict[Viewer, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    states: list[MatrixGamesState] = field(default_factory=list)

    @classmethod
    def open(
        cls,
        match_seats: tuple[Seat, ...],
        settings: pb.MatrixGamesSettings | None = None,
        seed: int = 99,
    ) -> Match:
        played = RULES.settings(settings)
        assert not isinstance(played, Rejection), played
        info = MatchInfo("m-1", "matrix-games", match_seats)
        match = cls(info, played, RULES.initial(info, played, ServiceSettings()))
        opening = RULES.start(match.state, Inputs(START_MS, seed))
        assert not isinstance(opening, Rejection), opening
        match.record(opening)
        return match

    @property
    def viewers(self) -> list[Viewer]:
        return [Viewer(seat.number) for seat in self.info.seats] + [SPECTATOR]

    def table(self) -> Table:
        return Table(self.info.match_id, self.info.game, self.info.seats, sequence=len(self.events))

    def record(self, events: list[Message]) -> None:
        for event in events:
            self.state = RULES.apply(self.state, event, self.now)
            self.events.append((event, self.now))
            self.states.append(self.state)
            for viewer in self.viewers:
                self.views[viewer] += VIEWS.push(self.table(), self.state, event, viewer, self.now)

    def send(self, seat: int, command: Message) -> list[Message] | Rejection:
        decided = RULES.decide(self.state, seat, command, Inputs(self.now))
        if not isinstance(decided, Rejection):
            self.record(decided)
        return decided

    def join(self, *seat_numbers: int) -> None:
        for seat in seat_numbers:
            assert not isinstance(self.send(seat, pb.JoinEpisode()), Rejection)

    def order(self, seat: int, intent: str, token: str = "", target: str = "", **kw: Any) -> Any:
        beat = kw.pop("beat", self.state.beat)
        command = pb.GiveOrder(beat=beat, intent=intent, token=token, target=target, **kw)
        return self.send(seat, command)

    def fire(self) -> list[Message]:
        """The next timer, at its due time."""
        (timer,) = RULES.timers(self.state)
        self.now = max(self.now, timer.due_ms)
        decided = self.send(0, timer.payload)
        assert not isinstance(decided, Rejection), decided
        return decided

    def presence(self, event: Message) -> None:
        self.record([event])

    def away(self, seat: int) -> None:
        self.presence(match_pb2.PlayerDisconnected(seat=seat, reconnect_deadline_ms=self.now))

    def back(self, seat: int) -> None:
        self.presence(match_pb2.PlayerReconnected(seat=seat))

    def of(self, kind: type[Message]) -> list[Any]:
        return [event for event, _ in self.events if isinstance(event, kind)]

    def shown(self, viewer: Viewer, kind: str) -> list[dict[str, Any]]:
        return [view for view in self.views[viewer] if view["type"] == kind]
