"""Verification of match streams: re-decide every command and compare with the log.

For each ``match-<id>`` stream, the events that the reading rule accepts are grouped into the
batches one command caused (its ``causation_id``). Each batch's command is looked up in
``arena.commands.match`` and decided again with :func:`arena_match.decide.decide` on the state
folded so far, whatever the game, with the inputs the log recorded: the batch's envelope time
as the server time, the ``seed`` and ``ai_seed`` of its payloads (a seed a game records inside
a message, as Matrix Games' settings do, is found there), and, for StartMatch, the service
settings the MatchOpened event records. The decision must equal the logged batch exactly (or
the logged rejection's code). A command answered by two batches was applied twice; a command of
the commands topic with no answer was lost (or is still in flight: ``strict`` makes that a
failure).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from arena_games.contract import Inputs
from arena_games.digits.ghost_log import GHOST_STREAM
from arena_games.digits.ghost_store import verify_draws
from arena_runtime import topics
from arena_runtime.envelope import CODEC, Command, EnvelopeError, Event
from arena_runtime.eventlog import EventLog, Record
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.proto_gen.arena.v1 import views_pb2 as vpb
from arena_runtime.streams import REJECTED_TYPE, Rejection, is_next

from arena_match.clock import ms_of
from arena_match.decide import MatchSettings, decide
from arena_match.state import STREAM_PREFIX, MatchState, apply

READ_BATCH = 1000


ASKED_OF_THE_VIEWS = (vpb.ViewRequest, vpb.ClientRelay)


@dataclass(frozen=True, slots=True)
class Problem:
    stream: str
    command_id: str
    what: str

    def __str__(self) -> str:
        return f"{self.stream} {self.command_id}: {self.what}"


@dataclass
class Report:
    matches: int = 0
    commands: int = 0
    events: int = 0
    #: Events the reading rule ignores (a losing writer's, a redelivery's): harmless.
    ignored: int = 0
    malformed: int = 0
    problems: list[Problem] = field(default_factory=list)
    #: Armies the Digits ghost store drew, chosen again from its stream.
    ghost_armies: int = 0
    #: Commands with no answer in the log (lost, or not handled yet).
    unanswered: list[Problem] = field(default_factory=list)

    def ok(self, strict: bool = False) -> bool:
        return not self.problems and not (strict and self.unanswered)


async def _read_all(log: EventLog, topic: str, stream: str | None) -> list[Record]:
    ends = await log.end_offsets(topic)
    partitions = sorted(ends)
    if stream is not None:
        partitions = [partition_for(stream.encode(), len(ends))]
    key = stream.encode() if stream is not None else None
    records: list[Record] = []
    for partition in partitions:
        offset = 0
        while offset < ends.get(partition, 0):
            batch = await log.read(topic, partition, offset, READ_BATCH)
            if not batch:
                break
            records.extend(r for r in batch if key is None or r.key == key)
            offset = batch[-1].offset + 1
    return records


async def verify_log(log: EventLog, match_id: str | None = None) -> Report:
    """Verify every match of the log, or only ``match_id``."""
    stream = None if match_id is None else f"{STREAM_PREFIX}{match_id}"
    report = Report()
    commands: dict[tuple[str, str], Command] = {}
    order: dict[str, list[str]] = defaultdict(list)
    for record in await _read_all(log, topics.MATCH_COMMANDS, stream):
        try:
            command = CODEC.decode_command(record.value)
        except EnvelopeError:
            report.malformed += 1
            continue
        # A snapshot request or a relayed message asks the views, not the match: it is answered
        # on arena.match.views, never in the events, and decides nothing to verify.
        if isinstance(command.payload, ASKED_OF_THE_VIEWS):
            continue
        if command.stream.startswith(STREAM_PREFIX):
            key = (command.stream, command.command_id)
            if key not in commands:
                commands[key] = command
                order[command.stream].append(command.command_id)
    events: dict[str, list[Event]] = defaultdict(list)
    for record in await _read_all(log, topics.MATCH_EVENTS, stream):
        try:
            event = CODEC.decode_event(record.value)
        except EnvelopeError:
            report.malformed += 1
            continue
        if event.stream.startswith(STREAM_PREFIX):
            events[event.stream].append(event)
    report.commands = len(commands)
    for name in sorted(set(events) | set(order)):
        report.matches += 1
        answered = _verify_stream(name, events.get(name, []), commands, report)
        report.unanswered.extend(
            Problem(name, command_id, "no answer in the log")
            for command_id in order.get(name, [])
            if command_id not in answered
        )
    if match_id is None:
        await _verify_ghost_store(log, report)
    return report


async def _verify_ghost_store(log: EventLog, report: Report) -> None:
    """The Digits ghost store's draws (a selection, a room's turn, a duel's 12), chosen again
    from its stream: each decision's accepted events, grouped by the command that caused them
    (its id seeds the draw), against the store folded from the decisions before."""
    decisions: list[tuple[str, list[Any]]] = []
    sequence, batch_id = 0, ""
    for record in await _read_all(log, topics.MATCHMAKING_EVENTS, GHOST_STREAM):
        try:
            event = CODEC.decode_event(record.value)
        except EnvelopeError:
            report.malformed += 1
            continue
        if not is_next(event, sequence, batch_id):
            continue
        sequence, batch_id = event.sequence, event.batch_id
        if decisions and event.batch_index > 0 and decisions[-1][0] == event.causation_id:
            decisions[-1][1].append(event.payload)
        else:
            decisions.append((event.causation_id, [event.payload]))
    checked, problems = verify_draws(decisions)
    report.ghost_armies = checked
    report.problems.extend(Problem(GHOST_STREAM, "", what) for what in problems)


def _batches(events: Iterable[Event], report: Report) -> list[list[Event]]:
    """The accepted events of one stream (the reading rule), grouped by the command that caused
    them: a write holds one command's events, or several commands' in a row (handle_batch)."""
    batches: list[list[Event]] = []
    sequence, batch_id = 0, ""
    for event in events:
        if not is_next(event, sequence, batch_id):
            report.ignored += 1
            continue
        sequence, batch_id = event.sequence, event.batch_id
        if event.batch_index == 0 or event.causation_id != batches[-1][0].causation_id:
            batches.append([event])
        else:
            batches[-1].append(event)
    return batches


def _verify_stream(
    stream: str,
    events: list[Event],
    commands: dict[tuple[str, str], Command],
    report: Report,
) -> set[str]:
    state = MatchState()
    answered: set[str] = set()
    for batch in _batches(events, report):
        report.events += len(batch)
        command_id = batch[0].causation_id
        if command_id in answered:
            report.problems.append(Problem(stream, command_id, "answered twice"))
        answered.add(command_id)
        command = commands.get((stream, command_id))
        if command is None:
            report.problems.append(
                Problem(stream, command_id, "its events have no command in the commands topic")
            )
        else:
            problem = _check(state, stream, command, batch)
            if problem:
                report.problems.append(Problem(stream, command_id, problem))
        for event in batch:
            if event.type != REJECTED_TYPE:
                state = apply(state, event)
    return answered


def _recorded(batch: list[Event], name: str) -> int:
    """The value of the first field ``name`` set in the batch's payloads: top-level fields
    first, then inside their messages (a game may record a seed in its settings)."""
    payloads = [event.payload for event in batch]
    for _depth in range(3):
        nested: list[Any] = []
        for payload in payloads:
            if not hasattr(payload, "DESCRIPTOR") or isinstance(payload, match_pb2.MatchEnded):
                continue
            fields = payload.DESCRIPTOR.fields_by_name
            field_ = fields.get(name)
            if field_ is not None and (not field_.has_presence or payload.HasField(name)):
                value = getattr(payload, name)
                if isinstance(value, int):
                    return value
            for descriptor in payload.DESCRIPTOR.fields:
                if (
                    descriptor.message_type is not None
                    and not _repeated(descriptor)
                    and payload.HasField(descriptor.name)
                ):
                    nested.append(getattr(payload, descriptor.name))
        payloads = nested
    return 0


def _repeated(descriptor: Any) -> bool:
    return bool(descriptor.is_repeated)


def _check(state: MatchState, stream: str, command: Command, batch: list[Event]) -> str:
    inputs = Inputs(ms_of(batch[0].time), _recorded(batch, "seed"), _recorded(batch, "ai_seed"))
    settings = MatchSettings()
    first = batch[0].payload
    if isinstance(first, match_pb2.MatchOpened):
        settings = MatchSettings(first.service.reconnect_ms, first.service.ai_think_ms)
    decision = decide(state, stream, command.payload, inputs, settings)
    if batch[0].type == REJECTED_TYPE:
        logged = batch[0].payload.code
        if not isinstance(decision, Rejection):
            return f"logged rejection {logged!r}, the engine decides {_describe(decision)}"
        if decision.code != logged:
            return f"logged rejection {logged!r}, the engine rejects with {decision.code!r}"
        return ""
    logged_events = _describe([event.payload for event in batch])
    if isinstance(decision, Rejection):
        return f"logged {logged_events}, the engine rejects with {decision.code!r}"
    if [CODEC.schemas.type_of(m) for m in decision] != [e.type for e in batch] or any(
        m != e.payload for m, e in zip(decision, batch, strict=True)
    ):
        return f"logged {logged_events}, the engine decides {_describe(decision)}"
    return ""


def _describe(messages: Iterable[Any]) -> str:
    return "[" + "; ".join(f"{type(m).__name__}({_short(m)})" for m in messages) + "]"


def _short(message: Any) -> str:
    return " ".join(str(message).split())
