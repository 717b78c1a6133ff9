"""Episodes: the beat loop, and the compact event form (seed + orders per beat).

An ``EpisodeLog`` is what Arena keeps in its event log. Every frame, event, index and the
whole replay are regenerated from it by ``replay_episode``; nothing random remains after the
seed, so the regeneration is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena_engine.matrix_games.constants import LEGAL_REASONS, SEATS
from arena_engine.matrix_games.errors import MatrixGamesError
from arena_engine.matrix_games.kernel import Sim
from arena_engine.matrix_games.observation import BeatShared, build_observation
from arena_engine.matrix_games.orders import Order
from arena_engine.matrix_games.policies import SAYINGS, check_policy, scripted_order
from arena_engine.matrix_games.settings import Settings


@dataclass
class EpisodeLog:
    """Settings (with the seed), the seats' policy names, the orders of every beat played and,
    once the episode has ended, its reason."""

    settings: Settings
    policy_names: list[str]
    beats: list[list[Order]] = field(default_factory=list)
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_json(),
            "policyNames": list(self.policy_names),
            "beats": [[o.to_json() for o in orders] for orders in self.beats],
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EpisodeLog:
        try:
            return cls(
                settings=Settings.from_json(dict(data["settings"])),
                policy_names=[str(n) for n in data["policyNames"]],
                beats=[[Order.from_json(o) for o in orders] for orders in data["beats"]],
                reason=data.get("reason"),
            )
        except (KeyError, TypeError) as exc:
            raise MatrixGamesError("malformed_episode", f"malformed episode log: {exc}") from exc


def play_beat(sim: Sim, orders: Sequence[Order]) -> None:
    """Install one beat's orders and run its ticks."""
    sim.install_orders(orders)
    sim.run_beat()


def replay_episode(log: EpisodeLog, *, record_frames: bool = True) -> Sim:
    """Rebuild an episode from its compact form."""
    if len(log.beats) > log.settings.beats:
        raise MatrixGamesError("too_many_beats", "more beats of orders than the settings allow")
    if log.reason is not None and log.reason not in LEGAL_REASONS:
        raise MatrixGamesError("illegal_reason", f"reason must be one of {LEGAL_REASONS}")
    sim = Sim(log.settings, log.policy_names, record_frames=record_frames)
    for orders in log.beats:
        play_beat(sim, orders)
    if log.reason == "complete":
        sim.settle_complete()
    elif log.reason is not None:
        sim.finish(log.reason)
    return sim


def scripted_orders(sim: Sim, policies: Sequence[str]) -> list[Order]:
    """The eight scripted decisions for the coming beat, each from its seat's observation."""
    shared = BeatShared(sim)
    return [
        _with_say(scripted_order(build_observation(sim, s, shared), policies[s]), policies[s])
        for s in range(SEATS)
    ]


def _with_say(order: Order, policy: str) -> Order:
    return Order(order.intent, order.token, order.target, "scripted", SAYINGS[policy])


def run_scripted(sim: Sim, policies: Sequence[str], *, log: EpisodeLog | None = None) -> Sim:
    """Play the remaining beats of ``sim`` with eight scripted seats and settle it
    ``complete``. When ``log`` is given, each beat's orders are appended to it."""
    if len(policies) != SEATS:
        raise MatrixGamesError("bad_policies", "exactly eight policies are needed")
    for name in policies:
        check_policy(name)
    while sim.beat < sim.settings.beats and not sim.done:
        orders = scripted_orders(sim, policies)
        if log is not None:
            log.beats.append(orders)
        play_beat(sim, orders)
    sim.settle_complete()
    if log is not None:
        log.reason = sim.reason
    return sim


def play_scripted(
    settings: Settings,
    policies: Sequence[str],
    *,
    record_frames: bool = True,
    log: EpisodeLog | None = None,
) -> Sim:
    """A full episode of eight scripted seats, ending ``complete``."""
    sim = Sim(settings, list(policies), record_frames=record_frames)
    return run_scripted(sim, policies, log=log)
