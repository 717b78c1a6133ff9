"""The event log on Kafka, through aiokafka.

Appends wait for ``acks=all``. The idempotent producer stays off (Tansu, the broker the tests
start, does not implement it); a duplicate from a retried send is harmless because readers apply
an event only if its stream sequence is the next one.

Partitions are chosen here with the same partitioner as the embedded log and passed explicitly,
so both logs place every key alike. Topics are checked against the cluster's full metadata before
use: brokers (Kafka by default, Tansu always) create a topic on a metadata request naming it, which
would turn a typo into a new topic instead of an UnknownTopicError.

Tansu answers a fetch waiting at a partition's tail only when its wait is over (after half of it
for waits of 250 ms or more), not when a record arrives, and a connection answers its requests in
order, so a request sent behind such a fetch waits too. Hence a short fetch wait, a reader that
stops fetching once it has read to the end, and end offsets asked over a connection of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka import TopicPartition as KafkaTopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import CommitFailedError as KafkaCommitFailedError
from aiokafka.errors import IllegalStateError, KafkaError
from aiokafka.protocol.group import LeaveGroupRequest

from arena_runtime.eventlog.base import (
    GROUP_HEARTBEAT_MS,
    GROUP_SESSION_TIMEOUT_MS,
    CommitFailedError,
    Consumer,
    EventLog,
    EventLogError,
    InvalidRequestError,
    OutgoingRecord,
    Position,
    Record,
    TopicMismatchError,
    TopicPartition,
    TopicSpec,
    UnknownTopicError,
)
from arena_runtime.eventlog.kafka_security import KafkaSecurity
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.eventlog.validation import check_position, check_records, check_spec

_TOPIC_ALREADY_EXISTS = 36

_log = logging.getLogger(__name__)

C = TypeVar("C")


def _require(client: C | None) -> C:
    if client is None:
        raise EventLogError("the event log is not started")
    return client


def topic_configs(spec: TopicSpec, min_insync_replicas: int | None = None) -> dict[str, str]:
    configs = (
        {"cleanup.policy": "compact"}
        if spec.compacted
        else {"cleanup.policy": "delete", "retention.ms": str(spec.retention_ms)}
    )
    if min_insync_replicas is not None:
        # With acks=all an append is acknowledged once this many replicas hold it.
        configs["min.insync.replicas"] = str(min_insync_replicas)
    return configs


class KafkaEventLog(EventLog):
    def __init__(
        self,
        bootstrap: str,
        *,
        topic_prefix: str = "",
        replication_factor: int = 1,
        min_insync_replicas: int | None = None,
        security: KafkaSecurity | None = None,
        client_id: str = "arena",
        session_timeout_ms: int = GROUP_SESSION_TIMEOUT_MS,
        heartbeat_interval_ms: int = GROUP_HEARTBEAT_MS,
        fetch_max_wait_ms: int = 3,
    ) -> None:
        self.bootstrap = bootstrap
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        # How long a fetch at the tail may wait for new records. On Tansu a fresh record waits on
        # average half of it before a consumer sees it (aiokafka's default, 500 ms, cost 250 ms a
        # hop); each idle consumer also sends one fetch per wait. Measured on the online bench,
        # one game, p50 per move: 10 ms -> 11 ms, 3 ms -> 6.6 ms, 1 ms -> 6.7 ms with more CPU.
        self.fetch_max_wait_ms = fetch_max_wait_ms
        self.topic_prefix = topic_prefix
        self.replication_factor = replication_factor
        self.min_insync_replicas = min_insync_replicas
        self.security = security or KafkaSecurity()
        #: What every client is given besides its own options: TLS and SASL (set by start()).
        self.client_options: dict[str, Any] = {}
        self.client_id = client_id
        self._partitions: dict[str, int] = {}
        self._producer: AIOKafkaProducer | None = None
        self._admin: AIOKafkaAdminClient | None = None
        self._reader: AIOKafkaConsumer | None = None
        # Never assigned, so it never fetches: its ListOffsets do not queue behind a fetch.
        self._lister: AIOKafkaConsumer | None = None
        self._reader_lock = asyncio.Lock()
        self._known_ends: dict[KafkaTopicPartition, int] = {}
        # Where the reader stands after the last read: reading on from there keeps its prefetch.
        self._reader_at: tuple[KafkaTopicPartition, int] | None = None

    async def start(self) -> None:
        if self._producer is not None:
            return
        self.client_options = self.security.client_options()  # a ConfigError names a bad file
        common = {
            "bootstrap_servers": self.bootstrap,
            "client_id": self.client_id,
            **self.client_options,
        }
        self._admin = AIOKafkaAdminClient(**common)
        self._producer = AIOKafkaProducer(**common, acks="all", enable_idempotence=False)
        self._reader = AIOKafkaConsumer(
            **common,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=self.fetch_max_wait_ms,
        )
        self._lister = AIOKafkaConsumer(**common, group_id=None, enable_auto_commit=False)
        try:
            await self._admin.start()
            await self._producer.start()
            await self._reader.start()
            await self._lister.start()
        except Exception as exc:
            # Not only KafkaError: a failed TLS handshake is an ssl error, a refused SCRAM
            # exchange a KeyError inside aiokafka. None of them carries a password.
            await self.close()
            raise EventLogError(
                f"cannot reach Kafka at {self.bootstrap} ({self.security.describe()}): "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    async def close(self) -> None:
        reader, lister, producer, admin = self._reader, self._lister, self._producer, self._admin
        self._reader = self._lister = self._producer = self._admin = None
        # Every client is closed even if closing another one fails (last pushed, first closed).
        async with contextlib.AsyncExitStack() as clients:
            if admin is not None:
                clients.push_async_callback(admin.close)
            for client in (producer, reader, lister):
                if client is not None:
                    clients.push_async_callback(client.stop)

    def physical(self, topic: str) -> str:
        return self.topic_prefix + topic

    # -- topics ------------------------------------------------------------------------------

    async def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        for spec in specs:
            check_spec(spec)
        if not specs:
            return
        admin = _require(self._admin)
        response = await admin.create_topics(
            [
                NewTopic(
                    self.physical(s.name),
                    s.partitions,
                    self.replication_factor,
                    topic_configs=topic_configs(s, self.min_insync_replicas),
                )
                for s in specs
            ]
        )
        for topic, code, message in response.topic_errors:
            if code not in (0, _TOPIC_ALREADY_EXISTS):
                raise EventLogError(f"cannot create topic {topic}: error {code} {message}")

    async def check_topics(self, specs: Sequence[TopicSpec]) -> None:
        """Partition counts and replication factors of existing topics, in one request.

        Only topics known to exist are described (a metadata request naming a missing topic
        would create it, see the module's docstring); a missing one is an UnknownTopicError.
        """
        if not specs:
            return
        for spec in specs:
            await self.partitions(spec.name)
        admin = _require(self._admin)
        try:
            described = await admin.describe_topics([self.physical(s.name) for s in specs])
        except KafkaError as exc:
            raise EventLogError(f"cannot describe topics: {exc}") from exc
        layouts = {
            topic["topic"]: [len(p["replicas"]) for p in topic["partitions"]] for topic in described
        }
        for spec in specs:
            name = self.physical(spec.name)
            replicas = layouts[name]
            if len(replicas) != spec.partitions:
                raise TopicMismatchError(name, "partitions", spec.partitions, len(replicas))
            wrong = [r for r in replicas if r != self.replication_factor]
            if wrong:
                raise TopicMismatchError(
                    name, "replication factor", self.replication_factor, wrong[0]
                )

    async def partitions(self, topic: str) -> int:
        count = self._partitions.get(topic)
        if count is None:
            producer = _require(self._producer)
            # All topics, so the broker is not asked about (and does not create) this one.
            try:
                cluster = await producer.client.fetch_all_metadata()
            except KafkaError as exc:
                raise EventLogError(f"cannot read the cluster's topics: {exc}") from exc
            found = cluster.partitions_for_topic(self.physical(topic))
            if not found:
                raise UnknownTopicError(f"unknown topic {topic!r}")
            count = self._partitions[topic] = len(found)
        return count

    # -- appends and reads -------------------------------------------------------------------

    async def append(self, topic: str, records: Sequence[OutgoingRecord]) -> list[Position]:
        partitions = await self.partitions(topic)
        check_records(topic, records, partitions)
        producer = _require(self._producer)
        name = self.physical(topic)
        try:
            futures = [
                await producer.send(
                    name,
                    r.value,
                    key=r.key,
                    partition=partition_for(r.key, partitions)
                    if r.partition is None
                    else r.partition,
                    headers=list(r.headers) if r.headers else None,
                )
                for r in records
            ]
            # One by one rather than gather(): they complete together, and this is cheaper.
            done = [await future for future in futures]
        except KafkaError as exc:
            raise EventLogError(f"append to {topic} failed: {exc}") from exc
        return [Position(topic, md.partition, md.offset) for md in done]

    async def read(
        self, topic: str, partition: int, offset: int, max_records: int = 1000
    ) -> list[Record]:
        partitions = await self.partitions(topic)
        check_position(topic, partition, partitions, offset)
        reader = _require(self._reader)
        tp = KafkaTopicPartition(self.physical(topic), partition)
        async with self._reader_lock:
            end = self._known_ends.get(tp, 0)
            if offset >= end:
                end = (await self._true_ends([tp]))[tp]
            if offset >= end:
                return []
            if self._reader_at != (tp, offset):
                reader.assign([tp])
                reader.seek(tp, offset)
            else:
                reader.resume(tp)
            out: list[Record] = []
            position = offset
            while len(out) < max_records and position < end:
                batch = await reader.getmany(
                    tp, timeout_ms=1000, max_records=max_records - len(out)
                )
                for r in batch.get(tp, ()):
                    out.append(
                        Record(
                            topic,
                            partition,
                            r.offset,
                            r.key,
                            r.value,
                            tuple(r.headers),
                            r.timestamp,
                        )
                    )
                    position = r.offset + 1
                end = max(end, reader.highwater(tp) or 0)
            if position >= end:
                # Read to the end: a prefetch would only wait at the tail, and on Tansu delay the
                # next ListOffsets or fetch behind it; the next read at the end asks for the end.
                reader.pause(tp)
            self._known_ends[tp] = end
            self._reader_at = (tp, position)
            return out

    async def end_offsets(self, topic: str) -> dict[int, int]:
        partitions = await self.partitions(topic)
        name = self.physical(topic)
        async with self._reader_lock:
            ends = await self._true_ends([KafkaTopicPartition(name, p) for p in range(partitions)])
        return {tp.partition: end for tp, end in ends.items()}

    async def end_offset(self, topic: str, partition: int) -> int:
        check_position(topic, partition, await self.partitions(topic), 0)
        tp = KafkaTopicPartition(self.physical(topic), partition)
        async with self._reader_lock:
            ends = await self._true_ends([tp])
        return ends[tp]

    async def _true_ends(self, tps: list[KafkaTopicPartition]) -> dict[KafkaTopicPartition, int]:
        """End offsets, confirmed by the high watermark of a fetch of each partition's tail.

        Tansu answers ListOffsets(latest) with the base offset of the last batch plus one, not
        the offset after its last record; a fetch from there reports the true high watermark.
        On Kafka the two agree and the fetch only costs a round trip.
        """
        reader = _require(self._reader)
        ends: dict[KafkaTopicPartition, int] = dict(await _require(self._lister).end_offsets(tps))
        pending = {tp for tp, end in ends.items() if end > 0}
        if pending:
            self._reader_at = None
            reader.assign(list(pending))
            for tp in pending:
                reader.seek(tp, ends[tp] - 1)
            deadline = asyncio.get_running_loop().time() + 10
            while pending and asyncio.get_running_loop().time() < deadline:
                fetched = await reader.getmany(*pending, timeout_ms=1000, max_records=1)
                for tp in fetched:
                    ends[tp] = max(ends[tp], reader.highwater(tp) or 0)
                    pending.discard(tp)
            # Confirmed: no fetch of these partitions should wait at their tails meanwhile.
            reader.pause(*reader.assignment())
        self._known_ends.update(ends)
        return ends

    def consumer(
        self, group: str, topics: Sequence[str], *, every_partition: bool = False
    ) -> Consumer:
        return KafkaConsumer(self, group, list(topics), every_partition=every_partition)


def _fetch_position(consumer: AIOKafkaConsumer, tp: KafkaTopicPartition) -> int | None:
    """Where the fetcher of a partition stands, without waiting (``position()`` waits for a
    reset): aiokafka keeps it in its subscription state. None if unknown."""
    try:
        state = consumer._subscription.subscription.assignment.state_value(tp)
        return int(state.position) if state is not None and state.has_valid_position else None
    except AttributeError:  # another aiokafka: the lag of such a partition is not known
        return None


def _leave_from_generation_zero(consumer: AIOKafkaConsumer) -> None:
    """Make a stopping member leave its group also when the group's generation is 0.

    aiokafka sends LeaveGroup on stop only for generations above 0, as Kafka numbers them from 1;
    Tansu numbers them from 0, so a member of a group's first generation left silently and its
    successor (a restart, a rolling update) waited for the old session to expire before the
    group rebalanced: 18 s with 10 s sessions. Leaving is what a stopping member does anyway
    (its offsets are committed first); on Kafka this changes nothing.
    """
    coordinator = getattr(consumer, "_coordinator", None)
    leave = getattr(coordinator, "_maybe_leave_group", None)
    if coordinator is None or leave is None:  # another aiokafka: its own behaviour stands
        return

    async def maybe_leave_group() -> None:
        if (
            coordinator.generation == 0
            and coordinator.member_id
            and coordinator._group_instance_id is None
        ):
            try:
                await coordinator._send_req(
                    LeaveGroupRequest(coordinator.group_id, coordinator.member_id)
                )
            except KafkaError as exc:
                _log.warning("group %s: LeaveGroup failed: %s", coordinator.group_id, exc)
        await leave()

    coordinator._maybe_leave_group = maybe_leave_group


class _ForgetRevoked(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, consumed: dict[KafkaTopicPartition, int]) -> None:
        self._consumed = consumed

    async def on_partitions_revoked(self, revoked: set[KafkaTopicPartition]) -> None:
        for tp in revoked:
            self._consumed.pop(tp, None)

    async def on_partitions_assigned(self, assigned: set[KafkaTopicPartition]) -> None:
        pass


class KafkaConsumer(Consumer):
    """A group member; the broker assigns partitions, offsets are committed explicitly.

    With ``every_partition`` it joins no group: it assigns itself every partition of its topics
    at start (ready at once, where a join waits half the session timeout on Tansu), and has no
    offsets to commit or read back.
    """

    def __init__(
        self, log: KafkaEventLog, group: str, topics: list[str], *, every_partition: bool = False
    ) -> None:
        if not group:
            raise InvalidRequestError("a consumer group needs a name")
        self._log = log
        self._group = self.group = group
        self._topics = topics
        self.every_partition = every_partition
        self._consumer: AIOKafkaConsumer | None = None
        self._consumed: dict[KafkaTopicPartition, int] = {}
        self._prefix_len = len(log.topic_prefix)

    async def start(self) -> None:
        counts = {topic: await self._log.partitions(topic) for topic in self._topics}
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._log.bootstrap,
            client_id=self._log.client_id,
            **self._log.client_options,
            # Prefixed like topics, so sessions sharing a broker never join each other's groups.
            group_id=None if self.every_partition else self._log.physical(self._group),
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=self._log.session_timeout_ms,
            heartbeat_interval_ms=self._log.heartbeat_interval_ms,
            fetch_max_wait_ms=self._log.fetch_max_wait_ms,
        )
        try:
            await consumer.start()
            if self.every_partition:
                consumer.assign(
                    [
                        KafkaTopicPartition(self._log.physical(topic), partition)
                        for topic, count in counts.items()
                        for partition in range(count)
                    ]
                )
            else:
                _leave_from_generation_zero(consumer)
                consumer.subscribe(
                    [self._log.physical(t) for t in self._topics],
                    listener=_ForgetRevoked(self._consumed),
                )
        except BaseException as exc:
            await consumer.stop()  # its connections and background tasks
            if isinstance(exc, KafkaError):
                raise EventLogError(
                    f"group {self._group} cannot join at {self._log.bootstrap}: {exc}"
                ) from exc
            raise
        self._consumer = consumer

    async def stop(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None
            self._consumed.clear()

    def _kafka_tp(self, tp: TopicPartition) -> KafkaTopicPartition:
        return KafkaTopicPartition(self._log.physical(tp.topic), tp.partition)

    async def poll(self, timeout_ms: int = 1000, max_records: int = 500) -> list[Record]:
        consumer = _require(self._consumer)
        batches = await consumer.getmany(timeout_ms=timeout_ms, max_records=max_records)
        cut = self._prefix_len
        new = tuple.__new__  # skip the named tuple's Python-level __new__: this is the hot loop
        out: list[Record] = []
        for tp, batch in batches.items():
            if not batch:
                continue
            topic = tp.topic[cut:]
            out += [
                new(Record, (topic, r.partition, r.offset, r.key, r.value, r.headers, r.timestamp))
                for r in batch
            ]
            self._consumed[tp] = batch[-1].offset + 1
        return out

    async def commit(self, offsets: Mapping[TopicPartition, int] | None = None) -> None:
        consumer = _require(self._consumer)
        if self.every_partition:
            raise InvalidRequestError(f"{self._group} reads every partition in no group: no commit")
        if offsets is None:
            assigned = consumer.assignment()
            kafka_offsets = {tp: o for tp, o in self._consumed.items() if tp in assigned}
        else:
            kafka_offsets = {}
            for tp, offset in offsets.items():
                if offset < 0:
                    raise InvalidRequestError(f"offset must be >= 0, not {offset}")
                kafka_offsets[self._kafka_tp(tp)] = offset
        if not kafka_offsets:
            return
        try:
            await consumer.commit(kafka_offsets)
        except (KafkaCommitFailedError, IllegalStateError) as exc:
            raise CommitFailedError(str(exc)) from exc

    async def committed(self, tp: TopicPartition) -> int | None:
        consumer = _require(self._consumer)
        if self.every_partition:
            return None  # no group, nothing committed
        offset = await consumer.committed(self._kafka_tp(tp))
        return None if offset is None else int(offset)

    def assignment(self) -> frozenset[TopicPartition]:
        if self._consumer is None:
            return frozenset()
        cut = self._prefix_len
        return frozenset(
            TopicPartition(tp.topic[cut:], tp.partition) for tp in self._consumer.assignment()
        )

    async def lag(self) -> dict[TopicPartition, int]:
        """The high watermark each fetch response carries, minus the fetch position."""
        consumer = self._consumer
        if consumer is None:
            return {}
        cut = self._prefix_len
        out: dict[TopicPartition, int] = {}
        for ktp in consumer.assignment():
            highwater = consumer.highwater(ktp)
            position = self._consumed.get(ktp)
            if position is None:
                position = _fetch_position(consumer, ktp)
            if highwater is not None and position is not None:
                out[TopicPartition(ktp.topic[cut:], ktp.partition)] = max(0, highwater - position)
        return out

    async def seek(self, tp: TopicPartition, offset: int) -> None:
        consumer = _require(self._consumer)
        ktp = self._kafka_tp(tp)
        if ktp not in consumer.assignment():
            raise InvalidRequestError(f"{tp} is not assigned to this consumer")
        if offset < 0:
            raise InvalidRequestError(f"offset must be >= 0, not {offset}")
        consumer.seek(ktp, offset)
        self._consumed.pop(ktp, None)
