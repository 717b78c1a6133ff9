"""Maths Warriors' rules on the seam: the engine's decide and apply behind the contract's Rules.

:class:`MathsWarriorsRules` is the game's part of the contract. The module-level functions are
its pieces, which the match service also calls until it moves onto the seam (issue 14, phase 2):
starting a game, folding a game event, deciding a move, a clock or the AI's turn, a forfeit, the
deadlines the game waits for, and choosing the AI's move. Every one is pure: the time and the
seeds come in :class:`~arena_games.contract.Inputs` and are recorded in the events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from arena_engine.maths_warriors import (
    Context,
    Forfeit,
    GameClockExpiry,
    GameState,
    MathsWarriorsError,
    Mind,
    Move,
    MoveClockTimeout,
    Skip,
    Start,
    Status,
    Strength,
)
from arena_engine.maths_warriors import Rejection as EngineRejection
from arena_engine.maths_warriors import apply as engine_apply
from arena_engine.maths_warriors import decide as engine_decide
from arena_engine.maths_warriors.ai import choose_move
from arena_engine.maths_warriors.commands import Command as EngineCommand
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_games.contract import (
    Decision,
    Inputs,
    MatchInfo,
    Presence,
    ReconnectPolicy,
    Result,
    Seat,
    SeatKind,
    ServiceSettings,
    Thought,
    Timer,
)
from arena_games.maths_warriors import wire
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb

__all__ = ["GameState", "Move", "Status"]

#: The state of a game before GameStarted (frozen, so one value serves every match).
NEW_GAME = GameState()
#: The refusal of a timer whose deadline the state no longer has (or not yet).
STALE_TIMER = "stale_timer"


# -- the pieces ---------------------------------------------------------------------------------


def played_settings(given: pb.MathsWarriorsSettings) -> pb.MathsWarriorsSettings | Rejection:
    """The settings a match is played with: the ruleset with every option filled in, the clocks
    with their online defaults and clamped; an unknown ruleset value is refused."""
    try:
        ruleset = wire.ruleset_from_proto(given.ruleset)
        clocks = wire.clocks_of(given)
    except MathsWarriorsError as exc:
        return Rejection(exc.code.value, exc.message)
    return pb.MathsWarriorsSettings(
        game_seconds=clocks.game_seconds or 0,
        move_seconds=clocks.move_seconds,
        ruleset=wire.ruleset_to_proto(ruleset),
        preview=given.preview,
    )


def start_game(settings: pb.MathsWarriorsSettings, inputs: Inputs) -> list[Message]:
    """GameStarted: the dice rolled and the first player chosen with ``inputs.seed``."""
    ruleset = wire.ruleset_from_proto(settings.ruleset)
    started = engine_decide(
        NEW_GAME, Start(ruleset, wire.clocks_of(settings)), Context(inputs.now_ms, inputs.seed)
    )
    assert not isinstance(started, EngineRejection)  # a new game always starts
    return [wire.event_to_proto(event) for event in started]


def fold(game: GameState, event: Message) -> GameState:
    """The game after one of its events."""
    return engine_apply(game, wire.event_from_proto(event))


def decide_engine(
    game: GameState,
    command: EngineCommand,
    inputs: Inputs,
    player_ids: Sequence[str],
    ai_seed: int | None = None,
) -> Decision:
    """The engine's decision as messages; ``ai_seed`` marks a move the AI chose with it."""
    outcome = engine_decide(game, command, Context(inputs.now_ms, inputs.seed))
    if isinstance(outcome, EngineRejection):
        return Rejection(outcome.code.value, outcome.message)
    if not outcome:
        # The engine ignores a stale or early timer; the match records why it did nothing.
        return Rejection(STALE_TIMER, "the deadline moved on, or is not yet due")
    events: list[Message] = []
    for index, event in enumerate(outcome):
        winner = getattr(event, "winner", None)
        events.append(
            wire.event_to_proto(
                event,
                ai_seed=ai_seed if index == 0 else None,
                winner_player_id=player_ids[winner - 1] if winner else "",
            )
        )
    return events


