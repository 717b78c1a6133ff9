"""The Digits ghost store: every end-of-shop slate saved as a ghost, and the army each game faces.

Pure library code for the service that keeps the store (matchmaking): it is fed the store's log
in order and answers selections; it reads no clock and draws nothing of its own. The log's
entries (:data:`Entry`) are:

- ``GhostSaved``: a game's ``ShopClosing`` (its end-of-shop slate and record) with the owner,
  their login, their rating then, the mode, the game and the time. Ranked, casual and duel
  slates go to the general pool; daily slates to that Paris day's pool, served to daily games of
  the same day only (they try it first, then the general pool); room slates to the room's pool,
  served only to its players while it lasts; tutorial and trial slates are never saved.
- ``SharingChanged``: an owner's preference (an account setting): ``login`` (served under their
  login), ``anonymous`` (the default) or ``none`` (not served: withdrawn from every pool). In a
  room the slates are faced in turn, not selected (:meth:`GhostStore.room_slates`,
  :func:`room_armies`): under the login if chosen, anonymous otherwise, ``none`` included.
- ``GhostsVoided``: a voided game's ghosts leave every pool.
- ``RoomClosed`` and ``DayClosed``: a room's pool, or the daily pools of the days before, go.

A ghost's ``position`` is the log position of its ``GhostSaved`` (its identity); the store's
``position`` is the number of entries applied. Selection (:meth:`GhostStore.select`) is the
engine's (``ghost_selection.select_ghost``: same round; same record, then same wins, then any
record; within 100 rating points, then 500; never the player's own; else a house ghost shown as
one), a deterministic function of the store's log up to its position and the seed: rebuilding
the store from the first ``store_position`` entries (``GhostStore.from_log``) and selecting
again with the recorded seed gives the same army, which is how ``arena verify`` re-decides it.
The army says how it was chosen (``Army.position``, ``pool``, ``tier``, ``store_position``,
``seed``). ``from_log`` builds every pool's index in bulk (``GhostIndex.from_columns``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from arena_engine.digits import DEFAULT_SETTINGS, DigitsSettings, paris
from arena_engine.digits.ghost_selection import (
    HOUSE,
    Ghost,
    GhostIndex,
    GhostPick,
    GhostQuery,
    select_ghost,
)
from arena_engine.digits.ghosts import GhostError as GhostError  # re-exported: its refusals
from arena_engine.digits.ghosts import house_ghost
from arena_engine.digits.schedules import duel_opponents, room_opponents
from arena_engine.digits.slate import Slate

from arena_games.digits import wire
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

GENERAL = "general"
#: Modes whose slates are saved, and the modes that face stored ghosts.
GENERAL_MODES = ("ranked", "casual", "duel")
NEVER_SAVED = ("tutorial", "trial")
#: Modes whose game waits for the store's army (the others: a room's turns, a duel's schedule).
DRAWN_FROM_STORE = ("ranked", "casual", "daily")
SEED_MASK = (1 << 63) - 1


class Sharing(StrEnum):
    LOGIN = "login"
    ANONYMOUS = "anonymous"
    NONE = "none"


DEFAULT_SHARING = Sharing.ANONYMOUS


def day_of(epoch_ms: int) -> str:
    """The Paris day (YYYY-MM-DD) of an instant: a daily slate's pool."""
    return paris.day_key(epoch_ms)


def daily_pool(day: str) -> str:
    return f"daily:{day}"


def room_pool(code: str) -> str:
    return f"room:{code}"


def pool_of(mode: str, saved_ms: int, room_code: str = "") -> str | None:
    """The pool a slate of this mode is saved to; None: never saved."""
    if mode in GENERAL_MODES:
        return GENERAL
    if mode == "daily":
        return daily_pool(paris.day_key(saved_ms))
    if mode == "room":
        if not room_code:
            raise GhostError("no_room")
        return room_pool(room_code)
    if mode in NEVER_SAVED:
        return None
    raise GhostError("unknown_mode")


# -- the log ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GhostSaved:
    game_id: str
    owner: str
    login: str
    mode: str
    rating: int
    saved_ms: int
    round_no: int
    wins: int
    losses: int
    slate: Slate
    room_code: str = ""

    @classmethod
    def of(
        cls,
        closing: pb.ShopClosing,
        *,
        game_id: str,
        owner: str,
        login: str,
        mode: str,
        rating: int,
        saved_ms: int,
        room_code: str = "",
    ) -> GhostSaved:
        """The entry of a game's ShopClosing event."""
        return cls(
            game_id,
            owner,
            login,
            mode,
            rating,
            saved_ms,
            closing.round,
            closing.wins,
            closing.losses,
            wire.slate_of(closing.slate),
            room_code,
        )


