"""Matrix Games' rules on the seam: the engine's episode behind the contract's Rules.

An episode opens with ``EpisodeStarted`` (the seed drawn here when the host gave none) and waits
for the people's seats to join (``JoinEpisode``), at most the connect wait; nobody connected by
then is a ``forfeit``. Then each beat is open for orders (``GiveOrder``) until every person's
seat that is not away has ordered (and the pacing, ``min_beat_seconds``, has passed) or the
decision deadline passes; then it is played: scripted seats order by their policy, a person who
gave no order plays the fallback policy on their own observation (the engine's rule for a
missing decision). The play deadline (60 % of the episode timeout) is checked between beats
(``deadline``); after the last beat the episode is ``complete``.

States are values. The engine's ``Sim`` is mutable, so a state keeps what identifies it (the
orders so far, presence, times) and the Sim beside it, out of equality: a beat is played on a
copy (``Sim.copy``, about 1 % of the beat's ticks), never on the Sim of the state it was given.
Presence reaches the rules as the match service's PlayerDisconnected and PlayerReconnected
events: an away seat still plays (by the fallback) but is not waited for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from arena_engine.matrix_games import Order, OrderError, PlayBeat, Settings, Sim
from arena_engine.matrix_games import Rejection as EngineRejection
from arena_engine.matrix_games import decide as engine_decide
from arena_engine.matrix_games.constants import SEATS, slot_of_alias
from arena_engine.matrix_games.kernel import ENDINGS
from arena_engine.matrix_games.observation import BeatShared, build_observation
from arena_engine.matrix_games.orders import clean_text, validate_order
from arena_engine.matrix_games.policies import SAYINGS, scripted_order
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_games.contract import (
    Decision,
    GameError,
    Inputs,
    MatchInfo,
    Presence,
    ReconnectPolicy,
    Result,
    Seat,
    ServiceSettings,
    SettingsError,
    Thought,
    Timer,
)
from arena_games.lobby_form import INVALID_SETTINGS
from arena_games.matrix_games import lobby, wire
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb

#: The sources a seat's client may give its orders (a person, or a language model at the seat).
CLIENT_SOURCES = ("player", "llm")
#: The reference's limit on a policy label (a person's display name stands for one).
POLICY_LABEL_RUNES = 48
#: The seed the match service draws is masked to 31 bits, as the reference's entrypoint does.
SEED_MASK = 0x7FFFFFFF

NOT_STARTED = "not_started"
EPISODE_OVER = "episode_over"
NOT_A_PLAYER_SEAT = "not_a_player_seat"
ALREADY_JOINED = "already_joined"
BEAT_NOT_OPEN = "beat_not_open"
PAST_BEAT = "past_beat"
DEADLINE_PASSED = "deadline_passed"
UNKNOWN_TOKEN = "unknown_token"
UNKNOWN_TARGET = "unknown_target"
BAD_SOURCE = "bad_source"
STALE_TIMER = "stale_timer"
TIMER_NOT_DUE = "timer_not_due"
UNKNOWN_COMMAND = "unknown_command"
NO_FORFEIT = "no_forfeit"

_INDEX = re.compile(r"-?\d{1,3}")


class Phase(StrEnum):
    NEW = "new"
    #: Waiting for the people's seats to join (the connect wait).
    CONNECTING = "connecting"
    #: A beat is open for orders.
    PLAYING = "playing"
    #: The last beat was played; the episode's end follows in the same batch.
    SETTLING = "settling"
    OVER = "over"


NO_ORDERS: tuple[Order | None, ...] = (None,) * SEATS
DEFAULT_SETTINGS = Settings()


@dataclass(frozen=True, slots=True)
class MatrixGamesState:
    """A Matrix Games match as its rules fold it. Slots (0-7) are the engine's seat numbers."""

    seats: tuple[Seat, ...] = ()
    #: The settings as played; the seed is 0 until EpisodeStarted records it.
    settings: Settings = DEFAULT_SETTINGS
    #: The host's seed, or None: the match service draws one at the start.
    seed: int | None = None
    phase: Phase = Phase.NEW
    started_ms: int = 0
    #: When the open beat opened.
    opened_ms: int = 0
    #: Slots whose client joined, and slots whose player is away (the service's presence).
    joined: frozenset[int] = frozenset()
    away: frozenset[int] = frozenset()
    #: The open beat's orders given so far, by slot.
    pending: tuple[Order | None, ...] = NO_ORDERS
    #: The eight orders of every beat played.
    played: tuple[tuple[Order, ...], ...] = ()
    reason: str = ""
    #: The episode as the engine runs it: derived from the fields above, never changed once in
    #: a state (a beat is played on a copy).
    sim: Sim | None = field(default=None, compare=False, repr=False)
    #: The Sim at the boundary before the last beat played (the spectators' install frame).
    before: Sim | None = field(default=None, compare=False, repr=False)

    @property
    def beat(self) -> int:
        return len(self.played)

    @property
    def humans(self) -> frozenset[int]:
        return frozenset(seat.number - 1 for seat in self.seats if seat.human)

    @property
    def connected(self) -> frozenset[int]:
        return self.joined - self.away

    @property
    def deadline_ms(self) -> int:
        """Orders for the open beat are refused from this time on."""
        return self.opened_ms + 1000 * self.settings.llm_timeout_seconds

    @property
    def earliest_ms(self) -> int:
        """The pacing: the open beat is played no sooner."""
        return self.opened_ms + 1000 * self.settings.min_beat_seconds

    @property
    def play_deadline_ms(self) -> int:
        return self.started_ms + 600 * self.settings.episode_timeout_seconds

    @property
    def connect_deadline_ms(self) -> int:
        return self.started_ms + 1000 * self.settings.player_connect_timeout_seconds

    @property
    def ready(self) -> bool:
        """Every person's seat that is not away has ordered (and one is there: a beat nobody
        can order for waits for its deadline)."""
        awaited = self.humans - self.away
        return bool(awaited) and all(self.pending[slot] is not None for slot in awaited)

    @property
    def due_ms(self) -> int:
        """When the open beat is played, unless its last order comes first."""
        if self.ready:
            return self.earliest_ms
        return max(self.deadline_ms, self.earliest_ms)

    def orders_given(self, slot: int) -> int:
        return sum(beat[slot].source in CLIENT_SOURCES for beat in self.played)


