"""The stream runner of ``arena.match.events``, with what the match service adds to it.

It decides each command with a server time and fresh seeds (:class:`Decider`) and can, per
partition, catch up, list its streams, and evict finished matches from memory.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime

from arena_runtime import topics
from arena_runtime.envelope import Command
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.streams import Answer, Decision, Rejection, StreamRunner, StreamView

from arena_match.clock import at_ms, now_ms
from arena_match.decide import Inputs, MatchSettings, decide
from arena_match.state import EVICTED, MatchState, apply, initial

#: What a compacted answer keeps: whether the command was accepted (the events are in the log).
_ACCEPTED = Answer("", "")
_REJECTED = Answer("", "", rejection=Rejection("answered", "see the log"))


def fresh_seed() -> int:
    return secrets.randbits(63)


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

    def decide(self, state: MatchState, command: Command) -> Decision:
        now = self._clock()
        self._decided_at = at_ms(now)
        inputs = Inputs(now, self._seeds(), self._seeds())
        return decide(state, command.stream, command.payload, inputs, self.settings)

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

    # The runner keeps its streams and per-partition locks to itself; the match service needs
    # them per partition (re-arming timers after a reassignment) and to drop finished matches.

    def view(self, stream: str) -> StreamView[MatchState] | None:
        return self._streams.get(stream)

    async def catch_up_partition(self, partition: int) -> list[StreamView[MatchState]]:
        """Read one partition to its end; returns the streams it holds."""
        async with self._lock(partition):
            await self._catch_up(partition)
        count = await self.log.partitions(self.topic)
        return [
            view
            for stream, view in self._streams.items()
            if partition_for(stream.encode(), count) == partition
        ]

    def compact(self, stream: str) -> None:
        """Keep only the command ids of the stream's answers, not the events they caused.

        The runner needs an answered command's id to answer a repeat once; the events are in
        the log, where the gateway reads them. Dropping them keeps a live game to a few KB.
        """
        view = self._streams.get(stream)
        if view is None:
            return
        for command_id, answer in view.answers.items():
            if answer.events:
                view.answers[command_id] = _REJECTED if answer.rejection else _ACCEPTED

    def evict(self, stream: str) -> None:
        """Forget a finished match's history; later commands to it are refused as game_over."""
        view = self._streams.get(stream)
        if view is not None and view.state.over:
            view.state = EVICTED
            view.answers = {}

    def __len__(self) -> int:
        return len(self._streams)
