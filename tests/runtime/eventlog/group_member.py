"""A consumer-group member in its own process, for the cross-process group test.

``python -m tests.runtime.eventlog.group_member PATH GROUP TOPIC``: joins, polls forever, and
prints its assignment (sorted partitions, space-separated) every time it changes.
"""

from __future__ import annotations

import asyncio
import sys

from arena_runtime.eventlog.embedded import EmbeddedEventLog

SESSION_TIMEOUT_MS = 1_000
HEARTBEAT_MS = 100


async def main(path: str, group: str, topic: str) -> None:
    log = EmbeddedEventLog(
        path, session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_MS
    )
    await log.start()
    consumer = log.consumer(group, [topic])
    await consumer.start()
    shown = None
    while True:
        await consumer.poll(timeout_ms=50)
        now = sorted(tp.partition for tp in consumer.assignment())
        if now != shown:
            print(" ".join(map(str, now)), flush=True)
            shown = now


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