class _Refused(GameError):
    pass


def policy_name(seat: Seat) -> str:
    """The seat's name in the replay's policyNames: a scripted seat's policy, a person's
    display name."""
    if not seat.human:
        return seat.policy
    return clean_text(seat.display_name, POLICY_LABEL_RUNES) or "player"


def _index(text: str, names: Sequence[str], code: str) -> int:
    """A token or target as a client gives it: a name (case-insensitive), an index, or nothing
    (-1). Whether the index fits the intent is the engine's check."""
    text = text.strip()
    if not text:
        return -1
    if _INDEX.fullmatch(text):
        return int(text)
    lowered = [name.lower() for name in names]
    if text.lower() in lowered:
        return lowered.index(text.lower())
    raise _Refused(code, f"{text!r} is none of {', '.join(names)}")


def client_order(command: pb.GiveOrder, slot: int, sim: Sim, latency_ms: int) -> Order:
    """The engine order of a seat's GiveOrder, checked by the engine's order checks."""
    source = command.source or "player"
    if source not in CLIENT_SOURCES:
        raise _Refused(BAD_SOURCE, f"an order's source is one of {', '.join(CLIENT_SOURCES)}")
    token = _index(command.token, sim.variant.tokens, UNKNOWN_TOKEN)
    target = slot_of_alias(command.target) if command.target.strip() else -1
    if command.target.strip() and target < 0:
        target = _index(command.target, (), UNKNOWN_TARGET)
    order = Order(
        command.intent, token, target, source, command.say, command.notes, max(0, latency_ms)
    )
    try:
        validate_order(order, slot, sim.k)
    except OrderError as exc:
        raise _Refused(exc.code, str(exc)) from None
    return order.cleaned()


