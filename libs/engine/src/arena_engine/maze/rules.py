"""Processing one queued command: the refusal codes in their order, then the resolution of an
accepted move, as events. Pure: the state is only read."""

from __future__ import annotations

from .errors import ErrorCode
from .events import (
    ArtifactTaken,
    CommandRefused,
    CompassRead,
    Event,
    Exited,
    ExitOpened,
    KeyDropped,
    KeyPickedUp,
    MatchDecided,
    Moved,
    PlayersMet,
    PlayStarted,
)
from .geometry import FLAG, bearing, neighbour
from .settings import FINISH_WINDOW_MS
from .state import COUNTDOWN, MazeState, Queued


def passing_time(state: MazeState, clock: int) -> list[Event]:
    """What the authoritative clock reaching ``clock`` decides by itself: the end of the
    countdown, the end of the finish window (the first out wins), the time limit (a draw)."""
    pos, timing = state.position, state.timing
    events: list[Event] = []
    if pos.phase == COUNTDOWN and clock >= timing.countdown_end_ms:
        events.append(PlayStarted(timing.countdown_end_ms))
    if pos.result is not None:
        return events
    if pos.first_exit is not None:
        exited_at = pos.player(pos.first_exit).exited_at
        assert exited_at is not None
        if clock > exited_at + FINISH_WINDOW_MS:
            events.append(MatchDecided(pos.first_exit, "exit", clock))
    elif timing.ends_at_ms is not None and clock >= timing.ends_at_ms:
        # The limit ends the game at ``ends_at_ms``, however late the timer (or the command
        # that finds it passed) arrives: the result's time is the rule's, not the service's.
        events.append(MatchDecided(None, "time_limit", timing.ends_at_ms))
    return events


def _refusal(state: MazeState, entry: Queued, decided: bool) -> ErrorCode | None:
    pos = state.position
    me = pos.player(entry.player)
    if decided or me.exited:
        return ErrorCode.FINISHED
    if entry.t < state.timing.countdown_end_ms:
        return ErrorCode.COUNTDOWN
    if me.last_command_t is not None and entry.t < me.last_command_t:
        return ErrorCode.OUT_OF_ORDER
    if entry.action == "drop":
        return ErrorCode.NOTHING_TO_DROP if pos.carrying(entry.player) is None else None
    if me.last_move_t is not None and entry.t - me.last_move_t < state.timing.cooldown_ms:
        return ErrorCode.COOLDOWN
    assert entry.dir is not None and me.cell is not None
    if state.setup.cells[me.cell] & FLAG[entry.dir]:
        return None
    if me.exit_open and state.setup.exit_of(entry.player) == (me.cell, entry.dir):
        return None
    return ErrorCode.WALL


def process(state: MazeState) -> list[Event]:
    """The events of processing the head of the FIFO (which must not be empty)."""
    entry = state.queue[0]
    clock = max(state.clock_ms, entry.t)
    events = passing_time(state, clock)
    decided = state.position.result is not None or any(isinstance(e, MatchDecided) for e in events)
    code = _refusal(state, entry, decided)
    if code is not None:
        events.append(CommandRefused(entry.command_seq, entry.player, code.value, entry.t))
    elif entry.action == "drop":
        owner = state.position.carrying(entry.player)
        cell = state.position.player(entry.player).cell
        assert owner is not None and cell is not None
        events.append(KeyDropped(entry.command_seq, entry.player, owner, cell, entry.t))
    else:
        events.extend(_move(state, entry, clock))
    return events


def _move(state: MazeState, entry: Queued, clock: int) -> list[Event]:
    setup, pos, p = state.setup, state.position, entry.player
    src = pos.player(p).cell
    assert src is not None and entry.dir is not None
    dst = neighbour(setup.width, setup.height, src, entry.dir)
    if dst is None:  # through the mover's own open exit
        out: list[Event] = [Exited(entry.command_seq, p, src, entry.dir, entry.t)]
        if pos.first_exit is not None:
            # The other player left first, and the clock has not passed their window.
            out.append(MatchDecided(None, "window", clock))
        elif clock > entry.t + FINISH_WINDOW_MS:
            out.append(MatchDecided(p, "exit", clock))
        return out
    events: list[Event] = [Moved(entry.command_seq, p, entry.dir, src, dst, entry.t)]
    # Who carries which key, as the resolution goes: owner -> carrier.
    carriers = {o: k.carrier for o, k in enumerate(pos.keys, 1) if k.carrier is not None}
    if dst in pos.artifacts:
        events.append(ArtifactTaken(p, dst))
    if p not in carriers.values():
        ground = [o for o, k in enumerate(pos.keys, 1) if k.cell == dst]
        if ground:
            events.append(KeyPickedUp(p, ground[0], dst))
            carriers[ground[0]] = p
    other = 3 - p
    if pos.player(other).cell == dst:
        returned = tuple((o, c) for o, c in sorted(carriers.items()) if c != o)
        events.append(PlayersMet(p, pos.meetings + 1, dst, returned))
        carriers = {o: o for o in carriers}
    if setup.compass_of(p) == dst:
        exit_cell = setup.exit_of(p)[0]
        dx = exit_cell % setup.width - dst % setup.width
        dy = exit_cell // setup.width - dst // setup.width
        events.append(CompassRead(p, bearing(dx, dy)))
    if setup.exit_of(p)[0] == dst and carriers.get(p) == p and not pos.player(p).exit_open:
        events.append(ExitOpened(p, dst))
    return events