def decide_move(
    game: GameState, seat: int, command: Message, inputs: Inputs, player_ids: Sequence[str]
) -> Decision:
    """A seat's Strength, Mind or Skip."""
    move: EngineCommand
    if isinstance(command, pb.Strength):
        move = wire.strength_move(command, seat)
    elif isinstance(command, pb.Mind):
        move = wire.mind_move(command, seat)
    elif isinstance(command, pb.Skip):
        move = wire.skip_move(seat)
    else:
        return Rejection("unknown_command", f"{type(command).__name__} is not a move")
    return decide_engine(game, move, inputs, player_ids)


def forfeit(game: GameState, seat: int, inputs: Inputs, player_ids: Sequence[str]) -> Decision:
    return decide_engine(game, Forfeit(seat), inputs, player_ids)


def decide_clock(
    game: GameState,
    timer: pb.MoveClockTimeout | pb.GameClockExpiry,
    inputs: Inputs,
    ids: Sequence[str],
) -> Decision:
    if isinstance(timer, pb.MoveClockTimeout):
        return decide_engine(game, MoveClockTimeout(timer.deadline_ms), inputs, ids)
    return decide_engine(game, GameClockExpiry(timer.deadline_ms), inputs, ids)


def ai_level_on_move(game: GameState, levels: Sequence[str | None]) -> str | None:
    """The level of the AI seat on move, or None when a person is on move (or nobody)."""
    if game.status is not Status.PLAYING:
        return None
    return levels[game.to_move - 1]


def decide_ai(
    game: GameState,
    timer: pb.AiMove,
    inputs: Inputs,
    levels: Sequence[str | None],
    player_ids: Sequence[str],
    chosen: Move | None = None,
) -> Decision:
    """The AI's turn: its move is ``chosen`` (worked out ahead on this very state with
    ``inputs.ai_seed``) or chosen now; either way the same move, recorded with its seed."""
    seat = timer.seat
    if (
        seat not in (1, 2)
        or game.to_move != seat
        or ai_level_on_move(game, levels) is None
        or game.move_count != timer.move_number
        or inputs.now_ms < timer.due_ms
    ):
        return Rejection(STALE_TIMER, "not the AI's turn any more, or not yet due")
    level = levels[seat - 1]
    assert level is not None
    move = chosen or choose_move(game, level, inputs.ai_seed)
    return decide_engine(game, move, inputs, player_ids, ai_seed=inputs.ai_seed)


def choose_ai_move(game: GameState, level: str, seed: int) -> Move:
    """The AI's move (a function of the game and the seed; the stronger levels take a while)."""
    return choose_move(game, level, seed)


def game_timers(
    game: GameState, levels: Sequence[str | None], turn_started_ms: int, ai_think_ms: int
) -> list[Timer]:
    """The game's deadlines: the game clock, the move clock, and the AI's move when an AI seat
    is on move (presence windows are the match's, not the game's)."""
    if game.status is not Status.PLAYING:
        return []
    timers = []
    game_end, move_end = game.game_deadline_ms, game.move_deadline_ms
    if game_end is not None:
        timers.append(
            Timer(game_end, f"timer:game:{game_end}", pb.GameClockExpiry(deadline_ms=game_end))
        )
    if move_end is not None:
        timers.append(
            Timer(move_end, f"timer:move:{move_end}", pb.MoveClockTimeout(deadline_ms=move_end))
        )
    if ai_level_on_move(game, levels) is not None:
        # The move number is in the kind: two AI turns may fall due in the same millisecond.
        due = turn_started_ms + ai_think_ms
        timers.append(
            Timer(
                due,
                f"timer:ai-{game.move_count}:{due}",
                pb.AiMove(seat=game.to_move, move_number=game.move_count, due_ms=due),
            )
        )
    return timers