def final_event(state: MatrixGamesState, reason: str) -> pb.EpisodeEnded:
    """The episode's end as recorded: the reason, every seat's score and indices."""
    sim = state.sim
    assert sim is not None
    variant = sim.variant
    indices = sim.indices
    mass = [0] * SEATS
    coop = [0] * SEATS
    for record in sim.interacts:
        for seat, inv in ((record.row, record.row_inv), (record.col, record.col_inv)):
            mass[seat] += sum(inv)
            if variant.coop_token >= 0:
                coop[seat] += inv[variant.coop_token]
    exploitability = indices.exploitability(variant)
    ended = pb.EpisodeEnded(
        reason=reason,
        ending=ENDINGS[reason],
        variant=variant.name,
        beats=sim.beat,
        ticks=sim.tick,
        interactions=indices.interactions,
        convention_counts=[n for row in indices.conventions() for n in row],
    )
    coop_rate = indices.coop_rate(variant)
    if coop_rate is not None:
        ended.coop_rate = coop_rate
    for slot in range(SEATS):
        outcome = ended.seats.add(
            seat=slot + 1,
            score_cp=sim.score[slot],
            interactions=sim.interactions[slot],
            mass=mass[slot],
            coop_mass=coop[slot],
            orders_given=state.orders_given(slot),
        )
        exploitable = exploitability[slot]
        if exploitable is not None:
            outcome.exploitability_cp = exploitable
    return ended


