"""The engine contract of docs/architecture.md for Matrix Games: ``decide`` and ``apply``.

Commands come from the match service; events are what its log keeps. The events are the
compact form: the start (settings with the seed, policy names), the eight orders of each beat,
and the end. ``apply`` replays a beat's ticks, so folding the events rebuilds every frame and
the replay exactly. Unlike the small games, the state is a mutable ``Sim`` (a full episode is
too big to copy per event): ``apply`` advances the Sim it is given and returns it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from arena_engine.matrix_games.constants import LEGAL_REASONS, SEATS
from arena_engine.matrix_games.errors import MatrixGamesError
from arena_engine.matrix_games.kernel import Sim
from arena_engine.matrix_games.observation import BeatShared, build_observation
from arena_engine.matrix_games.orders import Order, validate_order
from arena_engine.matrix_games.policies import check_policy, scripted_order
from arena_engine.matrix_games.settings import Settings

#: The policy that stands in for a seat that gave no order (the reference's fallback).
FALLBACK_POLICY = "counter"


# ---- commands ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StartEpisode:
    settings: Settings
    policy_names: tuple[str, ...] = ("",) * SEATS


@dataclass(frozen=True)
class PlayBeat:
    """The orders for the coming beat, by slot; ``None`` for a seat that gave none (it plays
    the fallback policy on its own observation)."""

    beat: int
    orders: tuple[Order | None, ...]


@dataclass(frozen=True)
class EndEpisode:
    """``complete`` after the last beat, or ``deadline`` / ``forfeit`` as the match decides."""

    reason: str


Command: TypeAlias = StartEpisode | PlayBeat | EndEpisode


# ---- events -----------------------------------------------------------------------------


@dataclass(frozen=True)
class EpisodeStarted:
    type: ClassVar[str] = "episode_started"
    settings: dict[str, Any]
    policy_names: tuple[str, ...]


@dataclass(frozen=True)
class BeatPlayed:
    type: ClassVar[str] = "beat_played"
    beat: int
    orders: tuple[Order, ...]


@dataclass(frozen=True)
class EpisodeEnded:
    type: ClassVar[str] = "episode_ended"
    reason: str


Event: TypeAlias = EpisodeStarted | BeatPlayed | EpisodeEnded


@dataclass(frozen=True)
class Rejection:
    """A refused command; nothing changed."""

    code: str
    message: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"error": self.code}


def decide(sim: Sim | None, command: Command) -> list[Event] | Rejection:
    """The events ``command`` causes, or why it is refused. Pure: ``sim`` is only read."""
    try:
        return _decide(sim, command)
    except MatrixGamesError as exc:
        return Rejection(exc.code, str(exc))


def _decide(sim: Sim | None, command: Command) -> list[Event]:
    if isinstance(command, StartEpisode):
        if sim is not None:
            raise MatrixGamesError("already_started", "the episode has already started")
        if len(command.policy_names) != SEATS:
            raise MatrixGamesError("bad_policy_names", "exactly eight policy names are needed")
        return [EpisodeStarted(command.settings.to_json(), tuple(command.policy_names))]
    if sim is None:
        raise MatrixGamesError("not_started", "the episode has not started")
    if sim.done:
        raise MatrixGamesError("episode_over", "the episode has ended")
    if isinstance(command, PlayBeat):
        if command.beat != sim.beat:
            raise MatrixGamesError("wrong_beat", f"the coming beat is {sim.beat}")
        if sim.beat >= sim.settings.beats:
            raise MatrixGamesError("no_beats_left", "every beat has been played")
        if len(command.orders) != SEATS:
            raise MatrixGamesError("wrong_order_count", f"expected {SEATS} orders")
        orders = _with_fallbacks(sim, command.orders)
        for seat, order in enumerate(orders):
            validate_order(order, seat, sim.k)
        return [BeatPlayed(command.beat, tuple(o.cleaned() for o in orders))]
    if isinstance(command, EndEpisode):
        if command.reason not in LEGAL_REASONS:
            raise MatrixGamesError("illegal_reason", f"reason must be one of {LEGAL_REASONS}")
        if command.reason == "complete" and sim.beat < sim.settings.beats:
            raise MatrixGamesError("beats_left", "an episode completes only after its last beat")
        return [EpisodeEnded(command.reason)]
    raise TypeError(f"not a Matrix Games command: {command!r}")


def _with_fallbacks(sim: Sim, orders: tuple[Order | None, ...]) -> list[Order]:
    check_policy(FALLBACK_POLICY)
    shared: BeatShared | None = None
    out: list[Order] = []
    for seat, order in enumerate(orders):
        if order is None:
            shared = shared or BeatShared(sim)
            chosen = scripted_order(build_observation(sim, seat, shared), FALLBACK_POLICY)
            order = Order(chosen.intent, chosen.token, chosen.target, "fallback")
        out.append(order)
    return out


def apply(sim: Sim | None, event: Event) -> Sim:
    """Fold one event: a start builds the Sim; a beat installs its orders and runs its ticks.

    Unlike the other games' ``apply``, this one MUTATES ``sim`` and returns the same object (a
    Sim is too big to copy per event). A caller that needs the state before an event must keep
    the events and fold them again (``replay_episode``), not hold on to the old reference.
    """
    if isinstance(event, EpisodeStarted):
        return Sim(Settings.from_json(event.settings), event.policy_names)
    if sim is None:
        raise MatrixGamesError("not_started", "the first event must be episode_started")
    if isinstance(event, BeatPlayed):
        sim.install_orders(event.orders)
        sim.run_beat()
        return sim
    if isinstance(event, EpisodeEnded):
        sim.finish(event.reason)
        return sim
    raise TypeError(f"not a Matrix Games event: {event!r}")


def event_to_dict(event: Event) -> dict[str, Any]:
    if isinstance(event, EpisodeStarted):
        return {
            "type": event.type,
            "settings": dict(event.settings),
            "policyNames": list(event.policy_names),
        }
    if isinstance(event, BeatPlayed):
        return {
            "type": event.type,
            "beat": event.beat,
            "orders": [o.to_json() for o in event.orders],
        }
    return {"type": event.type, "reason": event.reason}


def event_from_dict(data: dict[str, Any]) -> Event:
    kind = data.get("type")
    if kind == EpisodeStarted.type:
        return EpisodeStarted(dict(data["settings"]), tuple(data["policyNames"]))
    if kind == BeatPlayed.type:
        return BeatPlayed(int(data["beat"]), tuple(Order.from_json(o) for o in data["orders"]))
    if kind == EpisodeEnded.type:
        return EpisodeEnded(str(data["reason"]))
    raise MatrixGamesError("unknown_event", f"not a Matrix Games event type: {kind!r}")