def result_of_game(game: GameState) -> Result | None:
    """The game-neutral result of a finished game (what its GameEnded records)."""
    if not game.over or game.winner is None or game.win_reason is None:
        return None
    return wire.result_of(
        pb.GameEnded(
            winner=game.winner,
            reason=wire.PROTOCOL_REASON[game.win_reason.value],
            remaining1=game.remaining(1),
            remaining2=game.remaining(2),
        )
    )


# -- the contract's Rules -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MathsWarriorsState:
    """A Maths Warriors match as its rules fold it."""

    seats: tuple[Seat, ...] = ()
    settings: pb.MathsWarriorsSettings = field(default_factory=pb.MathsWarriorsSettings)
    ai_think_ms: int = 700
    game: GameState = NEW_GAME
    #: Server time (ms) of the last game event: the AI's think time counts from it.
    turn_started_ms: int = 0

    @property
    def player_ids(self) -> tuple[str, ...]:
        return tuple(seat.player_id for seat in self.seats)

    @property
    def ai_levels(self) -> tuple[str | None, ...]:
        return tuple(seat.policy if seat.kind is SeatKind.AI else None for seat in self.seats)


class MathsWarriorsRules:
    """Two seats taking turns, two clocks; an absent seat forfeits after the window."""

    reconnect = ReconnectPolicy(Presence.FORFEIT)
    thinks: tuple[type[Message], ...] = (pb.AiMove,)

    def settings(self, given: Message | None) -> Message | Rejection:
        if given is not None and not isinstance(given, pb.MathsWarriorsSettings):
            return Rejection("invalid_settings", f"not {wire.type_name(pb.MathsWarriorsSettings)}")
        return played_settings(given or pb.MathsWarriorsSettings())

    def initial(
        self, match: MatchInfo, settings: Message, service: ServiceSettings
    ) -> MathsWarriorsState:
        assert isinstance(settings, pb.MathsWarriorsSettings)
        return MathsWarriorsState(match.seats, settings, service.ai_think_ms)

    def start(self, state: MathsWarriorsState, inputs: Inputs) -> Decision:
        return start_game(state.settings, inputs)

    def apply(self, state: MathsWarriorsState, event: Message, time_ms: int) -> MathsWarriorsState:
        if not isinstance(event, wire.GAME_EVENTS):
            return state
        return replace(state, game=fold(state.game, event), turn_started_ms=time_ms)

    def decide(
        self, state: MathsWarriorsState, seat: int, command: Message, inputs: Inputs
    ) -> Decision:
        if seat == 0:
            if isinstance(command, pb.AiMove):
                thought = inputs.thought
                chosen = None
                if thought is not None and thought.state is state:
                    assert isinstance(thought.choice, Strength | Mind | Skip)
                    chosen = thought.choice
                return decide_ai(
                    state.game, command, inputs, state.ai_levels, state.player_ids, chosen
                )
            if isinstance(command, pb.MoveClockTimeout | pb.GameClockExpiry):
                return decide_clock(state.game, command, inputs, state.player_ids)
            return Rejection("unknown_command", f"{type(command).__name__} is not a timer")
        return decide_move(state.game, seat, command, inputs, state.player_ids)

    def timers(self, state: MathsWarriorsState) -> list[Timer]:
        return game_timers(state.game, state.ai_levels, state.turn_started_ms, state.ai_think_ms)

    def forfeit(self, state: MathsWarriorsState, seat: int, inputs: Inputs) -> Decision:
        return forfeit(state.game, seat, inputs, state.player_ids)

    def result(self, state: MathsWarriorsState) -> Result | None:
        return result_of_game(state.game)

    def think(self, state: MathsWarriorsState, command: Message, seed: int) -> Thought | None:
        if not isinstance(command, pb.AiMove) or state.game.move_count != command.move_number:
            return None
        level = ai_level_on_move(state.game, state.ai_levels)
        if level is None:
            return None
        return Thought(state, seed, choose_ai_move(state.game, level, seed))
