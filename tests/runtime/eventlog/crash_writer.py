"""Appends to an embedded log forever, printing each acknowledged record (crash-test subject).

``python -m tests.runtime.eventlog.crash_writer PATH ROUND``; every line printed is
``partition offset value`` of a record whose append has returned, or ``C partition offset`` for
a group commit that has returned.
"""

from __future__ import annotations

import asyncio
import sys

from arena_runtime.eventlog import OutgoingRecord, TopicSpec
from arena_runtime.eventlog.embedded import EmbeddedEventLog

TOPIC = "crash"
GROUP = "crash-readers"
WRITERS = 16


async def writer(log: EmbeddedEventLog, round_: str, n: int) -> None:
    i = 0
    while True:
        i += 1
        if i % 5 == 0:  # now and then a batch, to crash mid-batch too
            records = [
                OutgoingRecord(value=f"{round_}-{n}-{i}-{j}".encode(), key=f"s{n}-{j}".encode())
                for j in range(20)
            ]
        else:
            records = [OutgoingRecord(value=f"{round_}-{n}-{i}".encode(), key=f"s{n}".encode())]
        positions = await log.append(TOPIC, records)
        sys.stdout.write(
            "".join(
                f"{p.partition} {p.offset} {r.value.decode()}\n"
                for p, r in zip(positions, records, strict=True)
            )
        )
        sys.stdout.flush()


async def committer(log: EmbeddedEventLog) -> None:
    """A group member that commits what it read; prints ``C partition offset`` per commit."""
    consumer = log.consumer(GROUP, [TOPIC])
    await consumer.start()
    while True:
        records = await consumer.poll(timeout_ms=100, max_records=50)
        if records:
            await consumer.commit()
            ends: dict[int, int] = {}
            for r in records:
                ends[r.partition] = r.offset + 1
            sys.stdout.write("".join(f"C {p} {o}\n" for p, o in ends.items()))
            sys.stdout.flush()


async def main(path: str, round_: str) -> None:
    log = EmbeddedEventLog(path)
    await log.start()
    await log.create_topics([TopicSpec(TOPIC, partitions=4)])
    print("ready", flush=True)
    await asyncio.gather(committer(log), *(writer(log, round_, n) for n in range(WRITERS)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