@dataclass(frozen=True, slots=True)
class SharingChanged:
    owner: str
    sharing: Sharing


@dataclass(frozen=True, slots=True)
class GhostsVoided:
    game_id: str


@dataclass(frozen=True, slots=True)
class RoomClosed:
    room_code: str


@dataclass(frozen=True, slots=True)
class DayClosed:
    """Daily pools of days before ``day`` (``YYYY-MM-DD``, Paris) are dropped."""

    day: str


Entry = GhostSaved | SharingChanged | GhostsVoided | RoomClosed | DayClosed


def entry_of(message: object) -> Entry | None:
    """The store's entry of an event of its stream (``ghosts-digits``); None for the other
    events there (``ArmyDrawn``, a rejection), which are not entries."""
    if isinstance(message, pb.GhostFiled):
        closing = message.closing
        return GhostSaved.of(
            closing,
            game_id=message.match_id,
            owner=closing.player_id,
            login=closing.login,
            mode=closing.mode,
            rating=message.rating,
            saved_ms=message.saved_ms,
            room_code=closing.room_code,
        )
    if isinstance(message, pb.GhostSharingSet):
        return SharingChanged(message.player_id, Sharing(message.sharing))
    if isinstance(message, pb.GhostsWithdrawn):
        if message.match_id:
            return GhostsVoided(message.match_id)
        if message.room_code:
            return RoomClosed(message.room_code)
        return DayClosed(message.day)
    return None


@dataclass(frozen=True, slots=True)
class StoredGhost:
    position: int
    pool: str
    saved: GhostSaved

    @property
    def ghost(self) -> Ghost:
        s = self.saved
        return Ghost(self.position, s.owner, s.round_no, s.wins, s.losses, s.rating)


def check(entry: Entry | None) -> None:
    """GhostError if ``entry`` could not be applied (a GhostSaved's mode, room, record,
    rating or slate), so a service refuses it before it is in the store's log."""
    if isinstance(entry, GhostSaved):
        pool = pool_of(entry.mode, entry.saved_ms, entry.room_code)
        if pool is not None:
            GhostIndex().add(StoredGhost(0, pool, entry).ghost)


# -- the store --------------------------------------------------------------------------------


