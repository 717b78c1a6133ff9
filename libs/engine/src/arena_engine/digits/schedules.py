"""Opponents fixed in advance: a duel's, drawn at acceptance, and a room's, in turn."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import DigitsError
from .ghost_selection import GhostPick, GhostPool, GhostQuery, select_ghost
from .settings import DEFAULT_SETTINGS, DigitsSettings


class ScheduleError(DigitsError):
    """A duel or room schedule asked for with bad players or rounds."""


def duel_house_record(
    round_no: int, settings: DigitsSettings = DEFAULT_SETTINGS
) -> tuple[int, int]:
    """The record a duel's house ghost is built for, the players' records being unknown at
    acceptance: two thirds of the rounds before won, the rest lost up to one short of the
    loss limit (a good player's record)."""
    played = round_no - 1
    wins = 2 * played // 3
    return wins, min(settings.loss_limit - 1, played - wins)


def duel_opponents(
    pools: Sequence[GhostPool],
    ratings: tuple[int, int],
    owners: tuple[str, str],
    seed: int | str,
    settings: DigitsSettings = DEFAULT_SETTINGS,
) -> tuple[GhostPick, ...]:
    """Every round's opponent of a duel, drawn once when it is accepted and the same for both
    players: any record of the round, a rating near the two players' mean, never an army of
    either player. Round r is drawn from the seed's stream for round r."""
    if owners[0] == owners[1]:
        raise ScheduleError("same_player")
    rating = (ratings[0] + ratings[1]) // 2
    excluded = frozenset(owners)
    return tuple(
        select_ghost(
            pools,
            GhostQuery(round_no, None, rating, excluded),
            seed,
            house_record=duel_house_record(round_no, settings),
        )
        for round_no in range(1, settings.max_rounds + 1)
    )


def room_opponents(players: Sequence[str], round_no: int) -> dict[str, str]:
    """Whose army each player of a room faces at `round_no`: with the players in the order they
    joined, player i faces player (i + s) mod n, the shift s running 1, 2, …, n − 1 and again
    with the rounds. Each army is faced exactly once a round, and each player meets every other
    one in turn. Fewer than two players: nobody (the room's lone player faces a house ghost)."""
    if round_no < 1:
        raise ScheduleError("bad_round")
    if len(set(players)) != len(players):
        raise ScheduleError("duplicate_player")
    n = len(players)
    if n < 2:
        return {}
    shift = 1 + (round_no - 1) % (n - 1)
    return {player: players[(i + shift) % n] for i, player in enumerate(players)}
