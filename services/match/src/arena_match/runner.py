"""The stream runner of ``arena.match.events``, with what the match service adds to it.

It decides each command with a server time and fresh seeds (:class:`Decider`) and can, per
partition, catch up, list its streams, and evict finished matches from memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime

from arena_games.contract import Inputs, Thought
from arena_runtime import topics
from arena_runtime.entropy import random_bits
from arena_runtime.envelope import Command, Event
from arena_runtime.eventlog import EventLog, OutgoingRecord
from arena_runtime.snapshots import SnapshotPolicy
from arena_runtime.streams import Answer, Decision, StreamRunner

from arena_match.clock import at_ms, now_ms
from arena_match.decide import MatchSettings, decide, is_timer
from arena_match.state import EVICTED, MatchState, apply, initial

#: The views of a batch's answers, given the state after each event (by id): the records of
#: arena.match.views the worker writes.
Views = Callable[[list[Answer], dict[str, MatchState]], Awaitable[list[OutgoingRecord]]]

#: How far behind a timer's own clock an instance's clock may be (see _on_time).
CLOCK_SKEW_MS = 2000


def fresh_seed() -> int:
    return random_bits(63)


def _on_time(now: int, payload: object) -> int:
    """The decision time of a command: a timer a little early counts as on time.

    A timer fired by one instance may be decided by another (its partition moved) whose clock
    is a little behind. Rejected as early, its id would stay answered and the deadline would
    never fire again; decided at its deadline instead (and recorded so), it takes effect.
    """
    due = getattr(payload, "deadline_ms", None) or getattr(payload, "due_ms", None)
    if is_timer(payload) and due is not None and now < due <= now + CLOCK_SKEW_MS:
        return int(due)
    return now


class Decider:
    """``decide`` for the runner: the time and seeds of each decision are chosen here.

    The runner stamps a decision's events with ``clock()`` right after calling ``decide``; this
    clock returns the decision's own time, so the envelope's ``time`` is exactly the ``now_ms``
    the game decided with (``arena verify`` reads it back from there).
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
        #: Stream -> what its game thought ahead for the timer about to be decided.
        self._thoughts: dict[str, Thought] = {}

    def decide(self, state: MatchState, command: Command) -> Decision:
        now = _on_time(self._clock(), command.payload)
        self._decided_at = at_ms(now)
        thought = self._thoughts.pop(command.stream, None)
        if thought is not None and thought.state is state.game:
            inputs = Inputs(now, self._seeds(), thought.seed, thought)
        else:
            inputs = Inputs(now, self._seeds(), self._seeds())
        return decide(state, command.stream, command.payload, inputs, self.settings)

    async def think(self, stream: str, state: MatchState, command: Command) -> None:
        """Let the game think about a command about to be decided (one of ``rules.thinks``:
        its AI's move, a house ghost's army), in a thread: the stronger Maths Warriors levels
        think for a fifth of a second, which inside ``decide`` would stall every match of this
        instance. The thought is used only if the state is still the very one it was had on;
        its seed is recorded like any other."""
        module = state.module
        if module is None or state.over or not isinstance(command.payload, module.rules.thinks):
            return
        seed = self._seeds()
        thought = await asyncio.to_thread(module.rules.think, state.game, command.payload, seed)
        if thought is not None:
            self._thoughts[stream] = thought

    def decided_at(self) -> datetime:
        return self._decided_at


class MatchRunner(StreamRunner[MatchState]):
    """A StreamRunner over the match events, folding :class:`MatchState`."""

    def __init__(self, log: EventLog, decider: Decider) -> None:
        super().__init__(
            log,
            topics.MATCH_EVENTS,
            initial=initial,
            apply=self._apply,
            decide=decider.decide,
            clock=decider.decided_at,
            snapshots=SNAPSHOTS,
        )
        self.decider = decider
        #: Event id -> the match's state after it, for the events folded while a batch is
        #: handled (:meth:`journal`): the views of each event are made on the state after it.
        self._after: dict[str, MatchState] = {}
        self._journaling = 0

    def _apply(self, state: MatchState, event: Event) -> MatchState:
        after = apply(state, event)
        if self._journaling:
            self._after[event.event_id] = after
        return after

    async def handle_journaled(
        self, commands: Sequence[Command], views: Views | None = None
    ) -> tuple[list[Answer], dict[str, MatchState], bool]:
        """``handle_batch``, and the state after each event it folded (by event id): what the
        views of those events are made on, without folding them a second time. ``views``:
        made of the answers on the fold and written with their events when they can be (True;
        see ``handle_batch_with``), else left for the caller to make (False)."""

        async def companions(answers: list[Answer]) -> list[tuple[str, list[OutgoingRecord]]]:
            assert views is not None
            after = {
                event.event_id: self._after[event.event_id]
                for answer in answers
                for event in answer.events
                if event.event_id in self._after
            }
            return [(topics.MATCH_VIEWS, await views(answers, after))]

        self._journaling += 1
        try:
            answers, shown = await self.handle_batch_with(
                commands, companions if views is not None else None
            )
        finally:
            self._journaling -= 1
        after = {
            event.event_id: self._after.pop(event.event_id)
            for answer in answers
            for event in answer.events
            if event.event_id in self._after
        }
        if not self._journaling:
            self._after.clear()  # what other folds meanwhile (a catch-up) left there
        return answers, after, shown

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


#: Snapshots keep an evicted match as its sequence alone (it comes back as EVICTED), and every
#: other match as its own events, folded again by ``apply``: no game encodes its state.
SNAPSHOTS: SnapshotPolicy[MatchState] = SnapshotPolicy(
    "match-1", at_rest=lambda state: state.evicted, rest=lambda _: EVICTED
)


def _over(state: MatchState) -> bool:
    return state.over