class GhostStore:
    """The store's state after its log up to ``position``."""

    def __init__(self, settings: DigitsSettings = DEFAULT_SETTINGS) -> None:
        self.settings = settings
        self.position = 0
        self.ghosts: dict[int, StoredGhost] = {}
        self.sharing: dict[str, Sharing] = {}
        self.voided: set[str] = set()
        self.pools: dict[str, GhostIndex] = {}
        self._by_owner: dict[str, list[int]] = {}
        self._by_game: dict[str, list[int]] = {}

    # -- feeding ---------------------------------------------------------------------------------

    def apply(self, entry: Entry) -> StoredGhost | None:
        """One entry of the log; a GhostSaved returns its ghost (None when its mode is never
        saved). Entries are facts: a bad one raises GhostError before anything changes."""
        position = self.position
        if isinstance(entry, GhostSaved):
            stored = self._save(entry, position)
        else:
            stored = None
            self._other(entry)
        self.position = position + 1
        return stored

    def _save(self, entry: GhostSaved, position: int) -> StoredGhost | None:
        pool = pool_of(entry.mode, entry.saved_ms, entry.room_code)
        if pool is None:
            return None
        stored = StoredGhost(position, pool, entry)
        ghost = stored.ghost
        if self._served(stored):
            self.pools.setdefault(pool, GhostIndex()).add(ghost)  # checks the ghost first
        else:
            GhostIndex().add(ghost)  # the same checks
        self.ghosts[position] = stored
        self._by_owner.setdefault(entry.owner, []).append(position)
        self._by_game.setdefault(entry.game_id, []).append(position)
        return stored

    def _served(self, stored: StoredGhost) -> bool:
        if stored.saved.game_id in self.voided:
            return False
        if stored.pool.startswith("room:"):
            return False  # a room's players meet each other's slates in turn (room_slates)
        return self.sharing_of(stored.saved.owner) is not Sharing.NONE

    def _other(self, entry: Entry) -> None:
        if isinstance(entry, SharingChanged):
            before = [p for p in self._by_owner.get(entry.owner, ()) if self._live(p)]
            self.sharing[entry.owner] = Sharing(entry.sharing)
            for position in before:
                self._reindex(position)
        elif isinstance(entry, GhostsVoided):
            self.voided.add(entry.game_id)
            for position in self._by_game.get(entry.game_id, ()):
                self._reindex(position)
        elif isinstance(entry, RoomClosed):
            self._drop(lambda pool: pool == room_pool(entry.room_code))
        elif isinstance(entry, DayClosed):
            cut = daily_pool(entry.day)
            self._drop(lambda pool: pool.startswith("daily:") and pool < cut)

    def _live(self, position: int) -> bool:
        return position in self.ghosts

    def _reindex(self, position: int) -> None:
        stored = self.ghosts[position]
        index = self.pools.get(stored.pool)
        served = self._served(stored)
        if index is not None:
            index.withdraw(stored.ghost)
        if served:
            self.pools.setdefault(stored.pool, GhostIndex()).add(stored.ghost)

    def _drop(self, gone: Callable[[str], bool]) -> None:
        for pool in [p for p in self.pools if gone(p)]:
            del self.pools[pool]
        for position in [p for p, g in self.ghosts.items() if gone(g.pool)]:
            stored = self.ghosts.pop(position)
            self._by_owner[stored.saved.owner].remove(position)
            self._by_game[stored.saved.game_id].remove(position)

    @classmethod
    def from_log(
        cls, entries: Iterable[Entry], settings: DigitsSettings = DEFAULT_SETTINGS
    ) -> GhostStore:
        """The store after ``entries`` (its log from the start), every pool's index built in
        bulk at the end: what a service does when it starts, and what ``arena verify`` does up
        to a recorded ``store_position``."""
        store = cls(settings)
        for entry in entries:
            if isinstance(entry, GhostSaved):
                pool = pool_of(entry.mode, entry.saved_ms, entry.room_code)
                if pool is not None:
                    store.ghosts[store.position] = StoredGhost(store.position, pool, entry)
                    store._by_owner.setdefault(entry.owner, []).append(store.position)
                    store._by_game.setdefault(entry.game_id, []).append(store.position)
            elif isinstance(entry, SharingChanged):
                store.sharing[entry.owner] = Sharing(entry.sharing)
            elif isinstance(entry, GhostsVoided):
                store.voided.add(entry.game_id)
            else:
                store._other(entry)  # drops ghosts (there is no index to keep yet)
            store.position += 1
        served: dict[str, list[StoredGhost]] = {}
        for stored in store.ghosts.values():
            if store._served(stored):
                served.setdefault(stored.pool, []).append(stored)
        store.pools = {
            pool: GhostIndex.from_columns(
                [g.position for g in ghosts],
                [g.saved.owner for g in ghosts],
                [g.saved.round_no for g in ghosts],
                [g.saved.wins for g in ghosts],
                [g.saved.losses for g in ghosts],
                [g.saved.rating for g in ghosts],
            )
            for pool, ghosts in served.items()
        }
        return store

    # -- reading ---------------------------------------------------------------------------------

    def sharing_of(self, owner: str) -> Sharing:
        return self.sharing.get(owner, DEFAULT_SHARING)

    def filed(self, game_id: str, round_no: int) -> bool:
        """Whether the game's slate of that round is in the store (a command repeated after
        its answer was forgotten files nothing twice)."""
        return any(
            self.ghosts[p].saved.round_no == round_no for p in self._by_game.get(game_id, ())
        )

    def last_rating(self, owner: str, default: int) -> int:
        """The rating the owner's latest ghost was saved with (``default`` if none)."""
        positions = self._by_owner.get(owner)
        return self.ghosts[positions[-1]].saved.rating if positions else default

    def served(self, pool: str) -> int:
        index = self.pools.get(pool)
        return 0 if index is None else len(index)

    def pools_for(self, mode: str, now_ms: int) -> list[tuple[str, GhostIndex]]:
        """The pools a game of ``mode`` draws from at ``now_ms``, in turn."""
        names = [GENERAL]
        if mode == "daily":
            names.insert(0, daily_pool(paris.day_key(now_ms)))
        elif mode not in ("ranked", "casual", "duel"):
            raise GhostError("no_store_opponents")
        return [(name, self.pools.get(name) or GhostIndex()) for name in names]

    def select(
        self,
        *,
        mode: str,
        round_no: int,
        record: tuple[int, int],
        rating: int,
        player: str,
        seed: int,
        now_ms: int,
    ) -> pb.Army:
        """The army a ranked, casual or daily game faces at ``round_no`` (casual too is matched
        by rating), or a house ghost shown as one."""
        pools = self.pools_for(mode, now_ms)
        query = GhostQuery(round_no, record, rating, frozenset({player}))
        pick = select_ghost([index for _, index in pools], query, seed)
        return self.army(pick, [name for name, _ in pools])

    def room_slates(self, room_code: str, round_no: int) -> dict[str, GhostSaved]:
        """The slates a room's players saved at ``round_no`` (the last one of each), for
        :func:`room_armies`; nothing once the room closed."""
        pool = room_pool(room_code)
        out: dict[str, GhostSaved] = {}
        for stored in self.ghosts.values():
            if stored.pool == pool and stored.saved.round_no == round_no:
                out[stored.saved.owner] = stored.saved
        return out

    def duel(self, ratings: tuple[int, int], players: tuple[str, str], seed: int) -> list[pb.Army]:
        """A duel's armies, one per round, drawn when it is accepted, the same for both
        players (``DigitsSettings.opponents``; house ghosts built)."""
        pools = self.pools_for("duel", 0)
        picks = duel_opponents([index for _, index in pools], ratings, players, seed, self.settings)
        return [self.army(pick, [name for name, _ in pools], build=True) for pick in picks]

    def army(self, pick: GhostPick, pool_names: Sequence[str], build: bool = False) -> pb.Army:
        """The army of a pick, as the Face-off shows it and the game records it. A house ghost
        is left unbuilt (no slate: the game builds it from the record and seed, off the event
        loop, so a selection stays well under a millisecond) unless ``build``."""
        seed = int(pick.seed) & ((1 << 64) - 1) if isinstance(pick.seed, int) else 0
        if pick.tier == HOUSE or pick.position is None:
            slate = None
            if build:
                built = house_ghost(pick.round_no, pick.wins, pick.losses, seed, self.settings)
                slate = wire.slate_to_proto(built.slate)
            return pb.Army(
                slate=slate,
                house=True,
                round=pick.round_no,
                wins=pick.wins,
                losses=pick.losses,
                pool="house",
                tier=HOUSE,
                store_position=self.position,
                seed=seed,
            )
        stored = self.ghosts[pick.position]
        saved = stored.saved
        login = saved.login if self.sharing_of(saved.owner) is Sharing.LOGIN else ""
        return pb.Army(
            slate=wire.slate_to_proto(saved.slate),
            shown_as=login,
            round=saved.round_no,
            wins=saved.wins,
            losses=saved.losses,
            rating=saved.rating,
            position=stored.position,
            pool=pool_names[pick.pool or 0],
            tier=pick.tier,
            store_position=self.position,
            seed=seed,
        )


