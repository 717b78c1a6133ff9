"""Matrix Games through its game module: what one beat costs the match service.

The module keeps states as values, so each beat is played on a copy of the engine's Sim
(``Sim.copy``); this measures that copy beside the beat's own ticks, and the rest of a beat's
work on the seam: deciding it (scripted orders, fallbacks, the engine's checks), folding it
(``rules.apply``: the copy and the ticks), one seat's observation and the two spectator frames
pushed for it. Full 12-beat episodes of one person's seat (ordering as ``counter``) and seven
scripted seats, pacing off. Process CPU time per beat, the best of the rounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from arena_engine.matrix_games.episode import scripted_orders
from arena_games.contract import Inputs, MatchInfo, Seat, SeatKind, ServiceSettings, Table, Viewer
from arena_games.matrix_games import MODULE, wire
from arena_games.matrix_games.rules import MatrixGamesState, Phase
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb
from arena_runtime.streams import Rejection

POLICIES = ["counter", "tit-for-tat", "fixed-pick", "always-first", "always-second"] * 2
START_MS = 1_800_000_000_000


def _seats() -> tuple[Seat, ...]:
    people = (Seat(1, "p_1", "Ann"),)
    return people + tuple(
        Seat(n, f"bot-{n}", POLICIES[n - 1], SeatKind.SCRIPTED, POLICIES[n - 1])
        for n in range(2, 9)
    )


Beat = tuple[MatrixGamesState, pb.GiveOrder, pb.BeatPlayed, int]


def _beats(seed: int) -> list[Beat]:
    """Every beat of one episode: the state before the person's order, the order (which plays
    the beat), the beat's event and the time."""
    rules = MODULE.rules
    info = MatchInfo("m-bench", "matrix-games", _seats())
    settings = rules.settings(
        pb.MatrixGamesSettings(seed=seed, min_beat_seconds=0, player_connect_timeout_seconds=0)
    )
    assert not isinstance(settings, Rejection)
    now = START_MS
    state = rules.initial(info, settings, ServiceSettings())
    opening = rules.start(state, Inputs(now))
    assert not isinstance(opening, Rejection)
    for event in opening:
        state = rules.apply(state, event, now)
    beats: list[Beat] = []
    while state.phase is not Phase.OVER:
        now += 1_000
        assert state.sim is not None
        order = scripted_orders(state.sim, ["counter"] * 8)[0]
        command = pb.GiveOrder(
            beat=state.beat,
            intent=order.intent,
            token=str(order.token) if order.token != -1 else "",
            target=str(order.target) if order.target != -1 else "",
        )
        decided = rules.decide(state, 1, command, Inputs(now))
        assert not isinstance(decided, Rejection), decided
        played = next(e for e in decided if isinstance(e, pb.BeatPlayed))
        beats.append((state, command, played, now))
        for event in decided:
            state = rules.apply(state, event, now)
    return beats


def _per_beat(beats: list[Beat], work: Callable[[Beat], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for beat in beats:
            work(beat)
        best = min(best, time.process_time() - started)
    return best / len(beats)


def run(quick: bool = False) -> None:
    episodes, rounds = (2, 1) if quick else (6, 5)
    rules, views = MODULE.rules, MODULE.views
    beats = [beat for seed in range(episodes) for beat in _beats(seed)]
    # The state each beat is played on: the person's order folded in.
    ordered = [
        (rules.apply(s, pb.OrderGiven(seat=1, beat=e.beat, order=e.orders[0]), n), c, e, n)
        for s, c, e, n in beats
    ]
    played = [(rules.apply(s, e, n), c, e, n) for s, c, e, n in ordered]
    table = Table("m-bench", "matrix-games", _seats())

    def copy(beat: Beat) -> object:
        assert beat[0].sim is not None
        return beat[0].sim.copy()

    def ticks(beat: Beat) -> object:
        state, _, event, _ = beat
        assert state.sim is not None
        sim = state.sim.copy()
        sim.install_orders([wire.engine_order(order) for order in event.orders])
        sim.run_beat()
        return sim

    figures = {
        "Sim.copy": _per_beat(ordered, copy, rounds),
        "the beat's ticks (copy, install, 50 ticks)": _per_beat(ordered, ticks, rounds),
        "decide the last order (7 scripted orders, checks)": _per_beat(
            beats, lambda b: rules.decide(b[0], 1, b[1], Inputs(b[3])), rounds
        ),
        "rules.apply(BeatPlayed)": _per_beat(
            ordered, lambda b: rules.apply(b[0], b[2], b[3]), rounds
        ),
        "one seat's observation (first build per Sim)": _per_beat(
            played, lambda b: views.push(table, b[0], b[2], Viewer(1), b[3]), 1
        ),
        "the spectators' two frames": _per_beat(
            played, lambda b: views.push(table, b[0], b[2], Viewer(role="spectator"), b[3]), rounds
        ),
    }
    print(f"{len(beats)} beats of {episodes} episodes (1 person, 7 scripted seats, pacing off)")
    for label, seconds in figures.items():
        print(f"  {label:<52} {1e6 * seconds:8.0f} µs")
    share = figures["Sim.copy"] / figures["the beat's ticks (copy, install, 50 ticks)"]
    print(f"  the copy is {100 * share:.1f} % of a beat's ticks")
    print(f"(process CPU time per beat, best of {rounds} rounds)")
