"""Orders of the Digits leaderboards: the season's (with its prizes), the day's, a room's.

Pure functions of entries the services gather (voided games already left out). The season
leaderboard never shares a place (its prizes must go to one player each); the daily leaderboard
and a room's standings give players with the very same line the same place ("1, 2, 2, 4").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from .errors import DigitsError
from .status import CLOSED, LOST, WON


class _Entry(Protocol):
    @property
    def player(self) -> str: ...


T = TypeVar("T", bound=_Entry)

#: Credits by season place 1..10.
SEASON_PRIZES: tuple[int, ...] = (150, 100, 60, 25, 25, 25, 25, 25, 25, 25)
SEASON_MIN_RANKED_GAMES = 8
DAILY_PODIUM = 3


class LeaderboardError(DigitsError):
    """An entry with a duplicate player or a value out of range."""


@dataclass(frozen=True, slots=True)
class Placed(Generic[T]):
    place: int
    entry: T


def _places(entries: Iterable[T], key: Callable[[T], Any], shared: bool) -> list[Placed[T]]:
    """Entries sorted by `key` then by player, placed 1, 2, …; with `shared`, equal keys share
    a place and the next place skips accordingly."""
    rows = sorted(entries, key=lambda e: (key(e), e.player))
    players = [e.player for e in rows]
    if len(set(players)) != len(players):
        raise LeaderboardError("duplicate_player")
    out: list[Placed[T]] = []
    for i, entry in enumerate(rows):
        tied = shared and i > 0 and key(rows[i - 1]) == key(entry)
        out.append(Placed(out[-1].place if tied else i + 1, entry))
    return out


# -- the season -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeasonEntry:
    player: str
    rating: int  # at the season's end, before the next reset
    ranked_combats: int  # in the season
    ranked_games: int  # ranked games finished in the season that count (`ranked_game_counts`)
    since_ms: int  # when the account (or the guest) was created
    guest: bool = False


@dataclass(frozen=True, slots=True)
class SeasonPlace:
    place: int
    player: str
    guest: bool
    rating: int
    ranked_combats: int
    #: The credits this player receives: guests get none, and each prize goes down the
    #: leaderboard to the next account, so the n-th account listed gets the n-th place's prize.
    prize: int


def ranked_game_counts(status: str, reason: str) -> bool:
    """Whether a finished ranked game counts towards the season's minimum: won, lost, or closed
    after its last round; an expired or forfeited game does not (its combats still rated)."""
    return status in (WON, LOST) or (status == CLOSED and reason == "record")


def season_leaderboard(
    entries: Iterable[SeasonEntry],
    min_games: int = SEASON_MIN_RANKED_GAMES,
    prizes: Sequence[int] = SEASON_PRIZES,
) -> list[SeasonPlace]:
    """The players with `min_games` counted games: rating, then most ranked combats, then the
    oldest account, then the player id (never a shared place); prizes to accounts only."""
    eligible = [e for e in entries if e.ranked_games >= min_games]
    placed = _places(eligible, lambda e: (-e.rating, -e.ranked_combats, e.since_ms), False)
    out, accounts = [], 0
    for row in placed:
        entry = row.entry
        prize = 0
        if not entry.guest:
            prize = prizes[accounts] if accounts < len(prizes) else 0
            accounts += 1
        out.append(
            SeasonPlace(
                row.place, entry.player, entry.guest, entry.rating, entry.ranked_combats, prize
            )
        )
    return out


# -- the day ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DailyEntry:
    player: str
    wins: int
    losses: int
    margin: int
    finished_ms: int | None  # None: still playing (listed after every finished game)


def daily_game_counts(status: str, combats: int) -> bool:
    """Whether the day's counted game stays on its leaderboard: not forfeited, and stopped
    after at least one combat."""
    return status != "forfeited" and combats > 0


def daily_leaderboard(entries: Iterable[DailyEntry]) -> list[Placed[DailyEntry]]:
    """Wins, then fewer losses, then margin, then the earliest finish."""

    def key(e: DailyEntry) -> tuple[int, int, int, bool, int]:
        unfinished = e.finished_ms is None
        return (-e.wins, e.losses, -e.margin, unfinished, e.finished_ms or 0)

    return _places(entries, key, True)


def daily_podium(entries: Iterable[DailyEntry]) -> list[Placed[DailyEntry]]:
    """Places 1 to 3 of the day (a distinction, no credits); ties share the podium."""
    return [row for row in daily_leaderboard(entries) if row.place <= DAILY_PODIUM]


# -- a room -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoomEntry:
    player: str
    wins: int
    losses: int  # missed rounds included
    margin: int


def room_standings(entries: Iterable[RoomEntry]) -> list[Placed[RoomEntry]]:
    """Wins, then fewer losses, then margin; no rating."""
    return _places(entries, lambda e: (-e.wins, e.losses, -e.margin), True)
