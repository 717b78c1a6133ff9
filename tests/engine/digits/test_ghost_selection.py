"""Ghost selection: the rules' preferences, the index against the plain list, schedules."""

from __future__ import annotations

from collections import Counter
from itertools import permutations
from typing import Any

import pytest
from arena_engine.digits.ghost_selection import (
    HOUSE,
    RECORD,
    ROUND,
    WINS,
    Ghost,
    GhostError,
    GhostIndex,
    GhostList,
    GhostQuery,
    select_ghost,
)
from arena_engine.digits.ghosts import house_ghost
from arena_engine.digits.schedules import (
    ScheduleError,
    duel_house_record,
    duel_opponents,
    room_opponents,
)
from hypothesis import given, settings
from hypothesis import strategies as st

ME = "me"


def ghost(position: int, wins: int, losses: int, rating: int, owner: str = "x", round_no: int = 5):
    return Ghost(position, owner, round_no, wins, losses, rating)


def pick(ghosts: list[Ghost], query: GhostQuery, seed: int = 1):
    """The index's answer, checked against the plain list's."""
    by_index = select_ghost([GhostIndex.from_ghosts(ghosts)], query, seed)
    assert by_index == select_ghost([GhostList(ghosts)], query, seed)
    return by_index


def query(wins: int = 2, losses: int = 1, rating: int = 1000, round_no: int = 5) -> GhostQuery:
    return GhostQuery(round_no, (wins, losses), rating, frozenset({ME}))


def test_same_record_first_then_same_wins_then_same_round() -> None:
    same_round = ghost(1, 0, 0, 1000)
    same_wins = ghost(2, 2, 0, 1000)
    same_record = ghost(3, 2, 1, 1000)
    assert pick([same_round, same_wins, same_record], query()).position == 3
    assert pick([same_round, same_wins], query()).tier == WINS
    assert pick([same_round], query()).tier == ROUND


def test_within_100_points_then_within_500() -> None:
    near, far = ghost(1, 2, 1, 1100), ghost(2, 2, 1, 1450)
    chosen = pick([near, far], query())
    assert (chosen.position, chosen.tier, chosen.band) == (1, RECORD, 100)
    chosen = pick([far], query())
    assert (chosen.position, chosen.band) == (2, 500)
    # The record comes first: the same record 450 points away beats the same wins 10 away.
    assert pick([far, ghost(3, 2, 0, 1010)], query()).position == 2


def test_past_500_points_or_another_round_a_house_ghost_shown_as_one() -> None:
    out_of_band = ghost(1, 2, 1, 1501)
    other_round = ghost(2, 2, 1, 1000, round_no=6)
    chosen = pick([out_of_band, other_round], query())
    assert chosen.house and chosen.tier == HOUSE and chosen.position is None
    assert (chosen.round_no, chosen.wins, chosen.losses) == (5, 2, 1)
    army = house_ghost(chosen.round_no, chosen.wins, chosen.losses, chosen.seed)
    assert any(d is not None for d in army.slate)


def test_never_the_players_own_army() -> None:
    own = [ghost(i, 2, 1, 1000, owner=ME) for i in range(30)]
    other = ghost(99, 2, 1, 1000)
    for seed in range(40):
        assert pick([*own, other], query(), seed).position == 99
    assert pick(own, query()).house


def test_pools_in_turn_daily_before_general() -> None:
    daily, general = [ghost(1, 0, 0, 1000)], [ghost(2, 2, 1, 1000)]
    pools = [GhostIndex.from_ghosts(daily), GhostIndex.from_ghosts(general)]
    chosen = select_ghost(pools, query(), 3)
    assert (chosen.pool, chosen.position) == (0, 1)
    assert select_ghost([GhostIndex(), pools[1]], query(), 3).pool == 1


def test_the_draw_is_seeded_and_spreads_over_the_tier() -> None:
    ghosts = [ghost(i, 2, 1, 950 + i) for i in range(10)]
    assert pick(ghosts, query(), 7) == pick(ghosts, query(), 7)
    seen = Counter(pick(ghosts, query(), seed).position for seed in range(600))
    assert set(seen) == set(range(10)) and min(seen.values()) > 30


def test_a_tier_across_records_is_drawn_in_the_canonical_order() -> None:
    """The round tier spans several records: buckets by (wins, losses), ratings inside each."""
    ghosts = [ghost(i, i % 4, i % 3, 1000 + (-1) ** i * 7 * i) for i in range(24)]
    q = query(wins=5, losses=0)  # nobody has 5 wins: the whole round is one tier
    drawn = {pick(ghosts, q, seed).position for seed in range(300)}  # index == list each time
    assert drawn == {g.position for g in ghosts if abs(g.rating - 1000) <= 100}