def room_armies(
    players: Sequence[str],
    round_no: int,
    slates: dict[str, GhostSaved],
    sharing: dict[str, Sharing],
    seed: int,
    settings: DigitsSettings = DEFAULT_SETTINGS,
) -> dict[str, pb.Army]:
    """Each room player's army at ``round_no``: the slate another player of the room saved at
    this round, in turn (``schedules.room_opponents``), under their login if they chose so,
    anonymous otherwise; a player alone, or whose opponent saved nothing, faces a house ghost
    for their own record."""
    faced = room_opponents(players, round_no)
    out: dict[str, pb.Army] = {}
    for player in players:
        other = faced.get(player)
        saved = slates.get(other) if other is not None else None
        if saved is None:
            own = slates.get(player)
            wins = 0 if own is None else min(own.wins, round_no - 1)
            losses = 0 if own is None else min(own.losses, round_no - 1 - wins)
            built = house_ghost(min(round_no, settings.max_rounds), wins, losses, seed, settings)
            out[player] = pb.Army(
                slate=wire.slate_to_proto(built.slate),
                house=True,
                round=round_no,
                wins=wins,
                losses=losses,
                pool="house",
                tier=HOUSE,
                seed=seed,
            )
            continue
        login = saved.login if sharing.get(saved.owner) is Sharing.LOGIN else ""
        out[player] = pb.Army(
            slate=wire.slate_to_proto(saved.slate),
            shown_as=login,
            round=saved.round_no,
            wins=saved.wins,
            losses=saved.losses,
            rating=saved.rating,
            pool=room_pool(saved.room_code),
            tier="room",
            seed=seed,
        )
    return out


