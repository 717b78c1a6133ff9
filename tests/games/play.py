"""Playing a registered game through its module alone: what the match service and the gateway will
do with it, in memory (no log, no sockets). Each seat is the game's bot; every command, event,
state and timer along the way is kept so the contract tests can look at them again."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from arena_games.contract import (
    GameModule,
    Inputs,
    MatchInfo,
    Result,
    Seat,
    SeatKind,
    ServiceSettings,
    Table,
    Timer,
    Viewer,
)
from arena_runtime.streams import Rejection
from google.protobuf.message import Message
from pydantic import TypeAdapter

START_MS = 1_800_000_000_000
#: Steps (decisions) a game may take before the test calls it stuck.
MAX_STEPS = 5000


@dataclass(frozen=True)
class Step:
    """One decision: the state it was made on, by whom, what, with which inputs, and its events."""

    before: Any
    seat: int
    command: Message
    inputs: Inputs
    events: tuple[Message, ...]
    after: Any
    timer: Timer | None = None


@dataclass
class Played:
    module: GameModule[Any]
    info: MatchInfo
    settings: Message
    initial: Any
    opening: tuple[Message, ...]
    steps: list[Step] = field(default_factory=list)
    state: Any = None
    result: Result | None = None
    #: Every view each viewer was shown, in order.
    views: dict[Viewer, list[dict[str, Any]]] = field(default_factory=dict)
    #: The state each of those views was made for (the one after its event).
    view_states: dict[Viewer, list[Any]] = field(default_factory=dict)

    @property
    def events(self) -> list[Message]:
        return [*self.opening, *(e for step in self.steps for e in step.events)]

    def states(self) -> list[Any]:
        return [self.initial, *(step.after for step in self.steps)]


def seats_for(module: GameModule[Any]) -> tuple[Seat, ...]:
    """People (bots playing through the client) in as many seats as the game allows, the rest
    its AI or scripted players."""
    plan = module.seats
    seats = []
    for number in range(1, plan.seats + 1):
        if number <= plan.max_humans:
            seats.append(Seat(number, f"p_{number}", f"Player {number}"))
        elif SeatKind.AI in plan.kinds:
            seats.append(Seat(number, f"ai-{number}", "AI", SeatKind.AI, plan.ai_levels[0]))
        else:
            policy = plan.default_fill or plan.scripted_policies[0]
            seats.append(Seat(number, f"bot-{number}", policy, SeatKind.SCRIPTED, policy))
    return tuple(seats)


def table(played: Played, sequence: int) -> Table:
    return Table(
        played.info.match_id,
        played.info.game,
        played.info.seats,
        played.info.mode,
        played.info.room_code,
        {},
        sequence,
    )


def client_message(module: GameModule[Any], reply: dict[str, Any], message_id: str) -> Any:
    adapter: TypeAdapter[Any] = TypeAdapter(module.client.messages[0])
    for model in module.client.messages:
        if model.model_fields["type"].annotation.__args__[0] == reply["type"]:  # type: ignore[union-attr]
            adapter = TypeAdapter(model)
            break
    return adapter.validate_python({"id": message_id, **reply})


def play(module: GameModule[Any], seed: int = 1) -> Played:
    """A whole match of the game with its default settings, a bot in every people's seat."""
    seeds = itertools.count(seed * 1_000_003)
    info = MatchInfo("m-contract", module.name, seats_for(module))
    settings = module.rules.settings(module.lobby.defaults())
    assert not isinstance(settings, Rejection), settings
    now = START_MS
    state = module.rules.initial(info, settings, ServiceSettings(ai_think_ms=500))
    opening = module.rules.start(state, Inputs(now, next(seeds)))
    assert not isinstance(opening, Rejection), opening
    played = Played(module, info, settings, state, tuple(opening))
    viewers = [Viewer(seat.number) for seat in info.seats] + [Viewer(role="spectator")]
    bots = {viewer: module.bot(viewer) for viewer in viewers}
    played.views = {viewer: [] for viewer in viewers}
    played.view_states = {viewer: [] for viewer in viewers}
    sequence = 1  # MatchOpened

    def shown(viewer: Viewer, messages: list[dict[str, Any]], state: Any) -> None:
        for message in messages:
            played.views[viewer].append(message)
            played.view_states[viewer].append(state)
            bots[viewer].observe(message)

    def show(before: Any, events: tuple[Message, ...] | list[Message], time_ms: int) -> None:
        """Each event folded and pushed in turn, with the state after it (as the service
        does)."""
        nonlocal sequence
        state = before
        for event in events:
            sequence += 1
            state = module.rules.apply(state, event, time_ms)
            for viewer in bots:
                shown(
                    viewer,
                    module.views.push(table(played, sequence), state, event, viewer, now),
                    state,
                )

    show(state, opening, now)
    for event in opening:
        state = module.rules.apply(state, event, now)
    for viewer in bots:
        shown(viewer, module.views.snapshot(table(played, sequence), state, viewer, now), state)
    for step_number in range(MAX_STEPS):
        if module.rules.result(state) is not None:
            break
        step = _bot_move(played, bots, state, now, seeds, step_number)
        if step is None:
            timers = sorted(module.rules.timers(state))
            assert timers, "nobody can act and nothing is due: the game is stuck"
            timer = timers[0]
            now = max(now, timer.due_ms)
            seed = next(seeds)
            thought = module.rules.think(state, timer.payload, seed)
            inputs = Inputs(now, next(seeds), seed, thought)
            decided = module.rules.decide(state, 0, timer.payload, inputs)
            assert not isinstance(decided, Rejection), (timer, decided)
            step = Step(state, 0, timer.payload, inputs, tuple(decided), None, timer)
        after = state
        for event in step.events:
            after = module.rules.apply(after, event, step.inputs.now_ms)
        step = Step(
            step.before, step.seat, step.command, step.inputs, step.events, after, step.timer
        )
        played.steps.append(step)
        show(state, step.events, step.inputs.now_ms)
        state = after
        now += 100
    played.state = state
    played.result = module.rules.result(state)
    assert played.result is not None, "the game did not end"
    return played


def _bot_move(
    played: Played,
    bots: dict[Viewer, Any],
    state: Any,
    now: int,
    seeds: itertools.count[int],
    step_number: int,
) -> Step | None:
    module = played.module
    for seat in played.info.seats:
        if not seat.human:
            continue
        reply = bots[Viewer(seat.number)].reply(next(seeds))
        if reply is None:
            continue
        message = client_message(module, reply, f"m{step_number}")
        command = module.client.command(message, seat.player_id)
        inputs = Inputs(now, next(seeds), next(seeds))
        decided = module.rules.decide(state, seat.number, command, inputs)
        assert not isinstance(decided, Rejection), (reply, decided)
        return Step(state, seat.number, command, inputs, tuple(decided), None)
    return None
