"""The Digits ghost store (arena_games.digits.ghost_store): what is saved where, who is served
what and under which name, and selection as a function of the store's log and a seed."""

from __future__ import annotations

import pytest
from arena_engine.digits import paris
from arena_engine.digits.ghosts import GhostError
from arena_engine.digits.slate import Digit
from arena_games.digits import wire
from arena_games.digits.ghost_store import (
    GENERAL,
    DayClosed,
    Entry,
    GhostSaved,
    GhostStore,
    GhostsVoided,
    RoomClosed,
    Sharing,
    SharingChanged,
    daily_pool,
    room_armies,
    room_pool,
)
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

T0 = 1_796_115_600_000  # 2026-12-01 10:00 Paris
SLATE = (Digit("plus"), Digit("minus", 2), None, None, None, None, None, None)


def saved(
    owner: str,
    mode: str = "ranked",
    round_no: int = 3,
    record: tuple[int, int] = (1, 1),
    rating: int = 1000,
    game: str = "",
    at: int = T0,
    room: str = "",
) -> GhostSaved:
    closing = pb.ShopClosing(
        round=round_no, slate=wire.slate_to_proto(SLATE), wins=record[0], losses=record[1]
    )
    return GhostSaved.of(
        closing,
        game_id=game or f"g-{owner}",
        owner=owner,
        login=f"{owner}-login",
        mode=mode,
        rating=rating,
        saved_ms=at,
        room_code=room,
    )


def pick(store: GhostStore, mode: str = "ranked", player: str = "me", seed: int = 1) -> pb.Army:
    return store.select(
        mode=mode, round_no=3, record=(1, 1), rating=1000, player=player, seed=seed, now_ms=T0
    )


def test_ranked_casual_and_duel_slates_serve_everyone_tutorial_and_trial_never() -> None:
    store = GhostStore()
    for mode in ("ranked", "casual", "duel"):
        assert store.apply(saved(f"o-{mode}", mode)) is not None
    for mode in ("tutorial", "trial"):
        assert store.apply(saved(f"o-{mode}", mode)) is None
    assert store.served(GENERAL) == 3 and store.position == 5
    owners = {pick(store, seed=s).position for s in range(60)}
    assert owners == {0, 1, 2}


def test_anonymous_by_default_the_login_when_chosen_not_at_all_when_refused() -> None:
    store = GhostStore()
    store.apply(saved("alice"))
    army = pick(store)
    assert army.shown_as == "" and not army.house and army.rating == 1000
    assert wire.slate_of(army.slate) == SLATE and (army.wins, army.losses) == (1, 1)
    store.apply(SharingChanged("alice", Sharing.LOGIN))
    assert pick(store).shown_as == "alice-login"
    store.apply(SharingChanged("alice", Sharing.NONE))
    assert store.served(GENERAL) == 0 and pick(store).house
    store.apply(SharingChanged("alice", Sharing.ANONYMOUS))
    assert pick(store).position == 0


def test_never_your_own_army() -> None:
    store = GhostStore()
    store.apply(saved("me"))
    assert pick(store, player="me").house
    assert not pick(store, player="you").house


def test_a_voided_games_ghosts_leave_the_pools() -> None:
    store = GhostStore()
    store.apply(saved("cheat", game="g9"))
    store.apply(GhostsVoided("g9"))
    assert pick(store).house
    store.apply(SharingChanged("cheat", Sharing.LOGIN))  # changing the preference brings none back
    assert pick(store).house


def test_daily_slates_serve_daily_games_of_the_same_day_first() -> None:
    store = GhostStore()
    store.apply(saved("gen"))
    store.apply(saved("day", "daily"))
    assert store.served(daily_pool(paris.day_key(T0))) == 1
    assert {pick(store, "daily", seed=s).position for s in range(20)} == {1}
    assert {pick(store, "ranked", seed=s).position for s in range(20)} == {0}
    store.apply(DayClosed(paris.day_key(T0 + paris.DAY_MS)))
    assert {pick(store, "daily", seed=s).position for s in range(20)} == {0}