def test_add_and_withdraw_keep_the_index_equal_to_a_bulk_build() -> None:
    ghosts = [ghost(i, i % 3, i % 2, 900 + 7 * i, owner=f"p{i % 4}") for i in range(40)]
    index = GhostIndex()
    for g in reversed(ghosts):
        index.add(g)
    assert len(index) == 40
    with pytest.raises(GhostError):
        index.add(ghosts[0])
    assert index.withdraw(ghosts[5]) and not index.withdraw(ghosts[5])
    rest = [g for g in ghosts if g.position != 5]
    bulk = GhostIndex.from_ghosts(rest)
    for seed in range(30):
        q = query(seed % 3, seed % 2)
        assert select_ghost([index], q, seed) == select_ghost([bulk], q, seed)
        assert select_ghost([index], q, seed) == select_ghost([GhostList(rest)], q, seed)


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (Ghost(-1, "x", 1, 0, 0, 1000), "bad_position"),
        (Ghost(1 << 40, "x", 1, 0, 0, 1000), "bad_position"),
        (Ghost(1, "x", 1, 0, 0, 1 << 21), "bad_rating"),
        (Ghost(1, "x", 0, 0, 0, 1000), "bad_record"),
        (Ghost(1, "x", 2, -1, 0, 1000), "bad_record"),
    ],
)
def test_bad_ghosts_are_refused(bad: Ghost, code: str) -> None:
    with pytest.raises(GhostError) as err:
        GhostIndex().add(bad)
    assert err.value.code == code
    with pytest.raises(GhostError):
        select_ghost([GhostIndex()], GhostQuery(0, None, 1000), 1)


ghosts_st = st.lists(
    st.builds(
        lambda round_no, wins, losses, rating, owner: (round_no, wins, losses, rating, owner),
        st.integers(1, 4),
        st.integers(0, 3),
        st.integers(0, 2),
        st.integers(300, 1700),
        st.sampled_from([ME, ME, "a", "b", "c"]),
    ),
    max_size=80,
)


@settings(max_examples=150, deadline=None)
@given(
    ghosts_st,
    st.integers(1, 4),
    st.none() | st.tuples(st.integers(0, 3), st.integers(0, 2)),
    st.integers(400, 1600),
    st.integers(0, 2**32),
)
def test_the_index_answers_as_the_plain_list(
    rows: list[tuple[int, int, int, int, str]],
    round_no: int,
    record: tuple[int, int] | None,
    rating: int,
    seed: int,
) -> None:
    ghosts = [Ghost(i * 3 + 1, o, r, w, lo, ra) for i, (r, w, lo, ra, o) in enumerate(rows)]
    q = GhostQuery(round_no, record, rating, frozenset({ME}))
    chosen = pick(ghosts, q, seed)
    if chosen.house:
        # Nothing allowed was within 500 points at this round.
        assert not any(
            g.round_no == round_no and g.owner != ME and abs(g.rating - rating) <= 500
            for g in ghosts
        )
    else:
        served = next(g for g in ghosts if g.position == chosen.position)
        assert served.owner != ME and served.round_no == round_no
        assert abs(served.rating - rating) <= (chosen.band or 0)


# -- schedules --------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(2, 9))
def test_a_rooms_players_meet_each_others_armies_in_turn(n: int) -> None:
    players = [f"p{i}" for i in range(n)]
    met: dict[str, set[str]] = {p: set() for p in players}
    for round_no in range(1, n):
        opponents = room_opponents(players, round_no)
        assert sorted(opponents.values()) == sorted(players)  # each army faced once a round
        for player, army in opponents.items():
            assert army != player
            met[player].add(army)
    assert all(met[p] == set(players) - {p} for p in players)
    assert room_opponents(players, n) == room_opponents(players, 1)  # and again


def test_room_schedule_edges() -> None:
    assert room_opponents(["solo"], 3) == {}
    with pytest.raises(ScheduleError):
        room_opponents(["a", "a"], 1)
    with pytest.raises(ScheduleError):
        room_opponents(["a", "b"], 0)


