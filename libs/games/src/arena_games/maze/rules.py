"""The Maze's rules on the seam: the engine's decide and apply behind the contract's Rules.

Online, a seat's command is the engine's ``Submit``: accepted into the FIFO with the next command
sequence at the server's receive time (``Inputs.now_ms``), then processed at once, in the same
decision. The one timer is the engine's ``next_deadline`` (the end of the countdown, the first
millisecond after an open finish window, the time limit) as an ``Advance`` command. Forfeits are
the engine's: ``forfeit`` when a player resigns, ``disconnect`` when the seat is away (the
presence events the match service folds in) and its reconnect window has closed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from arena_engine.maze import Advance as EngineAdvance
from arena_engine.maze import Command as EngineCommand
from arena_engine.maze import (
    Context,
    Drop,
    Forfeit,
    MazeState,
    Move,
    Role,
    Start,
    Submit,
    next_deadline,
)
from arena_engine.maze import Rejection as EngineRejection
from arena_engine.maze import apply as engine_apply
from arena_engine.maze import decide as engine_decide
from arena_engine.maze.state import COUNTDOWN
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_games.contract import (
    Decision,
    GameError,
    Inputs,
    MatchInfo,
    Presence,
    ReconnectPolicy,
    Result,
    Seat,
    ServiceSettings,
    Thought,
    Timer,
    unpack,
)
from arena_games.lobby_form import INVALID_SETTINGS
from arena_games.maze import lobby, wire
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as pb

#: The refusal of a timer whose deadline the state no longer has (or not yet).
STALE_TIMER = "stale_timer"
FINISHED = "finished"
NOT_STARTED = "not_started"
NOT_A_SEAT = "not_a_seat"
BAD_COMMAND = "bad_command"
UNKNOWN_COMMAND = "unknown_command"

#: Seeds are recorded as uint64.
SEED_MASK = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class MazeMatch:
    """A Maze match as its rules fold it."""

    seats: tuple[Seat, ...] = ()
    #: As played (every value set).
    settings: pb.MazeSettings = field(default_factory=pb.MazeSettings)
    #: The engine's state; None before MazeStarted.
    game: MazeState | None = None
    #: (seat, reconnect deadline ms) of each seat whose player is away, by seat.
    away: tuple[tuple[int, int], ...] = ()

    def away_until(self, seat: int) -> int | None:
        for number, deadline in self.away:
            if number == seat:
                return deadline
        return None


def fold(game: MazeState | None, message: Message) -> MazeState | None:
    """The engine's state after one of the game's messages."""
    for event in wire.engine_events(message):
        game = engine_apply(game, event)
    return game


def _decided(game: MazeState | None, command: EngineCommand, context: Context) -> Decision:
    outcome = engine_decide(game, command, context)
    if isinstance(outcome, EngineRejection):
        return Rejection(outcome.code.value, outcome.message)
    if not outcome:
        return Rejection(STALE_TIMER, "the deadline moved on, or is not yet due")
    return wire.final_last(wire.events_to_proto(outcome))


def timer_kind(game: MazeState) -> str:
    if game.position.phase == COUNTDOWN:
        return "countdown"
    if game.position.first_exit is not None:
        return "window"
    return "time-limit"


def result_of_game(game: MazeState | None) -> Result | None:
    """The game-neutral result of a decided match (what its MazeDecided records)."""
    if game is None or game.result is None:
        return None
    decided = game.result
    return wire.result_of(
        pb.MazeDecided(
            winner=decided.winner or 0, reason=wire.REASON[decided.reason], at_ms=decided.at_ms
        )
    )


class MazeRules:
    """Two players in real time through one FIFO; an absent seat forfeits after the window."""

    reconnect = ReconnectPolicy(Presence.FORFEIT)
    thinks: tuple[type[Message], ...] = ()

    def settings(self, given: Message | None) -> Message | Rejection:
        if given is not None and not isinstance(given, pb.MazeSettings):
            return Rejection(INVALID_SETTINGS, f"not {wire.type_name(pb.MazeSettings)}")
        try:
            return lobby.check(given)
        except GameError as exc:
            return exc.rejection()

    def initial(self, match: MatchInfo, settings: Message, service: ServiceSettings) -> MazeMatch:
        assert isinstance(settings, pb.MazeSettings)
        return MazeMatch(match.seats, settings)

    def start(self, state: MazeMatch, inputs: Inputs) -> Decision:
        """MazeStarted: the maze generated from ``inputs.seed`` and recorded whole."""
        start = Start(wire.engine_settings(state.settings))
        return _decided(state.game, start, Context(inputs.now_ms, inputs.seed & SEED_MASK))

    def apply(self, state: MazeMatch, event: Message, time_ms: int) -> MazeMatch:
        if isinstance(event, match_pb2.MatchEnded):
            if not event.detail.Is(pb.MazeDecided.DESCRIPTOR):
                return state
            event = unpack(event.detail, pb.MazeDecided)
        if isinstance(event, wire.GAME_EVENTS):
            return replace(state, game=fold(state.game, event))
        if isinstance(event, match_pb2.PlayerDisconnected):
            others = tuple(a for a in state.away if a[0] != event.seat)
            away = tuple(sorted((*others, (event.seat, event.reconnect_deadline_ms))))
            return replace(state, away=away)
        if isinstance(event, match_pb2.PlayerReconnected):
            return replace(state, away=tuple(a for a in state.away if a[0] != event.seat))
        return state

    def decide(self, state: MazeMatch, seat: int, command: Message, inputs: Inputs) -> Decision:
        game = state.game
        if game is None:
            return Rejection(NOT_STARTED, "the match has not started")
        if seat == 0:
            if not isinstance(command, pb.Advance):
                return Rejection(UNKNOWN_COMMAND, f"{type(command).__name__} is not a timer")
            due = next_deadline(game)
            if due is None or command.deadline_ms != due or inputs.now_ms < due:
                return Rejection(STALE_TIMER, "the deadline moved on, or is not yet due")
            return _decided(game, EngineAdvance(), Context(inputs.now_ms))
        if game.result is not None:
            return Rejection(FINISHED, "the match is decided")
        if seat not in (1, 2):
            return Rejection(NOT_A_SEAT, f"no seat {seat}")
        player: Role = 1 if seat == 1 else 2
        if isinstance(command, pb.Move):
            direction = wire.DIRECTION_OF.get(command.dir)
            if direction is None:
                return Rejection(BAD_COMMAND, "a move goes N, E, S or W")
            return _decided(game, Submit(player, Move(direction)), Context(inputs.now_ms))
        if isinstance(command, pb.Drop):
            return _decided(game, Submit(player, Drop()), Context(inputs.now_ms))
        return Rejection(UNKNOWN_COMMAND, f"{type(command).__name__} is not a Maze command")

    def timers(self, state: MazeMatch) -> list[Timer]:
        game = state.game
        due = None if game is None else next_deadline(game)
        if game is None or due is None:
            return []
        return [Timer(due, f"timer:{timer_kind(game)}:{due}", pb.Advance(deadline_ms=due))]

    def forfeit(self, state: MazeMatch, seat: int, inputs: Inputs) -> Decision:
        """Resigned, or away past the reconnect window (``disconnect``)."""
        if state.game is None:
            return Rejection(NOT_STARTED, "the match has not started")
        if state.game.result is not None:
            return Rejection(FINISHED, "the match is decided")
        deadline = state.away_until(seat)
        gone = deadline is not None and inputs.now_ms >= deadline
        reason = "disconnect" if gone else "forfeit"
        return _decided(state.game, Forfeit(seat, reason), Context(inputs.now_ms))

    def result(self, state: MazeMatch) -> Result | None:
        return result_of_game(state.game)

    def think(self, state: MazeMatch, command: Message, seed: int) -> Thought | None:
        return None  # no AI seat; the timers need no thinking
