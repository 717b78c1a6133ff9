"""Consumer groups of the embedded log, kept in the SQLite file so processes can share a group.

Each member has a row in ``group_members`` with an expiry that a background task pushes forward
every ``heartbeat_interval_ms``, as Kafka's heartbeat thread does, so a slow handler between polls
keeps its partitions; a member whose process is gone for ``session_timeout_ms`` is dropped by the
next member that syncs (a polling member syncs at least every heartbeat interval). From the live
members every member computes the same range assignment, releases the partitions it should no
longer own and claims the free ones it should. Ownership lives in ``partition_owners``, so a
partition is never owned twice: a new member gets a partition only after its previous owner has
let go (or expired). Commits are fenced by ownership, like Kafka's generation check. Members in
the same process are told of a change at once; across processes they notice at their next sync.

A polling member is woken by every write of its process; it reads only when one of its
partitions moved (the log notes where each of its own appends ended), and then only the
partitions that moved, answered from the log's tail of its own appends where the position lies
inside it, so a member following its own process's writes rarely waits for the reader thread.
Every ``_IDLE_READ_S`` it reads all its partitions, from the file where the tail does not cover
them, which is how appends by other processes are seen; that period is kept however busy the
process's own writes keep the member.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
import uuid
from collections.abc import Mapping, Sequence

from arena_runtime.eventlog.base import (
    CommitFailedError,
    Consumer,
    EventLogError,
    InvalidRequestError,
    Record,
    TopicPartition,
)
from arena_runtime.eventlog.embedded import (
    EmbeddedEventLog,
    TopicInfo,
    next_offset,
    now_ms,
    read_partition,
)

# How soon a member that is still waiting for a partition to be released tries again.
_CLAIM_RETRY_S = 0.05
# Longest wait between reads while polling, so appends by other processes are seen.
_IDLE_READ_S = 0.1

Slot = tuple[int, int]  # (topic id, partition)


def range_assignment(
    members: Sequence[tuple[str, Sequence[int]]], partitions: Mapping[int, int]
) -> dict[str, set[Slot]]:
    """Kafka's range assignor: per topic, consecutive partitions to members sorted by id."""
    out: dict[str, set[Slot]] = {member: set() for member, _ in members}
    for tid in sorted(partitions):
        subscribers = sorted(member for member, topics in members if tid in topics)
        if not subscribers:
            continue
        count = partitions[tid]
        share, extra = divmod(count, len(subscribers))
        start = 0
        for i, member in enumerate(subscribers):
            size = share + (1 if i < extra else 0)
            out[member].update((tid, p) for p in range(start, start + size))
            start += size
    return out