class MatrixGamesRules:
    """Eight seats ordering once per beat; an absent seat is played by its fallback policy."""

    reconnect = ReconnectPolicy(Presence.FALLBACK)
    thinks: tuple[type[Message], ...] = ()  # scripted orders are decided on the spot

    # -- opening -------------------------------------------------------------------------------

    def settings(self, given: Message | None) -> Message | Rejection:
        if given is not None and not isinstance(given, pb.MatrixGamesSettings):
            return Rejection(INVALID_SETTINGS, "not Matrix Games settings")
        try:
            return lobby.check(given)
        except SettingsError as exc:
            return exc.rejection()

    def initial(
        self, match: MatchInfo, settings: Message, service: ServiceSettings
    ) -> MatrixGamesState:
        assert isinstance(settings, pb.MatrixGamesSettings)
        seed = settings.seed if settings.HasField("seed") else None
        return MatrixGamesState(match.seats, wire.engine_settings(settings), seed)

    def start(self, state: MatrixGamesState, inputs: Inputs) -> Decision:
        if state.phase is not Phase.NEW:
            return Rejection("already_started", "the episode has started")
        seed = state.seed if state.seed is not None else inputs.seed & SEED_MASK
        settings = replace(state.settings, seed=seed)
        return [
            pb.EpisodeStarted(
                settings=wire.settings_message(settings, seed=True),
                policy_names=[policy_name(seat) for seat in state.seats],
            )
        ]

    # -- folding -------------------------------------------------------------------------------

    def apply(self, state: MatrixGamesState, event: Message, time_ms: int) -> MatrixGamesState:
        event = wire.unwrapped(event)
        if isinstance(event, pb.EpisodeStarted):
            settings = wire.engine_settings(event.settings)
            sim = Sim(settings, list(event.policy_names), record_frames=False)
            waits = settings.player_connect_timeout_seconds > 0
            return replace(
                state,
                settings=settings,
                seed=settings.seed,
                phase=Phase.CONNECTING if waits else Phase.PLAYING,
                started_ms=time_ms,
                opened_ms=time_ms,
                sim=sim,
            )
        if isinstance(event, pb.SeatJoined):
            joined = state.joined | {event.seat - 1}
            if event.opens_first_beat:
                return replace(state, joined=joined, phase=Phase.PLAYING, opened_ms=time_ms)
            return replace(state, joined=joined)
        if isinstance(event, pb.ConnectWaitEnded):
            return replace(state, phase=Phase.PLAYING, opened_ms=time_ms)
        if isinstance(event, pb.OrderGiven):
            slot = event.seat - 1
            pending = list(state.pending)
            pending[slot] = wire.engine_order(event.order)
            return replace(state, pending=tuple(pending), joined=state.joined | {slot})
        if isinstance(event, pb.BeatPlayed):
            assert state.sim is not None
            orders = tuple(wire.engine_order(order) for order in event.orders)
            sim = state.sim.copy()
            sim.install_orders(orders)
            sim.run_beat()
            return replace(
                state,
                phase=Phase.SETTLING if event.last else Phase.PLAYING,
                opened_ms=time_ms,
                pending=NO_ORDERS,
                played=(*state.played, orders),
                sim=sim,
                before=state.sim,
            )
        if isinstance(event, pb.EpisodeEnded):
            assert state.sim is not None
            sim = state.sim.copy()
            sim.finish(event.reason)
            return replace(state, phase=Phase.OVER, reason=event.reason, sim=sim)
        if isinstance(event, match_pb2.PlayerDisconnected):
            return replace(state, away=state.away | {event.seat - 1})
        if isinstance(event, match_pb2.PlayerReconnected):
            return replace(state, away=state.away - {event.seat - 1})
        return state

    # -- deciding ------------------------------------------------------------------------------

    def decide(
        self, state: MatrixGamesState, seat: int, command: Message, inputs: Inputs
    ) -> Decision:
        try:
            if seat == 0:
                return self._timer(state, command, inputs.now_ms)
            return self._seat(state, seat, command, inputs.now_ms)
        except GameError as exc:
            return exc.rejection()

    def _seat(
        self, state: MatrixGamesState, seat: int, command: Message, now_ms: int
    ) -> list[Message]:
        if not 1 <= seat <= len(state.seats):
            raise _Refused("unknown_seat", f"no seat {seat}")
        slot = seat - 1
        if state.phase is Phase.NEW:
            raise _Refused(NOT_STARTED, "the episode has not started")
        if state.phase in (Phase.SETTLING, Phase.OVER):
            raise _Refused(EPISODE_OVER, "the episode has ended")
        if not state.seats[slot].human:
            raise _Refused(NOT_A_PLAYER_SEAT, f"seat {seat} is played by a scripted policy")
        if isinstance(command, pb.JoinEpisode):
            if slot in state.joined:
                raise _Refused(ALREADY_JOINED, "this seat has joined")
            opens = state.phase is Phase.CONNECTING and state.humans <= state.joined | {slot}
            return [pb.SeatJoined(seat=seat, opens_first_beat=opens)]
        if isinstance(command, pb.GiveOrder):
            return self._order(state, slot, command, now_ms)
        raise _Refused(UNKNOWN_COMMAND, f"{type(command).__name__} is not a Matrix Games command")

    def _order(
        self, state: MatrixGamesState, slot: int, command: pb.GiveOrder, now_ms: int
    ) -> list[Message]:
        if state.phase is not Phase.PLAYING:
            raise _Refused(BEAT_NOT_OPEN, "the connect wait is on: no beat is open yet")
        if command.beat < state.beat:
            raise _Refused(PAST_BEAT, f"beat {command.beat} has been played; {state.beat} is open")
        if command.beat > state.beat:
            raise _Refused(BEAT_NOT_OPEN, f"beat {command.beat} is not open; {state.beat} is")
        if now_ms >= state.deadline_ms:
            raise _Refused(DEADLINE_PASSED, f"orders for beat {state.beat} closed")
        assert state.sim is not None
        order = client_order(command, slot, state.sim, now_ms - state.opened_ms)
        given = pb.OrderGiven(seat=slot + 1, beat=state.beat, order=wire.order_message(order))
        after = self.apply(state, given, now_ms)
        if after.ready and now_ms >= after.earliest_ms:
            return [given, *self._play(after, now_ms)]
        return [given]

    def _timer(self, state: MatrixGamesState, command: Message, now_ms: int) -> list[Message]:
        if isinstance(command, pb.ConnectWaitOver):
            due, command_id = command.deadline_ms, connect_timer_id(command.deadline_ms)
        elif isinstance(command, pb.BeatDue):
            due, command_id = command.due_ms, beat_timer_id(command.beat, command.due_ms)
        else:
            raise _Refused(UNKNOWN_COMMAND, f"{type(command).__name__} is not a timer")
        if command_id not in {timer.command_id for timer in self.timers(state)}:
            raise _Refused(STALE_TIMER, "the deadline moved on")
        if now_ms < due:
            raise _Refused(TIMER_NOT_DUE, "the deadline is not yet due")
        if isinstance(command, pb.BeatDue):
            return self._play(state, now_ms)
        if not state.connected:
            return [final_event(state, "forfeit")]
        return [pb.ConnectWaitEnded(joined=sorted(slot + 1 for slot in state.joined))]

    def _play(self, state: MatrixGamesState, now_ms: int) -> list[Message]:
        """The open beat: scripted seats order by their policy, people as they ordered, the
        engine's fallback for people who did not; then, after the last beat or past the play
        deadline, the end."""
        sim = state.sim
        assert sim is not None
        shared = BeatShared(sim)
        orders: list[Order | None] = []
        for slot, seat in enumerate(state.seats):
            if seat.human:
                orders.append(state.pending[slot])
                continue
            chosen = scripted_order(build_observation(sim, slot, shared), seat.policy)
            orders.append(
                Order(chosen.intent, chosen.token, chosen.target, "scripted", SAYINGS[seat.policy])
            )
        decided = engine_decide(sim, PlayBeat(state.beat, tuple(orders)))
        if isinstance(decided, EngineRejection):
            raise _Refused(decided.code, decided.message)
        complete = state.beat + 1 >= state.settings.beats
        last = complete or now_ms >= state.play_deadline_ms
        played = pb.BeatPlayed(
            beat=state.beat,
            orders=[wire.order_message(order) for order in decided[0].orders],  # type: ignore[union-attr]
            last=last,
        )
        if not last:
            return [played]
        after = self.apply(state, played, now_ms)
        return [played, final_event(after, "complete" if complete else "deadline")]

    # -- deadlines, the end --------------------------------------------------------------------

    def timers(self, state: MatrixGamesState) -> list[Timer]:
        if state.phase is Phase.CONNECTING:
            due = state.connect_deadline_ms
            return [Timer(due, connect_timer_id(due), pb.ConnectWaitOver(deadline_ms=due))]
        if state.phase is Phase.PLAYING:
            due = state.due_ms
            return [
                Timer(due, beat_timer_id(state.beat, due), pb.BeatDue(beat=state.beat, due_ms=due))
            ]
        return []

    def forfeit(self, state: MatrixGamesState, seat: int, inputs: Inputs) -> Decision:
        return Rejection(
            NO_FORFEIT, "a seat that leaves is played by the fallback policy; nobody forfeits"
        )

    def result(self, state: MatrixGamesState) -> Result | None:
        if state.phase is not Phase.OVER:
            return None
        return wire.result_of(final_event(state, state.reason))

    def think(self, state: MatrixGamesState, command: Message, seed: int) -> Thought | None:
        return None  # scripted orders take well under a millisecond: decided on the spot


def connect_timer_id(due_ms: int) -> str:
    return f"timer:connect:{due_ms}"


def beat_timer_id(beat: int, due_ms: int) -> str:
    return f"timer:beat-{beat}:{due_ms}"
