"""Chaos: `kill -9` the match service again and again while many games are played.

The match service is a real `arena match` subprocess over an embedded log in a temporary data
dir; scripted players in this process send commands to that log and wait for the answers there,
resending the same command id when an answer is slow (as a client's retry would). A resend is
tagged (its correlation id), so the log tells which send was decided: every original command
must be answered, exactly once, by itself. A service that dropped a command would see it answered
only thanks to the resend. Afterwards: every acknowledged move is still in its stream exactly
once, the clocks went on (each timeout came at the deadline the event before it set, and one
came after the last restart), and `arena verify --strict` confirms every event.
"""

from __future__ import annotations

import asyncio
import random
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_match.clock import ms_of, now_ms
from arena_match.verify import verify_log
from arena_runtime import topics
from arena_runtime.config import load_settings
from arena_runtime.envelope import Event
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import REJECTED_TYPE

from tests.processes.arena_process import ArenaProcess, arena_env, free_port, run_to_exit
from tests.services.match.harness import (
    ALICE,
    BOB,
    MatchClient,
    ai,
    create,
    human,
    scripted_move,
)

PARTITIONS = 4
HUMAN_GAMES = 10
AI_GAMES = 2
STALLED_GAMES = 2  # nobody moves: the 1 s move clock skips turn after turn
KILLS = 4
MOVE_CAP = 40
ANSWER_PATIENCE = 8.0  # then the same command id is sent again

pytestmark = pytest.mark.slow


@dataclass
class Ledger:
    """What the scripted players were told: command id -> the event ids acknowledging it."""

    acked: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    resent: int = 0


def resend_tag(command_id: str, number: int) -> str:
    """The correlation id of a command's ``number``-th resend (the original carries none, so its
    events carry its own command id)."""
    return f"resend-{number}:{command_id}"


def answer_of(events: list[Event], command_id: str) -> list[Event]:
    return [
        e
        for e in events
        if e.causation_id == command_id
        or (e.type == REJECTED_TYPE and e.payload.command_id == command_id)
    ]


async def assert_every_original_answered_once(client: MatchClient, ledger: Ledger) -> None:
    """Every acknowledged command is answered in the log once, with the events its player saw,
    and decided from its original send, never from a resend."""
    for (match_id, command_id), event_ids in ledger.acked.items():
        answer = answer_of(await client.events(match_id), command_id)
        assert tuple(e.event_id for e in answer) == event_ids, (match_id, command_id)
        decided_from = {e.correlation_id for e in answer}
        assert decided_from == {command_id}, (
            f"{match_id}: {command_id} was answered only from a resend ({decided_from}): "
            "the service lost its original"
        )


class MatchProcess:
    """`arena match` over one data dir, killed and restarted at will."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.env = arena_env(
            data_dir,
            free_port(),
            ARENA_PARTITIONS=str(PARTITIONS),
            ARENA_MATCH_AI_THINK_MS="50",
            ARENA_CONSUMER_SESSION_TIMEOUT_MS="2000",
            ARENA_CONSUMER_HEARTBEAT_MS="200",
        )
        self.starts = 0
        self.proc: ArenaProcess | None = None
        #: Wall-clock time of the last start, in the service's own unit (ms).
        self.started_ms = 0

    def start(self) -> None:
        self.starts += 1
        self.started_ms = now_ms()
        self.proc = ArenaProcess(["match"], self.env, self.data_dir / f"match-{self.starts}.log")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.proc.send_signal(signal.SIGKILL)
        self.proc.proc.wait()
        self.proc.close()


@pytest.fixture
async def chaos_log(tmp_path: Path) -> AsyncIterator[EventLog]:
    settings = load_settings({"ARENA_DATA_DIR": str(tmp_path)})
    async with open_event_log(settings) as event_log:
        await topics.ensure_topics(event_log, PARTITIONS)
        yield event_log


async def _answer(
    client: MatchClient, match_id: str, payload: object, command_id: str, ledger: Ledger
) -> tuple[str | None, tuple[str, ...]]:
    await client.send(match_id, payload, command_id)
    resends = 0
    while True:
        try:
            reply = await client.answer(match_id, command_id, within=ANSWER_PATIENCE)
        except TimeoutError:
            ledger.resent += 1
            resends += 1
            await client.send(match_id, payload, command_id, resend_tag(command_id, resends))
            continue
        ids = tuple(e.event_id for e in reply.events)
        ledger.acked[(match_id, command_id)] = ids
        return reply.code, ids


async def _play(
    client: MatchClient, match_id: str, ledger: Ledger, seed: int, moves: int = MOVE_CAP
) -> None:
    """A scripted player for each human seat: up to ``moves`` moves, or to the game's end."""
    rng = random.Random(seed)
    for number in range(moves):
        state = await client.state(match_id)
        if state.over:
            return
        if state.seat(state.game.to_move).is_ai:
            await asyncio.sleep(0.05)
            continue
        move = scripted_move(state, seed=rng.getrandbits(32))
        code, _ = await _answer(client, match_id, move, f"{match_id}:move:{number}", ledger)
        assert code is None, f"{match_id}: a legal move was refused with {code}"
        await asyncio.sleep(rng.uniform(0, 0.2))


