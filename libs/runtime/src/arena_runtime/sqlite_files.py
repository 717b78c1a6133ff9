"""What every SQLite file of Arena's shares: the event log's and the projections'.

Both are opened by several processes at once (``arena serve`` and its projections child, a
second service, ``arena verify``), so each connection must wait its turn for the file, never fail.
"""

from __future__ import annotations

import time
from typing import Any

BUSY_TIMEOUT_MS = 30_000


def switch_to_wal(cursor: Any) -> None:
    """Put the file in WAL mode, once for all its connections (``cursor``: any DB-API cursor).

    A file already in WAL mode is left alone. The first switch of a new file is retried while
    another connection writes: SQLite refuses the switch at once, without the busy handler (a CI
    run failed "database is locked" with services starting together).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode")
            if cursor.fetchone()[0] != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except Exception as error:  # sqlite3's, or a driver adapter's, OperationalError
            if "database is locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