def draw_seed(command_id: str) -> int:
    """The seed an army is drawn with: of the SaveGhost's (or DrawDuel's) id, or of
    ``room:<code>:<round>`` for a room's turn (recorded in the army)."""
    digest = hashlib.blake2b(f"army:{command_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & SEED_MASK


def room_seed(room_code: str, round_no: int) -> int:
    return draw_seed(f"room:{room_code}:{round_no}")


def room_turn(
    store: GhostStore, players: Sequence[str], missed: Sequence[int], filed: GhostSaved
) -> dict[str, pb.Army]:
    """Once every player of the room who plays ``filed``'s round has filed its slate (``filed``
    the last), each one's army (:func:`room_armies`, by :func:`room_seed`); else nothing. A late
    joiner's missed rounds file nothing: the round's players are those who had not missed it."""
    slates = store.room_slates(filed.room_code, filed.round_no)
    slates[filed.owner] = filed
    expected = [p for p, m in zip(players, missed, strict=True) if filed.round_no > m]
    playing = [p for p in expected if p in slates]
    if filed.owner not in expected or len(playing) < len(expected):
        return {}
    sharing = {p: store.sharing_of(p) for p in players}
    seed = room_seed(filed.room_code, filed.round_no)
    return room_armies(playing, filed.round_no, slates, sharing, seed, store.settings)


def decide_draws(
    store: GhostStore,
    rooms: Mapping[str, tuple[Sequence[str], Sequence[str], Sequence[int]]],
    filed: pb.GhostFiled,
    command_id: str,
) -> list[pb.ArmyDrawn]:
    """The armies a filing draws, from the store as it stood before it: a ranked, casual or
    daily game's (selected with the seed of the SaveGhost's id), a room's turn once its round
    is all filed (``rooms``: each seated room's players, games and missed rounds), else none."""
    closing = filed.closing
    if closing.mode in DRAWN_FROM_STORE:
        army = store.select(
            mode=closing.mode,
            round_no=closing.round,
            record=(closing.wins, closing.losses),
            rating=filed.rating,
            player=closing.player_id,
            seed=draw_seed(command_id),
            now_ms=filed.saved_ms,
        )
        return [pb.ArmyDrawn(match_id=filed.match_id, round=closing.round, army=army)]
    seated = rooms.get(closing.room_code) if closing.mode == "room" else None
    if seated is None:
        return []  # a room the store has not seen seated draws nothing (house ghosts at timers)
    players, games, missed = seated
    entry = entry_of(filed)
    assert isinstance(entry, GhostSaved)
    armies = room_turn(store, players, missed, entry)
    game_of = dict(zip(players, games, strict=True))
    return [
        pb.ArmyDrawn(match_id=game_of[p], round=closing.round, army=army)
        for p, army in armies.items()
    ]


def verify_draws(decisions: Iterable[tuple[str, Sequence[object]]]) -> tuple[int, list[str]]:
    """Re-decide every army the store drew (what ``arena verify`` does), from its stream's
    accepted events grouped by the command that caused them (its id, and the events): before
    each decision is applied, its filing's armies (:func:`decide_draws`: a selection, a room's
    turn) and a duel's 12 (``GhostStore.duel`` with the recorded players and ratings, the seed
    of the DrawDuel's id) are drawn again from the store folded so far and compared. Returns how
    many armies were re-decided and the mismatches."""
    store = GhostStore()
    rooms: dict[str, tuple[Sequence[str], Sequence[str], Sequence[int]]] = {}
    checked, problems = 0, []
    for command_id, messages in decisions:
        filings = [m for m in messages if isinstance(m, pb.GhostFiled)]
        drawn = [m for m in messages if isinstance(m, pb.ArmyDrawn)]
        if filings:
            filed = filings[0]
            expected = decide_draws(store, rooms, filed, command_id)
            checked += len(expected)
            if drawn != expected:
                problems.append(
                    f"{command_id}: drew {_armies(drawn)}, the store draws {_armies(expected)}"
                )
        elif drawn:
            problems.append(f"{command_id}: armies drawn with no filing")
        for duel in (m for m in messages if isinstance(m, pb.DuelArmiesDrawn)):
            if len(duel.players) != 2 or len(duel.ratings) != 2:
                problems.append(f"{command_id}: duel {duel.duel_id}: its players or ratings lost")
                continue
            again = store.duel(
                (duel.ratings[0], duel.ratings[1]),
                (duel.players[0], duel.players[1]),
                draw_seed(command_id),
            )
            checked += len(again)
            if list(duel.armies) != again:
                problems.append(f"{command_id}: duel {duel.duel_id}: other armies")
        for message in messages:
            if isinstance(message, pb.GhostRoomSeated):
                missed = tuple(message.missed) or (0,) * len(message.players)
                rooms[message.room_code] = (
                    tuple(message.players),
                    tuple(message.match_ids),
                    missed,
                )
                continue
            entry = entry_of(message)
            if entry is not None:
                store.apply(entry)
    return checked, problems


def _armies(drawn: Sequence[pb.ArmyDrawn]) -> str:
    return "[" + ", ".join(f"{a.match_id} round {a.round} seed {a.army.seed}" for a in drawn) + "]"
