"""The simulation state and the per-tick kernel: the ten numbered rules, in the reference's order.

State lives in flat lists of plain ints indexed by slot (and by cell, ``y * 24 + x``), and
everything that depends only on the map (distance fields, rays, sight, nearest-token orders) is
computed once and shared. Events are kept as tuples and rule-10 records as raw copies; both
become JSON only when a replay is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress
from operator import itemgetter
from typing import Final, NamedTuple

from arena_engine.matrix_games.constants import (
    AVOID_EXCLUSION,
    BOARD_H,
    BOARD_W,
    CELLS,
    EAST,
    HOLD_REFACE_RANGE,
    IMMUNE_TICKS,
    LEGAL_REASONS,
    NORTH,
    OPENING_CELLS,
    SEATS,
    SOUTH,
    SWEEP_CELL,
    TURN_CADENCE,
    WEST,
    is_row_camp,
)
from arena_engine.matrix_games.errors import MatrixGamesError, OrderError
from arena_engine.matrix_games.indices import Indices
from arena_engine.matrix_games.orders import (
    DENY,
    GATHER,
    HOLD,
    HUNT,
    INTENT_CODE,
    Order,
    validate_order,
)
from arena_engine.matrix_games.pathing import bfs_step, distance_field
from arena_engine.matrix_games.settings import Settings
from arena_engine.matrix_games.sight import sight_row
from arena_engine.matrix_games.variants import argmax_lowest, mix_permille, payoff_cp
from arena_engine.matrix_games.yard import (
    CELL_X,
    CELL_Y,
    FLOOR,
    NEIGHBOURS,
    RAYS,
    cell_of,
    draw_spawners,
    token_candidates,
    zone_centre,
    zones_for,
)

_SLOTS: Final = tuple(range(SEATS))

# Micro-action codes produced by rule 3: a step is its direction, a turn is 4 + direction.
WAIT: Final = -1
TURN: Final = 4
FIRE: Final = 8

_GATHER = INTENT_CODE[GATHER]
_DENY = INTENT_CODE[DENY]
_HUNT = INTENT_CODE[HUNT]
_HOLD = INTENT_CODE[HOLD]

#: Endings recorded with each legal reason. Only "full_match" is pinned by the reference.
ENDINGS: Final = {"complete": "full_match", "deadline": "play_deadline", "forfeit": "no_seats"}

# Event tuples: (kind, t, ...fields in replay order). See replay.EVENT_FIELDS.
Event = tuple[object, ...]
FieldFn = Callable[[int], Sequence[int]]


class Snapshot(NamedTuple):
    """The state recorded by rule 10 for one tick (cells, flattened inventories)."""

    t: int
    pos: list[int]
    facing: list[int]
    freeze: list[int]
    inv: list[int]
    tok: list[int]
    sc: list[int]


class Interaction(NamedTuple):
    """One resolution, as recorded (inventories are those before the reset)."""

    t: int
    beat: int
    row: int
    col: int
    row_inv: list[int]
    col_inv: list[int]
    row_mix: list[int]
    col_mix: list[int]
    cell_row: int
    cell_col: int
    row_cp: int
    col_cp: int


class Sim:
    """One episode: the state, and the rules that advance it.

    Driven beat by beat: ``install_orders`` (eight orders), ``run_beat`` (the beat's ticks and
    its close), and at the end ``settle_complete`` or ``finish(reason)``.
    """

    def __init__(
        self,
        settings: Settings,
        policy_names: Sequence[str] | None = None,
        *,
        record_frames: bool = True,
    ) -> None:
        self.settings = settings
        self.variant = variant = settings.variant
        self.k = k = variant.k
        self.policy_names = list(policy_names) if policy_names is not None else [""] * SEATS
        if len(self.policy_names) != SEATS:
            raise MatrixGamesError("bad_policy_names", "exactly eight policy names are needed")
        self.record_frames = record_frames
        self._field: FieldFn = distance_field

        self.zones = zones_for(k)
        self.spawners = draw_spawners(settings.seed, k)
        self.sp_cell = [s.cell for s in self.spawners]
        self.sp_token = [s.token for s in self.spawners]
        self.sp_has = [1] * len(self.spawners)
        self.sp_refill = [-1] * len(self.spawners)
        self.spawner_at = [-1] * CELLS
        for i, c in enumerate(self.sp_cell):
            self.spawner_at[c] = i
        self._refills: dict[int, list[int]] = {}
        # tok_at[cell]: the type of the token lying there, or -1 (kept in step with sp_has).
        self.tok_at = [-1] * CELLS
        for i, c in enumerate(self.sp_cell):
            self.tok_at[c] = self.sp_token[i]
        self._centre_cell = [cell_of(*zone_centre(k, t)) for t in range(k)]
        self._sweep_cell = cell_of(*SWEEP_CELL)

        self.pos = [cell_of(x, y) for x, y in OPENING_CELLS]
        self.facing = [2 if y < 7 else 0 for _, y in OPENING_CELLS]
        self.freeze = [0] * SEATS
        self.step_cd = [0] * SEATS
        self.beam_cd = [0] * SEATS
        self.immune = [0] * SEATS
        self.score = [0] * SEATS
        self.interactions = [0] * SEATS
        self.inv = [[1] * k for _ in range(SEATS)]
        self.fixed_type = [(settings.seed + s) % k for s in range(SEATS)]
        self.occ = [-1] * CELLS
        for s, c in enumerate(self.pos):
            self.occ[c] = s

        self.orders = [Order() for _ in range(SEATS)]
        self._intent = [_HOLD] * SEATS
        self._token = [-1] * SEATS
        self._target = [-1] * SEATS

        # Sight memory, flat [observer * 8 + target]: last seen cell and tick (-1 = never).
        self.mem_cell = [self.pos[t] for _ in range(SEATS) for t in range(SEATS)]
        self.mem_tick = [-1] * (SEATS * SEATS)
        self._sight = [sight_row(c, settings.view_radius) for c in range(CELLS)]

        self.indices = Indices(k)
        self.tick = 0
        self.beat = 0
        self.last_leader = 0
        self.done = False
        self.reason = ""
        self.ending = ""
        self.events: list[Event] = []
        self.interacts: list[Interaction] = []
        self.frames: list[Snapshot] = []
        self._micros = [WAIT] * SEATS

    def copy(self) -> Sim:
        """An independent Sim in the same state: advancing either leaves the other as it was.

        What depends only on the settings and the map (spawner layout, sight rows, distance
        fields) is shared, read-only; every list the rules write is copied. Recorded events,
        interactions and frames are immutable once recorded, so their lists are copied but not
        their items. Cheaper than ``copy.deepcopy`` by two orders of magnitude, and much
        cheaper than replaying the episode.
        """
        new = object.__new__(Sim)
        new.__dict__.update(self.__dict__)
        new.policy_names = list(self.policy_names)
        new.sp_has = self.sp_has[:]
        new.sp_refill = self.sp_refill[:]
        new._refills = {t: due[:] for t, due in self._refills.items()}
        new.tok_at = self.tok_at[:]
        new.pos = self.pos[:]
        new.facing = self.facing[:]
        new.freeze = self.freeze[:]
        new.step_cd = self.step_cd[:]
        new.beam_cd = self.beam_cd[:]
        new.immune = self.immune[:]
        new.score = self.score[:]
        new.interactions = self.interactions[:]
        new.inv = [row[:] for row in self.inv]
        new.occ = self.occ[:]
        new.orders = self.orders[:]
        new._intent = self._intent[:]
        new._token = self._token[:]
        new._target = self._target[:]
        new.mem_cell = self.mem_cell[:]
        new.mem_tick = self.mem_tick[:]
        new.indices = self.indices.copy()
        new.events = self.events[:]
        new.interacts = self.interacts[:]
        new.frames = self.frames[:]
        new._micros = self._micros[:]
        return new

    # ---- beats ---------------------------------------------------------------------------

    def install_orders(self, orders: Sequence[Order]) -> None:
        """Install one beat's eight orders (validated first: a bad one changes nothing)."""
        if self.done:
            raise MatrixGamesError("episode_over", "the episode has ended")
        if self.beat >= self.settings.beats:
            raise MatrixGamesError("no_beats_left", "every beat has been played")
        if len(orders) != SEATS:
            raise OrderError("wrong_order_count", f"expected {SEATS} orders, got {len(orders)}")
        for seat, order in enumerate(orders):
            validate_order(order, seat, self.k)
        for seat, order in enumerate(orders):
            clean = order.cleaned()
            self.orders[seat] = clean
            self._intent[seat] = INTENT_CODE[clean.intent]
            self._token[seat] = clean.token
            self._target[seat] = clean.target
            self.events.append(("order", self.tick, self.beat, seat, clean))

    def run_beat(self) -> None:
        """``ticksPerBeat`` ticks, then the beat close."""
        step = self.step
        for _ in range(self.settings.ticks_per_beat):
            if self.done:
                return
            step()
        self.close_beat()

    def close_beat(self) -> None:
        """Record ``beatclose`` and move to the next beat (``run_beat`` does this itself)."""
        self.events.append(
            ("beatclose", self.tick, self.beat, list(self.score), self.indices.interactions)
        )
        self.beat += 1

    def finish(self, reason: str) -> None:
        """End the episode once, with one of the three legal reasons."""
        if reason not in LEGAL_REASONS:
            raise MatrixGamesError("illegal_reason", f"reason must be one of {LEGAL_REASONS}")
        if self.done:
            return
        self.done = True
        self.reason = reason
        self.ending = ENDINGS[reason]
        self.events.append(("end", self.tick, reason, self.ending, list(self.score)))

    def settle_complete(self) -> None:
        if not self.done:
            self.finish("complete")

    # ---- the tick ------------------------------------------------------------------------

    def step(self) -> None:
        """One tick: rules 1-10."""
        tick = self.tick
        freeze = self.freeze
        step_cd = self.step_cd
        beam_cd = self.beam_cd
        immune = self.immune
        pos = self.pos
        occ = self.occ
        facing = self.facing
        events = self.events

        # 1. Timers.
        for s in range(SEATS):
            if freeze[s]:
                freeze[s] -= 1
            if step_cd[s]:
                step_cd[s] -= 1
            if beam_cd[s]:
                beam_cd[s] -= 1
            if immune[s]:
                immune[s] -= 1

        # 2. Token respawn.
        due = self._refills.pop(tick, None)
        if due:
            for i in due:
                self.sp_has[i] = 1
                self.sp_refill[i] = -1
                self.tok_at[self.sp_cell[i]] = self.sp_token[i]

        # 3. Intent evaluation, every cog against the same state.
        micros = self._micros
        evaluate = self._evaluate
        for s in range(SEATS):
            micros[s] = WAIT if freeze[s] else evaluate(s, step_cd[s] == 0)

        # 4. Movement, ascending slots, against the live occupancy.
        cooldown = self.settings.step_cooldown_ticks
        for s in range(SEATS):
            m = micros[s]
            if m < 0 or m == FIRE:
                continue
            if m >= TURN:
                facing[s] = m - TURN
            elif step_cd[s] == 0:
                facing[s] = m
                here = pos[s]
                n = NEIGHBOURS[here][m]
                if n >= 0 and occ[n] < 0:
                    occ[here] = -1
                    occ[n] = s
                    pos[s] = n
                    step_cd[s] = cooldown

        # 5. Pickup, ascending slots.
        spawner_at = self.spawner_at
        sp_has = self.sp_has
        cap = self.settings.token_cap
        for s in range(SEATS):
            i = spawner_at[pos[s]]
            if i < 0 or not sp_has[i]:
                continue
            token = self.sp_token[i]
            inv = self.inv[s]
            if inv[token] >= cap:
                continue
            inv[token] += 1
            sp_has[i] = 0
            self.tok_at[pos[s]] = -1
            refill = tick + self.settings.token_respawn_ticks
            self.sp_refill[i] = refill
            self._refills.setdefault(refill, []).append(i)
            c = pos[s]
            events.append(("pickup", tick, s, CELL_X[c], CELL_Y[c], token))

        # Sight memory, after pickup and before the beams.
        sight = self._sight
        mem_cell = self.mem_cell
        mem_tick = self.mem_tick
        in_view = itemgetter(*pos)  # each observer's sight row read at the eight positions
        for o in range(SEATS):
            base = o * SEATS
            for t in compress(_SLOTS, in_view(sight[pos[o]])):
                mem_cell[base + t] = pos[t]
                mem_tick[base + t] = tick

        # 6-8. Beam fire in ascending slots; a hit resolves and resets at once.
        if FIRE in micros:
            for s in range(SEATS):
                if micros[s] == FIRE:
                    self._fire(s)

        # 9. Leader check: the first slot with the top score (a strict ">" scan from slot 0).
        score = self.score
        best = max(score)
        lead = score.index(best)
        if lead != self.last_leader:
            self.last_leader = lead
            events.append(("leadchange", tick, lead, best))

        # 10. Record.
        if self.record_frames:
            self._record()
        self.tick = tick + 1

    def _record(self) -> None:
        # Rule 10 keeps raw copies only; the replay writer expands them into the frame, share
        # and score rows, so a run that never writes a replay pays for copies, not JSON.
        inv = self.inv
        self.frames.append(
            Snapshot(
                self.tick,
                self.pos[:],
                self.facing[:],
                self.freeze[:],
                [v for row in inv for v in row],
                self.sp_has[:],
                self.score[:],
            )
        )

    # ---- rule 3: one micro-action -------------------------------------------------------

    def _evaluate(self, s: int, can_step: bool) -> int:
        """The micro-action of an unfrozen cog. When it cannot step this tick, a step it would
        choose has no effect at all, so the path search is skipped (same outcome, less work)."""
        intent = self._intent[s]
        pos = self.pos
        here = pos[s]
        if intent == _GATHER:
            if not can_step:
                return WAIT
            token = min(max(self._token[s], 0), self.k - 1)
            if self.inv[s][token] >= self.settings.token_cap:
                return self._step_toward(here, self._centre_cell[token])
            goal = self._nearest_token(here, token)
            if goal < 0:
                goal = self._centre_cell[token]
            return self._step_toward(here, goal)
        if intent == _HUNT:
            target = self._target[s]
            if target < 0 or target >= SEATS or target == s:
                return WAIT
            d = self._aligned_dir(s, target)
            if d >= 0:
                if self.facing[s] != d:
                    return TURN + d
                return FIRE if self.beam_cd[s] == 0 else WAIT
            if not can_step and self.tick % TURN_CADENCE:
                return WAIT
            m = self._step_toward(here, self.mem_cell[s * SEATS + target])
            if m >= 0:
                return m
            # Sweep: walk to the mixed band's centre; once there, turn a quarter every 4 ticks.
            m = self._step_toward(here, self._sweep_cell)
            if m >= 0:
                return m
            if self.tick % TURN_CADENCE == 0:
                return TURN + (self.facing[s] + 1) % 4
            return WAIT
        if intent == _HOLD:
            if self.beam_cd[s] == 0 and self._ray_target(s) >= 0:
                return FIRE
            if self.tick % TURN_CADENCE == 0:
                other = self._nearest_other(s)
                there = pos[other]
                dx = CELL_X[there] - CELL_X[here]
                dy = CELL_Y[there] - CELL_Y[here]
                if max(abs(dx), abs(dy)) <= HOLD_REFACE_RANGE:
                    # Face the nearest cog; ties go to the vertical axis.
                    if abs(dy) >= abs(dx):
                        d = NORTH if dy < 0 else SOUTH
                    else:
                        d = EAST if dx > 0 else WEST
                    if d != self.facing[s]:
                        return TURN + d
            return WAIT
        if intent == _DENY:
            if not can_step:
                return WAIT
            token = min(max(self._token[s], 0), self.k - 1)
            rival = pos[self._nearest_other(s)]
            goal = self._nearest_token(rival, token)
            if goal < 0:
                goal = self._centre_cell[token]
            return self._step_toward(here, goal)
        # avoid
        target = self._target[s]
        if target < 0 or target >= SEATS or target == s or not can_step:
            return WAIT
        return self._avoid_step(here, pos[target])

    def _step_toward(self, here: int, goal: int) -> int:
        return bfs_step(self._field(goal), here, goal, self.occ)

    def _nearest_token(self, origin: int, token: int) -> int:
        """Cell of the token of this type nearest by Chebyshev (ties: lowest y, then x), or -1.
        Global knowledge: every spawner counts, in view or not."""
        tok_at = self.tok_at
        for c in token_candidates(origin, token):
            if tok_at[c] == token:
                return c
        return -1

    def _nearest_other(self, s: int) -> int:
        """The other cog nearest by Chebyshev on true positions, ties to the lowest slot."""
        here = self.pos[s]
        hx = CELL_X[here]
        hy = CELL_Y[here]
        best = -1
        best_d = 1 << 30
        for o in range(SEATS):
            if o == s:
                continue
            c = self.pos[o]
            d = max(abs(CELL_X[c] - hx), abs(CELL_Y[c] - hy))
            if d < best_d:
                best_d = d
                best = o
        return best

    def _ray_target(self, s: int) -> int:
        occ = self.occ
        for c in RAYS[self.pos[s]][self.facing[s]][: self.settings.beam_range]:
            o = occ[c]
            if o >= 0 and o != s:
                return o
        return -1

    def _aligned_dir(self, s: int, target: int) -> int:
        """The direction whose ray reaches ``target`` before any other cog, or -1."""
        occ = self.occ
        reach = self.settings.beam_range
        rays = RAYS[self.pos[s]]
        for d in range(4):
            for c in rays[d][:reach]:
                o = occ[c]
                if o == target:
                    return d
                if o >= 0:
                    break
        return -1

    def _avoid_step(self, here: int, threat: int) -> int:
        tx = CELL_X[threat]
        ty = CELL_Y[threat]
        best = max(abs(CELL_X[here] - tx), abs(CELL_Y[here] - ty))
        best_dir = -1
        occ = self.occ
        nbs = NEIGHBOURS[here]
        for d in range(4):
            n = nbs[d]
            if n < 0 or occ[n] >= 0:
                continue
            dist = max(abs(CELL_X[n] - tx), abs(CELL_Y[n] - ty))
            # The reference excludes only distance 0-1 (its docs say "within 2").
            if dist < AVOID_EXCLUSION:
                continue
            if dist > best:
                best = dist
                best_dir = d
        return best_dir

    # ---- rules 6-8 -----------------------------------------------------------------------

    def _fire(self, s: int) -> None:
        if self.beam_cd[s] != 0 or self.freeze[s] > 0:
            return  # frozen by an earlier slot's resolution this tick: no event
        here = self.pos[s]
        d = self.facing[s]
        ray = RAYS[here][d][: self.settings.beam_range]
        hit = -1
        occ = self.occ
        for c in ray:
            o = occ[c]
            if o >= 0 and o != s:
                hit = o
                break
        tick = self.tick
        self.events.append(("beam", tick, s, CELL_X[here], CELL_Y[here], d, len(ray), hit))
        if hit < 0:
            self.beam_cd[s] = self.settings.beam_miss_cooldown
            return
        if self.immune[hit] > 0 or self.freeze[hit] > 0:
            self.events.append(("nocontest", tick, s, hit, "immune"))
            self.beam_cd[s] = self.settings.beam_miss_cooldown
            return
        if self.variant.cross_camp_only and is_row_camp(s) == is_row_camp(hit):
            self.events.append(("nocontest", tick, s, hit, "same_camp"))
            self.beam_cd[s] = self.settings.beam_miss_cooldown
            return
        self._resolve(s, hit)

    def _resolve(self, shooter: int, target: int) -> None:
        row, col = shooter, target
        if self.variant.cross_camp_only and not is_row_camp(shooter):
            row, col = target, shooter
        row_inv = list(self.inv[row])
        col_inv = list(self.inv[col])
        row_mix = mix_permille(row_inv)
        col_mix = mix_permille(col_inv)
        row_cp, col_cp = payoff_cp(self.variant, row_inv, col_inv)
        self.score[row] += row_cp
        self.score[col] += col_cp
        self.interactions[row] += 1
        self.interactions[col] += 1
        cell_row = argmax_lowest(row_inv)
        cell_col = argmax_lowest(col_inv)
        record = Interaction(
            self.tick, self.beat, row, col, row_inv, col_inv, row_mix, col_mix,
            cell_row, cell_col, row_cp, col_cp,
        )  # fmt: skip
        self.events.append(("interact", *record))
        self.interacts.append(record)
        self.indices.note_resolution(
            self.variant,
            row,
            col,
            row_inv,
            col_inv,
            row_mix,
            col_mix,
            cell_row,
            cell_col,
            row_cp,
            col_cp,
        )
        for seat in (row, col):
            self.inv[seat] = [1] * self.k
            self.freeze[seat] = self.settings.freeze_ticks
            self.immune[seat] = IMMUNE_TICKS
            self.beam_cd[seat] = self.settings.beam_reset_cooldown
            self.events.append(("reset", self.tick, seat))

    def place_cog(self, slot: int, x: int, y: int, facing: int | None = None) -> None:
        """Put a cog on a free floor cell (puzzles, the trainer and tests set up positions)."""
        c = cell_of(x, y) if 0 <= x < BOARD_W and 0 <= y < BOARD_H else -1
        if c < 0 or not FLOOR[c]:
            raise MatrixGamesError("not_floor", f"({x},{y}) is not a floor cell")
        if self.occ[c] >= 0 and self.occ[c] != slot:
            raise MatrixGamesError("occupied", f"({x},{y}) holds cog {self.occ[c]}")
        self.occ[self.pos[slot]] = -1
        self.occ[c] = slot
        self.pos[slot] = c
        if facing is not None:
            self.facing[slot] = facing % 4

    # ---- reading -------------------------------------------------------------------------

    @property
    def scores_cp(self) -> list[int]:
        return list(self.score)

    def xy(self, slot: int) -> tuple[int, int]:
        c = self.pos[slot]
        return CELL_X[c], CELL_Y[c]

    def visible(self, observer: int, target: int) -> bool:
        return bool(self._sight[self.pos[observer]][self.pos[target]])

    def eligible(self, slot: int, other: int) -> bool:
        if other == slot:
            return False
        if self.variant.cross_camp_only:
            return is_row_camp(slot) != is_row_camp(other)
        return True

    def state_hash(self) -> int:
        """FNV-1a 32 over the reference's field order, each int as 4 little-endian bytes."""
        h = 2166136261
        values: list[int] = [self.tick, self.beat]
        for s in range(SEATS):
            x, y = self.xy(s)
            values += (
                x,
                y,
                self.facing[s],
                self.score[s],
                self.freeze[s],
                self.step_cd[s],
                self.beam_cd[s],
                self.immune[s],
                self.interactions[s],
            )
            values += self.inv[s]
        for i, sp in enumerate(self.spawners):
            values += (sp.x, sp.y, sp.token, self.sp_has[i], self.sp_refill[i])
        for v in values:
            v &= 0xFFFFFFFF
            for _ in range(4):
                h = ((h ^ (v & 0xFF)) * 16777619) & 0xFFFFFFFF
                v >>= 8
        return h
