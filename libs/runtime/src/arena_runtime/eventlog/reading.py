"""Reading one partition forward to an offset, batch by batch, outside a consumer group.

Readers that track their own offsets (the stream runner, the lobby directory) all read the
same way: from where they stopped up to a target offset, stopping early if the log has less.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from arena_runtime.eventlog.base import EventLog, Record


async def read_forward(
    log: EventLog, topic: str, partition: int, start: int, until: int, batch: int = 1000
) -> AsyncIterator[list[Record]]:
    """Yield the records of ``topic``/``partition`` from ``start`` below ``until``, in batches.

    The caller's next offset after a batch is ``batch[-1].offset + 1``. Records already at or
    past ``until`` in the last batch are yielded too, as one read returns them.
    """
    offset = start
    while offset < until:
        records = await log.read(topic, partition, offset, batch)
        if not records:
            return
        yield records
        offset = records[-1].offset + 1
