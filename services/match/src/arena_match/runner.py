"""The stream runner of ``arena.match.events``, with what the match service adds to it.

It decides each command with a server time and fresh seeds (:class:`Decider`) and can, per
partition, catch up, list its streams, and evict finished matches from memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from arena_engine.maths_warriors import GameState, Move, Status
from arena_engine.maths_warriors.ai import choose_move
from arena_runtime import topics
from arena_runtime.entropy import random_bits
from arena_runtime.envelope import Command
from arena_runtime.eventlog import EventLog
from arena_runtime.streams import Answer, Decision, StreamRunner

from arena_match.clock import at_ms, now_ms
from arena_match.decide import TIMERS, Inputs, MatchSettings, decide
from arena_match.state import EVICTED, MatchState, apply, initial

#: How far behind a timer's own clock an instance's clock may be (see _on_time).
CLOCK_SKEW_MS = 2000


def fresh_seed() -> int:
    return random_bits(63)


@dataclass(frozen=True, slots=True)
class _ChosenMove:
    game: GameState
    ai_seed: int
    move: Move


def _on_time(now: int, payload: object) -> int:
    """The decision time of a command: a timer a little early counts as on time.

    A timer fired by one instance may be decided by another (its partition moved) whose clock
    is a little behind. Rejected as early, its id would stay answered and the deadline would
    never fire again; decided at its deadline instead (and recorded so), it takes effect.
    """
    due = getattr(payload, "deadline_ms", None) or getattr(payload, "due_ms", None)
    if isinstance(payload, TIMERS) and due is not None and now < due <= now + CLOCK_SKEW_MS:
        return int(due)
    return now


class Decider:
    """``decide`` for the runner: the time and seeds of each decision are chosen here.

    The runner stamps a decision's events with ``clock()`` right after calling ``decide``; this
    clock returns the decision's own time, so the envelope's ``time`` is exactly the ``now_ms``
    the engine decided with (``arena verify`` reads it back from there).
    """

    def __init__(
        self,
        settings: MatchSettings,
        clock: Callable[[], int] = now_ms,
        seeds: Callable[[], int] = fresh_seed,
    ) -> None:
        self.settings = settings
        self._clock = clock
        self._seeds = seeds
        self._decided_at = at_ms(clock())
        self._ai_moves: dict[str, _ChosenMove] = {}

    def decide(self, state: MatchState, command: Command) -> Decision:
        now = _on_time(self._clock(), command.payload)
        self._decided_at = at_ms(now)
        chosen = self._ai_moves.pop(command.stream, None)
        if chosen is not None and chosen.game is state.game:
            inputs = Inputs(now, self._seeds(), chosen.ai_seed, chosen.move)
        else:
            inputs = Inputs(now, self._seeds(), self._seeds())
        return decide(state, command.stream, command.payload, inputs, self.settings)

    async def choose_ai_move(self, stream: str, state: MatchState, move_number: int) -> None:
        """Choose the AI's move in a thread before its AiMove is decided.

        The stronger levels think for a fifth of a second; inside ``decide`` that would stall
        every match of this instance. The move is used only if the state is still the very one
        it was chosen for; the seed it was chosen with is recorded like any other.
        """
        game = state.game
        if (
            game.status is not Status.PLAYING
            or game.move_count != move_number
            or not state.seat(game.to_move).is_ai
        ):
            return
        level = state.seat(game.to_move).ai_level
        assert level is not None
        ai_seed = self._seeds()
        move = await asyncio.to_thread(choose_move, game, level, ai_seed)
        self._ai_moves[stream] = _ChosenMove(game, ai_seed, move)

    def decided_at(self) -> datetime:
        return self._decided_at


class MatchRunner(StreamRunner[MatchState]):
    """A StreamRunner over the match events, folding :class:`MatchState`."""

    def __init__(self, log: EventLog, decider: Decider) -> None:
        super().__init__(
            log,
            topics.MATCH_EVENTS,
            initial=initial,
            apply=apply,
            decide=decider.decide,
            clock=decider.decided_at,
        )
        self.decider = decider

    def compact(self, stream: str, command_ids: Iterable[str] | None = None) -> None:
        """Keep only the command ids of the stream's answers, not the events they caused.

        The runner needs an answered command's id (and whether it was refused) to answer a
        repeat once; the events are in the log, where the gateway reads them. Dropping them keeps
        a live game to a few KB. ``command_ids``: only these answers (those just given), so a
        long game is not walked again at every move.
        """
        view = self.view(stream)
        if view is None:
            return
        answers = view.answers
        for command_id in answers if command_ids is None else command_ids:
            answer = answers.get(command_id)
            if answer is not None and answer.events:
                answers[command_id] = Answer(command_id, stream, rejection=answer.rejection)

    def evict(self, stream: str) -> bool:
        """Forget a finished match's history; later commands to it are refused as game_over.

        False, and nothing forgotten, while a command of its partition is being decided (see
        ``forget_answers``): try again later.
        """
        if not self.forget_answers(stream, _over):
            return False
        view = self.view(stream)
        if view is not None and view.state.over:
            view.state = EVICTED
        return True

    def __len__(self) -> int:
        return self.stream_count()


def _over(state: MatchState) -> bool:
    return state.over
