"""Leaderboard orders: the season's with its prizes, the day's and its podium, a room's."""

from __future__ import annotations

import pytest
from arena_engine.digits.leaderboards import (
    SEASON_PRIZES,
    DailyEntry,
    LeaderboardError,
    RoomEntry,
    SeasonEntry,
    daily_game_counts,
    daily_leaderboard,
    daily_podium,
    ranked_game_counts,
    room_standings,
    season_leaderboard,
)
from hypothesis import given
from hypothesis import strategies as st


def season(
    player: str, rating: int, combats: int = 40, games: int = 8, since: int = 0, guest=False
):
    return SeasonEntry(player, rating, combats, games, since, guest)


def test_season_order_rating_then_combats_then_oldest_account() -> None:
    rows = season_leaderboard(
        [
            season("young", 1200, combats=50, since=20),
            season("old", 1200, combats=50, since=10),
            season("busy", 1200, combats=60, since=30),
            season("top", 1300),
            season("few", 1900, games=7),  # 7 ranked games: not listed
        ]
    )
    assert [(r.place, r.player) for r in rows] == [
        (1, "top"),
        (2, "busy"),
        (3, "old"),
        (4, "young"),
    ]
    assert [r.prize for r in rows] == [150, 100, 60, 25]


def test_never_a_shared_place() -> None:
    rows = season_leaderboard([season("b", 1100), season("a", 1100)])
    assert [(r.place, r.player) for r in rows] == [(1, "a"), (2, "b")]


def test_guests_are_listed_and_marked_their_prize_goes_down_to_accounts() -> None:
    entries = [season(f"m{i}", 1500 - 10 * i) for i in range(12)]
    entries.insert(0, season("guest1", 2000, guest=True))
    entries.append(season("guest2", 1495, guest=True))  # between m0 and m1
    rows = season_leaderboard(entries)
    assert rows[0].player == "guest1" and rows[0].guest and rows[0].prize == 0
    assert (rows[1].player, rows[1].prize) == ("m0", 150)  # the guest's prize passed down
    assert (rows[2].player, rows[2].guest, rows[2].prize) == ("guest2", True, 0)
    assert (rows[3].player, rows[3].prize) == ("m1", 100)
    paid = [(r.player, r.prize) for r in rows if r.prize]
    assert [p for _, p in paid] == list(SEASON_PRIZES)
    assert paid[-1][0] == "m9" and rows[-1].prize == 0  # places 11 and 12 of the accounts: none
    assert [r.place for r in rows] == list(range(1, 15))


def test_which_ranked_games_count_towards_the_minimum() -> None:
    assert ranked_game_counts("won", "record") and ranked_game_counts("lost", "record")
    assert ranked_game_counts("closed", "record")  # after the last round
    assert not ranked_game_counts("closed", "expired")
    assert not ranked_game_counts("forfeited", "forfeit")


def test_daily_order_and_podium() -> None:
    entries = [
        DailyEntry("late", 6, 1, 20, 5_000),
        DailyEntry("early", 6, 1, 20, 4_000),
        DailyEntry("margin", 6, 1, 30, 9_000),
        DailyEntry("fewer", 6, 0, -5, 9_000),
        DailyEntry("more", 7, 2, 0, 9_000),
        DailyEntry("playing", 7, 2, 0, None),  # not finished: after every finished game
    ]
    rows = daily_leaderboard(entries)
    assert [r.entry.player for r in rows] == ["more", "playing", "fewer", "margin", "early", "late"]
    assert [r.entry.player for r in daily_podium(entries)] == ["more", "playing", "fewer"]
    assert daily_game_counts("closed", 1) and not daily_game_counts("closed", 0)
    assert not daily_game_counts("forfeited", 5)


def test_the_very_same_line_shares_a_place() -> None:
    entries = [
        DailyEntry("b", 5, 1, 3, 100),
        DailyEntry("a", 5, 1, 3, 100),
        DailyEntry("c", 1, 2, 0, 1),
    ]
    assert [(r.place, r.entry.player) for r in daily_leaderboard(entries)] == [
        (1, "a"),
        (1, "b"),
        (3, "c"),
    ]
    podium = daily_podium([*entries, DailyEntry("d", 1, 2, 0, 1)])
    assert [r.place for r in podium] == [1, 1, 3, 3]


def test_room_standings_wins_then_fewer_losses_then_margin() -> None:
    rows = room_standings(
        [
            RoomEntry("joined_late", 4, 4, 50),  # 3 missed rounds among its losses
            RoomEntry("steady", 4, 3, -10),
            RoomEntry("champ", 6, 2, 5),
            RoomEntry("close", 4, 3, 12),
        ]
    )
    assert [(r.place, r.entry.player) for r in rows] == [
        (1, "champ"),
        (2, "close"),
        (3, "steady"),
        (4, "joined_late"),
    ]


def test_a_player_twice_is_refused() -> None:
    with pytest.raises(LeaderboardError):
        room_standings([RoomEntry("a", 1, 1, 1), RoomEntry("a", 2, 1, 1)])


@given(
    st.lists(
        st.tuples(st.integers(900, 1100), st.integers(0, 3), st.integers(0, 3), st.booleans()),
        max_size=30,
    )
)
def test_season_places_are_unique_and_prizes_only_to_accounts(rows: list[tuple]) -> None:
    entries = [season(f"p{i}", r, c, 8, s, g) for i, (r, c, s, g) in enumerate(rows)]
    placed = season_leaderboard(entries)
    assert [r.place for r in placed] == list(range(1, len(placed) + 1))
    assert all(r.prize == 0 for r in placed if r.guest)
    accounts = [r for r in placed if not r.guest]
    assert [r.prize for r in accounts] == [
        SEASON_PRIZES[i] if i < len(SEASON_PRIZES) else 0 for i in range(len(accounts))
    ]
    keys = [(-r.rating, -r.ranked_combats) for r in placed]
    assert keys == sorted(keys)
