"""Which saved army a player faces: the rules of the ghost store's selection, and an index.

The rules (seed, "Opponents"): another player's army at the same round; the closest record —
the same record, then the same wins, then any record of the round; a rating within 100 points,
then within 500; failing all that, a house ghost, shown as one. The record comes first: each
record tier is tried with the 100-point band, then the 500-point one, before the next tier.

Selection is a deterministic function of the candidates and a recorded seed: each tier's
candidates are put in a canonical order — by (wins, losses), then rating, then position (the
ghost's place in the store's log, which is its identity) — and drawn from with the seed's own
stream. A draw that lands on one of the player's own armies is drawn again (up to
`OWN_REDRAWS` times), after which the tier's other armies are listed and one is drawn, so the
answer is uniform over the armies the player may face. `select_ghost` runs that cascade over
any `GhostPool`: `GhostList` (a plain list, the reference) or `GhostIndex` (the store's index),
which give the same answer for the same ghosts (tested as a property).

`GhostIndex` is how a service serves 1,000,000 ghosts: one bucket per (round, wins, losses),
each a sorted array of 64-bit keys ``(rating + RATING_OFFSET) << 40 | position`` with the owners
beside them. A rating band is two bisections in a bucket; a tier is at most the buckets of one
round (under 40), so a query costs a few dozen bisections whatever the store's size.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import and_, rshift
from typing import Protocol

from .ghosts import GhostError
from .rng import Rng

RECORD, WINS, ROUND, HOUSE = "record", "wins", "round", "house"
TIERS = (RECORD, WINS, ROUND)
#: Rating bands tried in turn within each record tier (points apart, both ends included).
BANDS = (100, 500)
#: Draws that may land on the player's own army before the tier is listed instead.
OWN_REDRAWS = 8

POSITION_BITS = 40
POSITION_MASK = (1 << POSITION_BITS) - 1
#: Keeps ratings non-negative inside the keys; a rating must lie in [-OFFSET, OFFSET).
RATING_OFFSET = 1 << 20
#: Bits of a key (rating and position) and of a bucket's round, wins and losses when packed.
_KEY_BITS = 21 + POSITION_BITS
_FIELD_MASK = 0xFF


@dataclass(frozen=True, slots=True)
class Ghost:
    """A stored army, as the selection sees it (its slate is the store's business)."""

    position: int  # its place in the store's log: its identity, and the tie-break of the order
    owner: str
    round_no: int
    wins: int
    losses: int
    rating: int  # the owner's rating when the army was saved (frozen)


@dataclass(frozen=True, slots=True)
class GhostQuery:
    round_no: int
    #: (wins, losses) of the player; None for any record of the round (a duel's draws).
    record: tuple[int, int] | None
    rating: int
    #: Owners whose armies are never served to this player (the player; both duellists).
    exclude_owners: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class GhostPick:
    """What was chosen: a stored army (`position`), or a house ghost to build with
    `house_ghost(round_no, wins, losses, seed)` and to show as one."""

    tier: str  # record, wins, round or house
    band: int | None
    pool: int | None  # which of the pools given served it
    position: int | None
    owner: str | None
    round_no: int
    wins: int
    losses: int
    seed: int | str

    @property
    def house(self) -> bool:
        return self.tier == HOUSE


class TierView(Protocol):
    """One tier's candidates within one band, in canonical order."""

    def __len__(self) -> int: ...

    def owner(self, k: int) -> str: ...

    def ghost(self, k: int) -> Ghost: ...


class GhostPool(Protocol):
    def view(self, query: GhostQuery, tier: str, band: int) -> TierView: ...


def _check_ghost(ghost: Ghost) -> None:
    if not 0 <= ghost.position <= POSITION_MASK:
        raise GhostError("bad_position")
    if not -RATING_OFFSET <= ghost.rating < RATING_OFFSET:
        raise GhostError("bad_rating")
    if not (1 <= ghost.round_no <= _FIELD_MASK and 0 <= ghost.wins <= _FIELD_MASK):
        raise GhostError("bad_record")
    if not 0 <= ghost.losses <= _FIELD_MASK:
        raise GhostError("bad_record")


def _check_query(query: GhostQuery) -> None:
    if query.round_no < 1:
        raise GhostError("bad_round")
    if query.record is not None and min(query.record) < 0:
        raise GhostError("bad_record")
    if not -RATING_OFFSET <= query.rating < RATING_OFFSET:
        raise GhostError("bad_rating")


def record_in_tier(wins: int, losses: int, query: GhostQuery, tier: str) -> bool:
    """Whether an army with this record is in `tier` of `query` (a query's tiers are disjoint:
    same record; same wins, other losses; other wins)."""
    if query.record is None:
        return tier == ROUND
    if tier == RECORD:
        return (wins, losses) == query.record
    if tier == WINS:
        return wins == query.record[0] and losses != query.record[1]
    return wins != query.record[0]


def select_ghost(
    pools: Sequence[GhostPool],
    query: GhostQuery,
    seed: int | str,
    house_record: tuple[int, int] | None = None,
) -> GhostPick:
    """The army `query` faces: pools in turn (a daily game: the day's pool, then the general
    one), each through the tiers and bands; else a house ghost for `house_record` (default: the
    query's record)."""
    _check_query(query)
    rng = Rng(seed, "ghost", query.round_no)
    tiers = TIERS if query.record is not None else (ROUND,)
    for number, pool in enumerate(pools):
        for tier in tiers:
            for band in BANDS:
                view = pool.view(query, tier, band)
                k = _draw(view, query.exclude_owners, rng)
                if k is not None:
                    ghost = view.ghost(k)
                    return GhostPick(
                        tier,
                        band,
                        number,
                        ghost.position,
                        ghost.owner,
                        ghost.round_no,
                        ghost.wins,
                        ghost.losses,
                        seed,
                    )
    wins, losses = house_record or query.record or (0, 0)
    return GhostPick(HOUSE, None, None, None, None, query.round_no, wins, losses, seed)


def _draw(view: TierView, excluded: frozenset[str], rng: Rng) -> int | None:
    n = len(view)
    if n == 0:
        return None
    for _ in range(OWN_REDRAWS):
        k = rng.below(n)
        if view.owner(k) not in excluded:
            return k
    allowed = [k for k in range(n) if view.owner(k) not in excluded]
    return allowed[rng.below(len(allowed))] if allowed else None


# -- the reference pool: a plain list ---------------------------------------------------------


class _ListView:
    __slots__ = ("_ghosts",)

    def __init__(self, ghosts: list[Ghost]) -> None:
        self._ghosts = ghosts

    def __len__(self) -> int:
        return len(self._ghosts)

    def owner(self, k: int) -> str:
        return self._ghosts[k].owner

    def ghost(self, k: int) -> Ghost:
        return self._ghosts[k]


class GhostList:
    """Every ghost in a list, filtered and sorted per query: the rules as plainly as possible."""

    def __init__(self, ghosts: Iterable[Ghost]) -> None:
        self.ghosts = list(ghosts)
        for ghost in self.ghosts:
            _check_ghost(ghost)

    def view(self, query: GhostQuery, tier: str, band: int) -> TierView:
        chosen = [
            g
            for g in self.ghosts
            if g.round_no == query.round_no
            and record_in_tier(g.wins, g.losses, query, tier)
            and abs(g.rating - query.rating) <= band
        ]
        chosen.sort(key=lambda g: (g.wins, g.losses, g.rating, g.position))
        return _ListView(chosen)


# -- the index --------------------------------------------------------------------------------


def _key(rating: int, position: int) -> int:
    return (rating + RATING_OFFSET) << POSITION_BITS | position


@dataclass(slots=True)
class _Bucket:
    round_no: int
    wins: int
    losses: int
    keys: array[int] = field(default_factory=lambda: array("q"))
    owners: array[int] = field(default_factory=lambda: array("q"))


class _IndexView:
    """The concatenation of band slices of several buckets, in canonical order."""

    __slots__ = ("_index", "_slices", "_starts", "_total")

    def __init__(self, index: GhostIndex, slices: list[tuple[_Bucket, int, int]]) -> None:
        self._index = index
        self._slices = slices
        starts, total = [], 0
        for _, lo, hi in slices:
            starts.append(total)
            total += hi - lo
        self._starts, self._total = starts, total

    def __len__(self) -> int:
        return self._total

    def _locate(self, k: int) -> tuple[_Bucket, int]:
        i = bisect_left(self._starts, k + 1) - 1
        bucket, lo, _ = self._slices[i]
        return bucket, lo + k - self._starts[i]

    def owner(self, k: int) -> str:
        bucket, at = self._locate(k)
        return self._index.owner_names[bucket.owners[at]]

    def ghost(self, k: int) -> Ghost:
        bucket, at = self._locate(k)
        key = bucket.keys[at]
        return Ghost(
            key & POSITION_MASK,
            self._index.owner_names[bucket.owners[at]],
            bucket.round_no,
            bucket.wins,
            bucket.losses,
            (key >> POSITION_BITS) - RATING_OFFSET,
        )


class GhostIndex:
    """The ghosts of one pool, bucketed by (round, wins, losses) and sorted by (rating,
    position) inside each bucket. `add` and `withdraw` keep it in step with the store's log;
    `from_ghosts` builds it in bulk (sorting each bucket once)."""

    def __init__(self) -> None:
        #: round -> buckets of that round, sorted by (wins, losses).
        self.rounds: dict[int, list[_Bucket]] = {}
        self.owner_names: list[str] = []
        self._owner_codes: dict[str, int] = {}
        self.size = 0

    def _owner_code(self, owner: str) -> int:
        code = self._owner_codes.get(owner)
        if code is None:
            code = self._owner_codes[owner] = len(self.owner_names)
            self.owner_names.append(owner)
        return code

    def _bucket(self, round_no: int, wins: int, losses: int) -> _Bucket:
        buckets = self.rounds.setdefault(round_no, [])
        records = [(b.wins, b.losses) for b in buckets]
        at = bisect_left(records, (wins, losses))
        if at < len(buckets) and records[at] == (wins, losses):
            return buckets[at]
        bucket = _Bucket(round_no, wins, losses)
        buckets.insert(at, bucket)
        return bucket

    def add(self, ghost: Ghost) -> None:
        _check_ghost(ghost)
        bucket = self._bucket(ghost.round_no, ghost.wins, ghost.losses)
        key = _key(ghost.rating, ghost.position)
        at = bisect_left(bucket.keys, key)
        if at < len(bucket.keys) and bucket.keys[at] == key:
            raise GhostError("duplicate_position")
        bucket.keys.insert(at, key)
        bucket.owners.insert(at, self._owner_code(ghost.owner))
        self.size += 1

    def withdraw(self, ghost: Ghost) -> bool:
        """Takes `ghost` out (its owner stopped sharing, its game was voided, its room closed);
        False when it was not in the index."""
        buckets = self.rounds.get(ghost.round_no, [])
        for bucket in buckets:
            if (bucket.wins, bucket.losses) == (ghost.wins, ghost.losses):
                key = _key(ghost.rating, ghost.position)
                at = bisect_left(bucket.keys, key)
                if at < len(bucket.keys) and bucket.keys[at] == key:
                    del bucket.keys[at]
                    del bucket.owners[at]
                    self.size -= 1
                    return True
        return False

    @classmethod
    def from_ghosts(cls, ghosts: Iterable[Ghost]) -> GhostIndex:
        """The index of these ghosts, built in bulk (:meth:`from_columns`)."""
        listed = list(ghosts)
        return cls.from_columns(
            [g.position for g in listed],
            [g.owner for g in listed],
            [g.round_no for g in listed],
            [g.wins for g in listed],
            [g.losses for g in listed],
            [g.rating for g in listed],
        )

    @classmethod
    def from_columns(
        cls,
        positions: Sequence[int],
        owners: Sequence[str],
        rounds: Sequence[int],
        wins: Sequence[int],
        losses: Sequence[int],
        ratings: Sequence[int],
    ) -> GhostIndex:
        """The index of the ghosts given column by column (ghost i is the i-th of each), as a
        store keeps them: checked column-wide, then one sort of packed integers (bucket, rating,
        position and owner in one key, so the sort compares plain ints and needs no key
        function), then each bucket cut out of the sorted run. The same index as adding them one
        by one, several times faster."""
        n = len(positions)
        if not len(owners) == len(rounds) == len(wins) == len(losses) == len(ratings) == n:
            raise GhostError("bad_columns")
        index = cls()
        if n == 0:
            return index
        if min(positions) < 0 or max(positions) > POSITION_MASK:
            raise GhostError("bad_position")
        if min(ratings) < -RATING_OFFSET or max(ratings) >= RATING_OFFSET:
            raise GhostError("bad_rating")
        if min(rounds) < 1 or min(wins) < 0 or min(losses) < 0:
            raise GhostError("bad_record")
        if max(rounds) > _FIELD_MASK or max(wins) > _FIELD_MASK or max(losses) > _FIELD_MASK:
            raise GhostError("bad_record")
        if len(set(positions)) != n:
            raise GhostError("duplicate_position")
        codes = dict.fromkeys(owners, 0)  # first seen first: the order add() gives them
        for code, owner in enumerate(codes):
            codes[owner] = code
        index.owner_names = list(codes)
        index._owner_codes = codes
        owner_bits = max(1, len(codes).bit_length())
        key_shift = owner_bits
        bucket_shift = owner_bits + _KEY_BITS
        offset = RATING_OFFSET
        packed = sorted(
            (((r << 16 | w << 8 | lo) << _KEY_BITS | (rating + offset) << POSITION_BITS | p)
             << owner_bits | o)
            for r, w, lo, rating, p, o in zip(
                rounds, wins, losses, ratings, positions, map(codes.__getitem__, owners),
                strict=True,
            )
        )  # fmt: skip
        key_mask = (1 << _KEY_BITS) - 1
        all_keys = array("q", map(and_, map(rshift, packed, repeat(key_shift)), repeat(key_mask)))
        all_owners = array("q", map(and_, packed, repeat((1 << owner_bits) - 1)))
        start = 0
        while start < n:
            code = packed[start] >> bucket_shift
            end = bisect_left(packed, (code + 1) << bucket_shift, start)
            bucket = _Bucket(code >> 16, code >> 8 & _FIELD_MASK, code & _FIELD_MASK)
            bucket.keys = all_keys[start:end]
            bucket.owners = all_owners[start:end]
            index.rounds.setdefault(bucket.round_no, []).append(bucket)
            start = end
        index.size = n
        return index

    def __len__(self) -> int:
        return self.size

    def view(self, query: GhostQuery, tier: str, band: int) -> TierView:
        low = _key(query.rating - band, 0)
        high = _key(query.rating + band + 1, 0)
        slices = []
        for bucket in self.rounds.get(query.round_no, ()):
            if not record_in_tier(bucket.wins, bucket.losses, query, tier):
                continue
            lo, hi = bisect_left(bucket.keys, low), bisect_left(bucket.keys, high)
            if hi > lo:
                slices.append((bucket, lo, hi))
        return _IndexView(self, slices)