def test_duel_opponents_drawn_once_for_both_never_their_own() -> None:
    ghosts = [
        Ghost(i, owner, round_no, 0, 0, 1000)
        for i, (round_no, owner) in enumerate(
            (r, o) for r in range(1, 13) for o in ("alice", "bob", "carol")
        )
    ]
    pools = [GhostIndex.from_ghosts(ghosts[:-3])]  # nobody else at round 12
    picks = duel_opponents(pools, (1000, 1100), ("alice", "bob"), seed=5)
    assert picks == duel_opponents(pools, (1100, 1000), ("alice", "bob"), seed=5)
    assert [p.round_no for p in picks] == list(range(1, 13))
    assert all(p.owner == "carol" for p in picks[:11])
    assert picks[11].house and (picks[11].wins, picks[11].losses) == duel_house_record(12)
    with pytest.raises(ScheduleError):
        duel_opponents(pools, (1000, 1000), ("alice", "alice"), seed=5)


def test_duel_house_records_are_records_of_that_round() -> None:
    for round_no in range(1, 13):
        wins, losses = duel_house_record(round_no)
        assert wins + losses <= round_no - 1 and losses < 3
        house_ghost(round_no, wins, losses, "duel")  # accepted by the house ghost builder


def test_room_opponents_is_a_derangement_for_every_order() -> None:
    for players in permutations(["a", "b", "c", "d"]):
        for round_no in (1, 2, 3):
            assert all(k != v for k, v in room_opponents(list(players), round_no).items())


def _shape(index: GhostIndex) -> dict[int, list[tuple[int, int, list[int], list[str]]]]:
    """An index as what it holds: per round, each bucket's record, keys and owners by name."""
    return {
        round_no: [
            (b.wins, b.losses, list(b.keys), [index.owner_names[o] for o in b.owners])
            for b in buckets
        ]
        for round_no, buckets in sorted(index.rounds.items())
    }


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 12),
            st.integers(0, 11),
            st.integers(0, 2),
            st.integers(-(1 << 20), (1 << 20) - 1),
            st.sampled_from(["a", "b", "c", ME, "d" * 40]),
        ),
        max_size=120,
    )
)
def test_the_bulk_build_holds_what_adding_one_by_one_holds(
    rows: list[tuple[int, int, int, int, str]],
) -> None:
    ghosts = [Ghost(3 * i + 1, o, r, w, lo, rating) for i, (r, w, lo, rating, o) in enumerate(rows)]
    one_by_one = GhostIndex()
    for g in ghosts:
        one_by_one.add(g)
    bulk = GhostIndex.from_columns(
        [g.position for g in ghosts],
        [g.owner for g in ghosts],
        [g.round_no for g in ghosts],
        [g.wins for g in ghosts],
        [g.losses for g in ghosts],
        [g.rating for g in ghosts],
    )
    assert _shape(bulk) == _shape(one_by_one) and len(bulk) == len(one_by_one) == len(ghosts)
    assert bulk.owner_names == one_by_one.owner_names
    for seed in range(5):
        for round_no in (1, 6, 12):
            q = GhostQuery(round_no, (seed % 3, seed % 2), 1000, frozenset({ME}))
            assert select_ghost([bulk], q, seed) == select_ghost([one_by_one], q, seed)
    # The bulk-built index takes adds and withdrawals like any other.
    extra = Ghost(10**6, "z", 3, 1, 1, 1000)
    bulk.add(extra)
    one_by_one.add(extra)
    assert _shape(bulk) == _shape(one_by_one)


@pytest.mark.parametrize(
    ("columns", "code"),
    [
        (([1, 2], ["a"], [1, 1], [0, 0], [0, 0], [1000, 1000]), "bad_columns"),
        (([1, 1], ["a", "b"], [1, 1], [0, 0], [0, 0], [1000, 1000]), "duplicate_position"),
        (([-1], ["a"], [1], [0], [0], [1000]), "bad_position"),
        (([1 << 40], ["a"], [1], [0], [0], [1000]), "bad_position"),
        (([1], ["a"], [1], [0], [0], [1 << 20]), "bad_rating"),
        (([1], ["a"], [0], [0], [0], [1000]), "bad_record"),
        (([1], ["a"], [1], [256], [0], [1000]), "bad_record"),
        (([1], ["a"], [1], [0], [-1], [1000]), "bad_record"),
    ],
)
def test_the_bulk_build_refuses_bad_columns(columns: tuple[list[Any], ...], code: str) -> None:
    with pytest.raises(GhostError) as err:
        GhostIndex.from_columns(*columns)
    assert err.value.code == code
    assert len(GhostIndex.from_columns([], [], [], [], [], [])) == 0