class EmbeddedConsumer(Consumer):
    def __init__(self, log: EmbeddedEventLog, group: str, topics: list[str]) -> None:
        if not group:
            raise InvalidRequestError("a consumer group needs a name")
        self._log = log
        self._group = self.group = group
        self._topic_names = topics
        self._member = uuid.uuid4().hex
        self._topics: dict[int, TopicInfo] = {}
        self._topic_ids: frozenset[int] = frozenset()
        self._owned: dict[TopicPartition, Slot] = {}
        #: ``_owned`` as assignment() returns it, and in read order (topic, partition), made
        #: again only when it changes, not at every poll.
        self._assigned: frozenset[TopicPartition] = frozenset()
        self._order: list[TopicPartition] = []
        #: Slot -> its partition, for the owned ones.
        self._slots: dict[Slot, TopicPartition] = {}
        #: The slots of this consumer's topics this process appended to since they were last
        #: looked at (the log adds them): what a poll woken by a write reads, instead of
        #: looking at every partition it owns.
        self._appended: set[Slot] = set()
        self._positions: dict[TopicPartition, int] = {}
        self._consumed: dict[TopicPartition, int] = {}
        #: The end of each owned partition as last seen by a read of the file (other processes'
        #: appends included), for :meth:`lag`.
        self._ends: dict[TopicPartition, int] = {}
        self._next_sync = 0.0
        self._next_read = 0.0
        self._seen_epoch = -1
        self._members: tuple[str, ...] = ()
        self._rotation = 0
        self._started = False
        self._keepalive: asyncio.Task[None] | None = None

    # -- membership --------------------------------------------------------------------------

    async def start(self) -> None:
        for name in self._topic_names:
            info = await self._log.topic(name)
            self._topics[info.id] = info
        self._topic_ids = frozenset(self._topics)
        self._log.watch_appends(self._topic_ids, self._appended)
        self._started = True
        await self._sync()
        self._keepalive = asyncio.create_task(self._keep_alive(), name=f"heartbeat-{self._group}")

    async def _keep_alive(self) -> None:
        group, member = self._group, self._member
        log = self._log

        def heartbeat(conn: sqlite3.Connection) -> int:
            return conn.execute(
                "UPDATE group_members SET expires_ms = ? WHERE group_name = ? AND member_id = ?",
                (now_ms() + log.session_timeout_ms, group, member),
            ).rowcount

        while self._started and log.is_open:
            await asyncio.sleep(log.heartbeat_interval_ms / 1000)
            with contextlib.suppress(EventLogError):
                if await log.write(heartbeat) == 0:  # expired meanwhile: rejoin at the next poll
                    self._next_sync = 0.0

    async def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        self._log.unwatch_appends(self._appended)
        if self._keepalive is not None:
            self._keepalive.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keepalive
            self._keepalive = None
        group, member = self._group, self._member

        def leave(conn: sqlite3.Connection) -> None:
            conn.execute(
                "DELETE FROM group_members WHERE group_name = ? AND member_id = ?", (group, member)
            )
            conn.execute(
                "DELETE FROM partition_owners WHERE group_name = ? AND member_id = ?",
                (group, member),
            )

        try:
            if self._log.is_open:  # else the member simply expires, as if it had crashed
                await self._log.write(leave)
        finally:
            self._owned.clear()
            self._owned_changed()
            self._positions.clear()
            self._consumed.clear()
            self._log.bump_group(group)

    async def _sync(self) -> None:
        """Heartbeat, expire the dead, and converge on this member's share of the partitions."""
        group, member = self._group, self._member
        log = self._log
        topic_ids = sorted(self._topics)
        self._seen_epoch = log.group_epoch(group)

        def owned_by_member(conn: sqlite3.Connection) -> set[Slot]:
            return set(
                conn.execute(
                    "SELECT topic_id, partition FROM partition_owners "
                    "WHERE group_name = ? AND member_id = ?",
                    (group, member),
                )
            )

        def sync(
            conn: sqlite3.Connection,
        ) -> tuple[tuple[str, ...], set[Slot], set[Slot], dict[Slot, int]]:
            now = now_ms()
            conn.execute(
                "INSERT OR REPLACE INTO group_members (group_name, member_id, topic_ids, "
                "expires_ms) VALUES (?, ?, ?, ?)",
                (group, member, json.dumps(topic_ids), now + log.session_timeout_ms),
            )
            conn.execute(
                "DELETE FROM group_members WHERE group_name = ? AND expires_ms < ?", (group, now)
            )
            conn.execute(
                "DELETE FROM partition_owners WHERE group_name = ? AND member_id NOT IN "
                "(SELECT member_id FROM group_members WHERE group_name = ?)",
                (group, group),
            )
            members = [
                (mid, json.loads(tids))
                for mid, tids in conn.execute(
                    "SELECT member_id, topic_ids FROM group_members WHERE group_name = ?", (group,)
                )
            ]
            wanted = {tid for _, tids in members for tid in tids}
            partitions = {
                tid: n
                for tid, n in conn.execute("SELECT id, partitions FROM topics")
                if tid in wanted
            }
            target = range_assignment(members, partitions)[member]
            owned = owned_by_member(conn)
            conn.executemany(
                "DELETE FROM partition_owners WHERE group_name = ? AND topic_id = ? "
                "AND partition = ? AND member_id = ?",
                [(group, tid, p, member) for tid, p in owned - target],
            )
            conn.executemany(
                "INSERT OR IGNORE INTO partition_owners (group_name, topic_id, partition, "
                "member_id) VALUES (?, ?, ?, ?)",
                [(group, tid, p, member) for tid, p in target - owned],
            )
            now_owned = owned_by_member(conn)
            committed = {
                (tid, p): off
                for tid, p, off in conn.execute(
                    'SELECT topic_id, partition, "offset" FROM group_offsets WHERE group_name = ?',
                    (group,),
                )
                if (tid, p) in now_owned
            }
            return tuple(sorted(mid for mid, _ in members)), target, now_owned, committed

        members, target, now_owned, committed = await log.write(sync)
        changed = members != self._members
        self._members = members
        owned_before = set(self._owned.values())
        if now_owned != owned_before:
            changed = True
            for tp, slot in list(self._owned.items()):
                if slot not in now_owned:
                    del self._owned[tp]
                    self._positions.pop(tp, None)
                    self._consumed.pop(tp, None)
                    self._ends.pop(tp, None)
            for slot in now_owned - owned_before:
                tp = TopicPartition(self._topics[slot[0]].name, slot[1])
                self._owned[tp] = slot
                self._positions[tp] = committed.get(slot, 0)
            self._owned_changed()
        if changed:
            self._next_read = 0.0  # new partitions: read them now
        settled = now_owned == target
        delay = log.heartbeat_interval_ms / 1000 if settled else _CLAIM_RETRY_S
        self._next_sync = time.monotonic() + delay
        if changed:
            log.bump_group(self._group)
            self._seen_epoch = log.group_epoch(self._group)

    def assignment(self) -> frozenset[TopicPartition]:
        return self._assigned

    def _owned_changed(self) -> None:
        self._assigned = frozenset(self._owned)
        self._order = sorted(self._owned)
        self._slots = {slot: tp for tp, slot in self._owned.items()}
        # Looked at once: those appended to here before they were owned, past the position.
        self._appended.update(self._slots)

    # -- reading -----------------------------------------------------------------------------

    async def poll(self, timeout_ms: int = 1000, max_records: int = 500) -> list[Record]:
        if not self._started:
            raise EventLogError("the consumer is not started")
        log = self._log
        # The clock is read once per step (after each await), not at every question.
        now = time.monotonic()
        deadline = now + timeout_ms / 1000
        looked = False
        while True:
            since = log.stamp
            if now >= self._next_sync or log.group_epoch(self._group) != self._seen_epoch:
                await self._sync()
                now = time.monotonic()
            remaining = deadline - now
            full = now >= self._next_read or (remaining <= 0 and not looked)
            if full or self._moved():
                looked = True
                if full:  # not pushed back by reads of moved partitions: see the docstring
                    self._next_read = now + _IDLE_READ_S
                records = await self._read(max_records, full)
                if records:
                    return records
                now = time.monotonic()
                remaining = deadline - now
            if remaining <= 0 or not self._started:
                return []
            wait = min(remaining, self._next_read - now, self._next_sync - now)
            await log.wait_for_change(since, self._topic_ids, max(0.0, wait))
            now = time.monotonic()

    def _moved(self) -> bool:
        """Has this process appended past the read position of any owned partition?"""
        appended = self._appended
        if not appended:
            return False
        local_end = self._log.local_end
        positions, slots = self._positions, self._slots
        for slot in list(appended):
            tp = slots.get(slot)
            if tp is None or local_end(*slot) <= positions[tp]:
                appended.discard(slot)  # not owned, or read up to its end already
        return bool(appended)

    async def _read(self, max_records: int, full: bool) -> list[Record]:
        """Read the owned partitions (``full``) or those this process appended to past the
        position: from the log's tail where it holds the position, else from the file, all of
        those in one job on the reader thread."""
        if not self._owned:
            return []
        if full:
            order = self._order
        else:  # only the partitions appended to here (_moved keeps only those past the position)
            slots = self._slots
            order = sorted([slots[slot] for slot in self._appended if slot in slots])
            if not order:
                return []
        self._rotation = (self._rotation + 1) % len(order)
        order = order[self._rotation :] + order[: self._rotation]
        log = self._log
        #: Each partition read with its records (never empty).
        chunks: list[tuple[TopicPartition, list[Record]]] = []
        jobs: list[tuple[TopicPartition, TopicInfo, int]] = []
        left = max_records
        for tp in order:
            if left <= 0:
                break
            tid, partition = self._owned[tp]
            offset = self._positions[tp]
            cached = log.tail_read(tid, partition, offset, left)
            if cached is not None:
                chunks.append((tp, cached))
                left -= len(cached)
            elif full or log.local_end(tid, partition) > offset:
                jobs.append((tp, self._topics[tid], offset))

        ends = self._ends

        def read_all(conn: sqlite3.Connection) -> list[tuple[TopicPartition, list[Record]]]:
            out = []
            budget = left
            for tp, info, offset in jobs:
                if budget <= 0:
                    break
                chunk = read_partition(conn, info, tp.partition, offset, budget)
                # A short read reached the end; a full one asks where the end is (one
                # index lookup), so the lag stays live without a query per partition.
                if len(chunk) < budget:
                    ends[tp] = chunk[-1].offset + 1 if chunk else offset
                else:
                    ends[tp] = next_offset(conn, info.id, tp.partition)
                if chunk:
                    out.append((tp, chunk))
                    budget -= len(chunk)
            return out

        if jobs and left > 0:
            chunks.extend(await log.read_with(read_all))
        records: list[Record] = []
        owned, positions, consumed = self._owned, self._positions, self._consumed
        for tp, chunk in chunks:
            if tp not in owned:  # revoked while reading
                continue
            nxt = chunk[-1].offset + 1
            positions[tp] = nxt
            consumed[tp] = nxt
            if records:
                records.extend(chunk)
            else:  # a chunk is a list of its own (a slice of the tail, or read): no copy
                records = chunk
        return records

    async def lag(self) -> dict[TopicPartition, int]:
        """Records of each owned partition past the read position: up to the end the last read
        of the file saw, or this process's own appends since, whichever is further."""
        local_end = self._log.local_end
        lags = {}
        for tp, slot in self._owned.items():
            end = max(self._ends.get(tp, 0), local_end(*slot))
            lags[tp] = max(0, end - self._positions[tp])
        return lags

    async def seek(self, tp: TopicPartition, offset: int) -> None:
        if tp not in self._owned:
            raise InvalidRequestError(f"{tp} is not assigned to this consumer")
        if offset < 0:
            raise InvalidRequestError(f"offset must be >= 0, not {offset}")
        self._positions[tp] = offset
        self._consumed.pop(tp, None)
        self._next_read = 0.0  # what is there is read at the next poll, whoever wrote it

    # -- offsets -----------------------------------------------------------------------------

    async def commit(self, offsets: Mapping[TopicPartition, int] | None = None) -> None:
        if offsets is None:
            offsets = dict(self._consumed)
        rows = []
        for tp, offset in offsets.items():
            slot = self._owned.get(tp)
            if slot is None:
                raise CommitFailedError(f"{tp} is not assigned to this consumer")
            if offset < 0:
                raise InvalidRequestError(f"offset must be >= 0, not {offset}")
            rows.append((slot, offset))
        if not rows:
            return
        group, member = self._group, self._member

        def commit(conn: sqlite3.Connection) -> None:
            for (tid, p), offset in rows:
                owner = conn.execute(
                    "SELECT member_id FROM partition_owners WHERE group_name = ? "
                    "AND topic_id = ? AND partition = ?",
                    (group, tid, p),
                ).fetchone()
                if owner is None or owner[0] != member:
                    raise CommitFailedError(f"partition {p} was reassigned; commit refused")
                conn.execute(
                    "INSERT OR REPLACE INTO group_offsets "
                    '(group_name, topic_id, partition, "offset") VALUES (?, ?, ?, ?)',
                    (group, tid, p, offset),
                )

        await self._log.write(commit)

    async def committed(self, tp: TopicPartition) -> int | None:
        info = await self._log.topic(tp.topic)
        group = self._group
        row = await self._log.read_with(
            lambda conn: conn.execute(
                'SELECT "offset" FROM group_offsets WHERE group_name = ? AND topic_id = ? '
                "AND partition = ?",
                (group, info.id, tp.partition),
            ).fetchone()
        )
        return None if row is None else int(row[0])
