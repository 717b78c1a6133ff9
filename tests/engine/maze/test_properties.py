"""Properties over generated mazes and random command scripts: keys never duplicate or vanish,
a refused command changes nothing, records stay within 512 bytes and reassemble into the view,
and a player sees nothing beyond its radius."""

from __future__ import annotations

import json

from arena_engine.maze import (
    Advance,
    Context,
    Drop,
    Enqueue,
    MazeSettings,
    MazeState,
    Move,
    ProcessNext,
    Rejection,
    decide,
    event_from_dict,
    event_to_dict,
    project,
    reassemble,
    replay,
    view_record_values,
    view_records,
)
from arena_engine.maze.events import ClockAdvanced, CommandRefused, MatchDecided, PlayStarted
from arena_engine.maze.geometry import chebyshev
from arena_engine.maze.views import PlayerView, radius_of
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.maze.play import fold, started

ROLES = st.sampled_from([1, 2, 1, 2, "observer"])
ACTIONS = st.one_of(st.sampled_from([Move(d) for d in "NESW"] * 4), st.just(Drop()))
# (ms since the previous step, what): a command, a batch of commands, or an advance.
COMMAND = st.tuples(ROLES, ACTIONS)
STEP = st.tuples(
    st.integers(0, 400),
    st.one_of(
        COMMAND,
        st.lists(COMMAND, min_size=2, max_size=20),
        st.just("advance"),
    ),
)


@st.composite
def matches(draw: st.DrawFn) -> tuple[MazeSettings, int, list[object]]:
    cfg = MazeSettings(
        width=draw(st.integers(5, 11)),
        height=draw(st.integers(5, 11)),
        cooldown_ms=draw(st.sampled_from([0, 50, 150])),
        countdown_ms=draw(st.sampled_from([0, 500])),
        vision_pairs=draw(st.integers(0, 4)),
        loops_percent=draw(st.integers(1, 60)),
        time_limit_ms=draw(st.sampled_from([None, 20_000])),
    )
    return cfg, draw(st.integers(0, 2**64 - 1)), draw(st.lists(STEP, min_size=1, max_size=60))


def check_keys(state: MazeState) -> None:
    """Each key is on exactly one ground cell or with exactly one carrier; one slot each."""
    carriers = []
    for key in state.position.keys:
        assert (key.cell is None) != (key.carrier is None)
        if key.cell is not None:
            assert 0 <= key.cell < state.setup.size
        else:
            assert key.carrier in (1, 2)
            carriers.append(key.carrier)
    assert len(carriers) == len(set(carriers))


def check_views(state: MazeState) -> None:
    for role in (1, 2, "observer"):
        view = project(state, role)
        records = view_records(view)
        assert all(len(r.encode()) <= 512 for r in records)
        assert [json.loads(r)["chunk"] for r in records] == list(range(len(records)))
        assert reassemble(records) == view
        assert reassemble(list(reversed(records))) == view
        # The objects built beside the texts are the texts, parsed: same members, same order.
        pairs = view_record_values(view)
        assert [text for text, _ in pairs] == records
        for text, value in pairs:
            assert json.dumps(value, separators=(",", ":")) == text
        if isinstance(view, PlayerView):
            me = state.position.player(role)  # type: ignore[arg-type]
            centre = me.cell if me.cell is not None else state.setup.exit_of(view.player)[0]
            radius = radius_of(me)
            w = state.setup.width
            seen = {i for i, _ in view.cells}
            assert all(chebyshev(w, i, centre) <= radius for i in seen)
            # ... and nothing within it is missing: the whole clipped square.
            assert seen == {i for i in range(state.setup.size) if chebyshev(w, i, centre) <= radius}
            assert all(o.cell in seen for o in view.objects)
            assert view.opponent is None or view.opponent.cell in seen
        else:
            assert len(view.cells) == state.setup.size


def _game_part(state: MazeState) -> object:
    return state.position


@settings(max_examples=60, deadline=None)
@given(matches())
def test_random_scripts_keep_every_invariant(match: tuple[MazeSettings, int, list[object]]) -> None:
    cfg, seed, steps = match
    state, log = started(cfg, seed)
    t = 0
    check_keys(state)
    for gap, what in steps:  # type: ignore[misc]
        t += gap
        if what == "advance":
            events = decide(state, Advance(), Context(now_ms=t))
            assert isinstance(events, list)
            state = fold(state, events)
            log += events
            continue
        batch = what if isinstance(what, list) else [what]
        for role, action in batch:
            before = state
            outcome = decide(state, Enqueue(role, action), Context(now_ms=t))
            if isinstance(outcome, Rejection):
                # Refused before the FIFO (observer, queue_full): nothing to apply at all.
                assert outcome.code in ("observer", "queue_full")
                assert role == "observer" or len(state.queue) == 16
                continue
            state = fold(state, outcome)
            log += outcome
            assert state.queue[-1].command_seq == before.next_command_seq
        while state.queue:
            before = state
            events = decide(state, ProcessNext(), Context())
            assert isinstance(events, list)
            state = fold(state, events)
            log += events
            if isinstance(events[-1], CommandRefused):
                # Only the clock's own decisions may change the position; the refusal nothing.
                timed = [e for e in events[:-1] if isinstance(e, (PlayStarted, MatchDecided))]
                assert len(timed) == len(events) - 1
                assert state.position == fold(before, timed).position
                assert state.state_seq == before.state_seq + len(timed)
            check_keys(state)
        check_views(state)
    # The log is the state: folding it again, through JSON, gives the same state.
    again = replay(event_from_dict(json.loads(json.dumps(event_to_dict(e)))) for e in log)
    assert again == state


@settings(max_examples=40, deadline=None)
@given(matches())
def test_a_refused_submit_leaves_the_position_and_sequence(
    match: tuple[MazeSettings, int, list[object]],
) -> None:
    from arena_engine.maze import Submit

    cfg, seed, steps = match
    state, _ = started(cfg, seed)
    t = 0
    for gap, what in steps:  # type: ignore[misc]
        t += gap
        if not isinstance(what, tuple):
            continue
        role, action = what
        outcome = decide(state, Submit(role, action), Context(now_ms=t))
        if isinstance(outcome, Rejection):
            continue
        after = fold(state, outcome)
        refused = [e for e in outcome if isinstance(e, CommandRefused)]
        timed = [e for e in outcome if isinstance(e, (PlayStarted, MatchDecided, ClockAdvanced))]
        if refused:
            assert after.position == fold(state, timed).position
        state = after
