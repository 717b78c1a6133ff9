"""The Digits ladder: Elo per ranked combat, K by season, season resets, voided games taken back."""

from __future__ import annotations

import pytest
from arena_engine.digits import ladder as lad
from arena_engine.digits.ladder import (
    CombatRated,
    LadderError,
    SeasonReset,
    Standing,
    enter_season,
    fold,
    rate_combat,
    rating_in_season,
    take_back,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def rate(
    events: list[lad.LadderEvent], player: str, game: str, season: str, army: int, result: str
):
    standing = fold(events).get(player, Standing())
    new = rate_combat(standing, player, game, 1, season, army, result)
    events.extend(new)
    return new


def test_a_ranked_combat_against_a_frozen_army_of_the_same_rating() -> None:
    for result, delta in (("win", 6), ("draw", -6), ("loss", -18)):
        events: list[lad.LadderEvent] = []
        (rated,) = rate(events, "ann", "g1", "2024-03", 1000, result)
        assert isinstance(rated, CombatRated) and rated.after - rated.before == delta
        assert rated.k == 24
    assert set(fold(events)) == {"ann"}  # the army's owner is not on the ladder for it


def test_k_is_24_for_the_seasons_first_30_combats_then_16() -> None:
    events: list[lad.LadderEvent] = []
    for i in range(31):
        (rated,) = rate(events, "ann", f"g{i // 10}", "2024-03", 1000, "draw")
        assert rated.k == (24 if i < 30 else 16)
    assert fold(events)["ann"].season_combats == 31
    new = rate(events, "ann", "g9", "2024-04", 1000, "draw")
    assert isinstance(new[0], SeasonReset) and new[1].k == 24
    assert fold(events)["ann"].season_combats == 1


def test_the_season_reset_happens_once_even_after_months_idle() -> None:
    events: list[lad.LadderEvent] = []
    rate(events, "ann", "g1", "2024-01", 2200, "win")
    rating = fold(events)["ann"].rating
    standing = fold(events)["ann"]
    assert rating_in_season(standing, "2024-05") == 1000 + round((rating - 1000) / 2)
    new = rate(events, "ann", "g2", "2024-05", 1000, "draw")
    assert new[0] == SeasonReset("ann", "2024-05", rating, rating_in_season(standing, "2024-05"))
    assert len([e for e in events if isinstance(e, SeasonReset)]) == 1
    assert enter_season(fold(events)["ann"], "ann", "2024-05") == []  # once
    assert enter_season(Standing(), "new", "2024-05") == []  # never rated: nothing to reset


def test_bad_combats_are_refused() -> None:
    with pytest.raises(LadderError) as err:
        rate_combat(Standing(), "ann", "g", 1, "2024-01", 1000, "won")
    assert err.value.code == "bad_result"
    with pytest.raises(LadderError) as err:
        rate_combat(Standing(1000, "2024-05", 3), "ann", "g", 1, "2024-04", 1000, "win")
    assert err.value.code == "past_season"


def test_a_voided_game_is_taken_back_by_a_compensating_event() -> None:
    events: list[lad.LadderEvent] = []
    rate(events, "ann", "clean", "2024-03", 1000, "win")
    for _ in range(5):
        rate(events, "ann", "bot", "2024-03", 1000, "win")
    rate(events, "ann", "later", "2024-03", 1300, "loss")
    rate(events, "bob", "other", "2024-03", 1000, "win")
    history = list(events)
    (back,) = take_back(events, {"bot"})
    assert back.player == "ann" and back.games == ("bot",)
    assert events == history  # the log is not edited
    clean: list[lad.LadderEvent] = []
    rate(clean, "ann", "clean", "2024-03", 1000, "win")
    rate(clean, "ann", "later", "2024-03", 1300, "loss")
    rate(clean, "bob", "other", "2024-03", 1000, "win")
    assert fold([*events, back]) == fold(clean)
    assert back.after == fold(clean)["ann"].rating and back.season_combats_after == 2
    assert take_back([*events, back], {"bot"}) == []  # taken back once


def test_a_player_left_with_no_combat_goes_back_to_a_fresh_standing() -> None:
    events: list[lad.LadderEvent] = []
    rate(events, "ann", "bot", "2024-03", 1000, "win")
    events += enter_season(fold(events)["ann"], "ann", "2024-04")
    (back,) = take_back(events, {"bot"})
    assert fold([*events, back])["ann"] == Standing()


def test_taking_back_early_combats_gives_later_ones_their_k_of_24_again() -> None:
    events: list[lad.LadderEvent] = []
    for i in range(30):
        rate(events, "ann", "bot" if i < 5 else "clean", "2024-03", 1000, "draw")
    (late,) = rate(events, "ann", "late", "2024-03", 1000, "win")
    assert isinstance(late, CombatRated) and late.k == 16
    clean: list[lad.LadderEvent] = []
    for _ in range(25):
        rate(clean, "ann", "clean", "2024-03", 1000, "draw")
    (again,) = rate(clean, "ann", "late", "2024-03", 1000, "win")
    assert isinstance(again, CombatRated) and again.k == 24
    for log in (events, clean):  # the 31st combat of the rebuilt season is back to K 16
        for _ in range(10):
            rate(log, "ann", "after", "2024-03", 1000, "loss")
    events += take_back(events, {"bot"})
    assert fold(events) == fold(clean)


def test_a_take_back_that_moves_no_point_still_takes_the_combat_back() -> None:
    events: list[lad.LadderEvent] = []
    (draw,) = rate(events, "ann", "bot", "2024-03", 1190, "draw")
    rate(events, "ann", "clean", "2024-03", 1000, "win")
    assert isinstance(draw, CombatRated) and draw.after == draw.before  # E = 0.5: no change
    (back,) = take_back(events, {"bot"})
    assert back.before == back.after and back.season_combats_after == 1
    assert fold([*events, back])["ann"].season_combats == 1


def test_entering_a_past_season_resets_nothing() -> None:
    assert enter_season(Standing(1400, "2024-05", 3), "ann", "2024-04") == []


players = st.sampled_from(["ann", "bob", "cid"])
actions = st.one_of(
    st.tuples(
        st.just("combat"),
        players,
        st.integers(0, 5),  # game number of that player
        st.sampled_from(["win", "draw", "loss"]),
        st.integers(600, 1800),
    ),
    st.tuples(st.just("month")),
)


def run(script: list[tuple], voided: frozenset[str]) -> list[lad.LadderEvent]:
    """The ladder a script makes, skipping the combats of `voided` games. Every month opens with
    a sweep (each rated player enters the season); a combat may also come before it."""
    events: list[lad.LadderEvent] = []
    month = 1
    for action in script:
        if action[0] == "month":
            month += 1
            standings = fold(events)
            for player in sorted(standings):
                events += enter_season(standings[player], player, f"2024-{month:02d}")
            continue
        _, player, game, result, army = action
        game_id = f"{player}-{game}"
        if game_id not in voided:
            rate(events, player, game_id, f"2024-{month:02d}", army, result)
    return events


@settings(max_examples=200, deadline=None)
@given(
    st.lists(actions, max_size=60).filter(lambda s: sum(a[0] == "month" for a in s) <= 10),
    st.sets(st.tuples(players, st.integers(0, 5)), max_size=4),
    st.sets(st.tuples(players, st.integers(0, 5)), max_size=2),
)
def test_rebuilt_ladder_equals_the_ladder_without_the_voided_games(
    script: list[tuple], first: set[tuple[str, int]], second: set[tuple[str, int]]
) -> None:
    voided = frozenset(f"{p}-{g}" for p, g in first)
    events = run(script, frozenset())
    events += take_back(events, voided)
    assert lad.standings_equal(fold(events), fold(run(script, voided)))
    # Voiding more later: the take-backs add up, still never editing what was written.
    more = voided | {f"{p}-{g}" for p, g in second}
    written = list(events)
    events += take_back(events, more)
    assert events[: len(written)] == written
    assert lad.standings_equal(fold(events), fold(run(script, more)))
    assert take_back(events, more) == []