async def _kill_and_restart(service: MatchProcess) -> None:
    for _ in range(KILLS):
        await asyncio.sleep(random.uniform(1.5, 3.0))
        service.kill()
        await asyncio.sleep(random.uniform(0.1, 1.0))  # commands pile up meanwhile
        service.start()


def _timeout_deadline(event: Event) -> int:
    """The move deadline a timeout answered (from its timer's id), or -1 for any other event."""
    if not isinstance(event.payload, pb.TurnSkipped) or event.payload.reason != "timeout":
        return -1
    kind, deadline = event.causation_id.rsplit(":", 1)
    assert kind == "timer:move", event.causation_id
    return int(deadline)


def assert_clock_kept(events: list[Event]) -> None:
    """A stalled game's move clock: one start, and every timeout at (never before) the deadline
    the last move event set: no restart moved a deadline or restarted the game."""
    assert sum(isinstance(e.payload, pb.GameStarted) for e in events) == 1
    timeouts = 0
    current: int | None = None  # the move deadline the events so far have set
    for event in events:
        deadline = _timeout_deadline(event)
        if deadline >= 0:
            timeouts += 1
            assert deadline == current, f"a timeout at {deadline}, the deadline was {current}"
            assert ms_of(event.time) >= deadline, f"early: {event}"
        if isinstance(event.payload, (pb.GameStarted, pb.TurnSkipped)):
            current = event.payload.move_deadline_ms
    assert timeouts >= 2


async def test_kill_9_during_many_games_loses_and_doubles_nothing(
    tmp_path: Path, chaos_log: EventLog
) -> None:
    client = MatchClient(chaos_log)
    ledger = Ledger()
    service = MatchProcess(tmp_path)
    service.start()
    try:
        human_ids = [f"h{i}" for i in range(HUMAN_GAMES)]
        ai_ids = [f"a{i}" for i in range(AI_GAMES)]
        stalled_ids = [f"s{i}" for i in range(STALLED_GAMES)]
        for match_id in human_ids:
            await client.send(match_id, create(match_id), f"{match_id}:create")
        for match_id in ai_ids:
            await client.send(match_id, create(match_id, (human(ALICE), ai())), f"{match_id}:c")
        for match_id in stalled_ids:
            await client.send(match_id, create(match_id, move_seconds=1), f"{match_id}:create")
        for match_id in (*human_ids, *stalled_ids):
            await client.answer(match_id, f"{match_id}:create", within=60)
        for match_id in ai_ids:
            await client.answer(match_id, f"{match_id}:c", within=60)

        players = [
            _play(client, match_id, ledger, seed)
            for seed, match_id in enumerate((*human_ids, *ai_ids))
        ]
        await asyncio.gather(_kill_and_restart(service), *players)

        # The stalled games: their move clocks kept running through every restart.
        for match_id in stalled_ids:
            await client.wait_for(
                match_id,
                lambda e: _timeout_deadline(e) > service.started_ms,
                within=60,
            )
            assert_clock_kept(await client.events(match_id))
            await _answer(
                client, match_id, match_pb2.Resign(player_id=BOB), f"{match_id}:end", ledger
            )

        await assert_every_original_answered_once(client, ledger)

        # Let the last instance answer what is in flight (timers fired before a kill), then stop.
        for _ in range(200):
            if not (await verify_log(chaos_log)).unanswered:
                break
            await asyncio.sleep(0.1)
        assert service.proc is not None
        assert service.proc.terminate() == 0
        service.proc = None
    finally:
        if service.proc is not None:
            service.proc.close()

    verified = run_to_exit(["verify", "--strict"], service.env, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert service.starts == KILLS + 1
    print(verified.stdout.splitlines()[0], f"; {ledger.resent} resends")