def test_room_slates_serve_only_the_rooms_players_while_it_lasts() -> None:
    store = GhostStore()
    for number, player in enumerate(("a", "b", "c")):
        store.apply(saved(player, "room", room="R1", rating=1000 + number))
    # In no pool a selection draws from: faced in turn by the room's players only.
    assert store.served(GENERAL) == store.served(room_pool("R1")) == 0 and pick(store).house
    store.apply(SharingChanged("a", Sharing.LOGIN))
    store.apply(SharingChanged("b", Sharing.NONE))
    slates = store.room_slates("R1", 3)
    armies = room_armies(["a", "b", "c"], 3, slates, store.sharing, seed=4)
    # Everyone faces another player's slate, each slate once; a's under a's login, b's (who
    # shares nothing outside the room) and c's anonymously.
    shown = {army.rating: army.shown_as for army in armies.values()}
    assert shown == {1000: "a-login", 1001: "", 1002: ""}
    assert all(army.rating != 1000 + "abc".index(p) for p, army in armies.items())
    assert {a.pool for a in armies.values()} == {"room:R1"}
    store.apply(RoomClosed("R1"))
    assert store.room_slates("R1", 3) == {}
    alone = room_armies(["a", "b"], 3, {}, {}, seed=4)
    assert all(a.house for a in alone.values())


def test_selection_is_a_function_of_the_log_position_and_the_seed() -> None:
    log: list[Entry] = [saved(f"o{i}", rating=950 + 10 * i, record=(i % 2, 1)) for i in range(12)]
    log.insert(5, SharingChanged("o3", Sharing.NONE))
    log.insert(9, GhostsVoided("g-o6"))
    live = GhostStore()
    for entry in log[:10]:
        live.apply(entry)
    army = pick(live, seed=42)
    for entry in log[10:]:
        live.apply(entry)  # the store moves on after the choice
    again = GhostStore.from_log(log[: army.store_position])
    assert pick(again, seed=army.seed) == army
    assert army.store_position == 10 and army.seed == 42
    # The bulk build answers as the store fed entry by entry, at every position.
    for upto in range(len(log) + 1):
        fed = GhostStore()
        for entry in log[:upto]:
            fed.apply(entry)
        bulk = GhostStore.from_log(log[:upto])
        for seed in range(8):
            assert pick(bulk, seed=seed) == pick(fed, seed=seed)


def test_a_duels_armies_are_drawn_once_for_both_never_either_players() -> None:
    store = GhostStore()
    for i in range(30):
        store.apply(saved(f"o{i % 5}", round_no=1 + i % 12, record=(0, 0), rating=1000))
    store.apply(saved("p1", round_no=1))
    armies = store.duel((1000, 1010), ("p1", "p2"), seed=8)
    assert len(armies) == 12 and armies == store.duel((1000, 1010), ("p1", "p2"), seed=8)
    assert all(a.round == r for r, a in enumerate(armies, start=1))
    assert all(a.house or store.ghosts[a.position].saved.owner not in ("p1", "p2") for a in armies)


def test_bad_entries_change_nothing() -> None:
    store = GhostStore()
    with pytest.raises(GhostError):
        store.apply(saved("x", "room"))  # a room slate names its room
    with pytest.raises(GhostError):
        store.apply(saved("x", rating=1 << 21))
    with pytest.raises(GhostError):
        store.apply(saved("x", "blitz"))
    assert store.position == 0 and not store.ghosts and store.served(GENERAL) == 0
    with pytest.raises(GhostError):
        store.select(mode="room", round_no=1, record=(0, 0), rating=1, player="p", seed=1, now_ms=0)


def test_a_house_pick_is_left_for_the_game_to_build_a_duels_is_built() -> None:
    store = GhostStore()
    army = pick(store, seed=5)
    assert army.house and not army.slate.cells and army.seed == 5
    assert (army.round, army.wins, army.losses) == (3, 1, 1)
    duel = store.duel((1000, 1000), ("p1", "p2"), seed=8)
    assert all(a.house and len(a.slate.cells) == 8 for a in duel)
