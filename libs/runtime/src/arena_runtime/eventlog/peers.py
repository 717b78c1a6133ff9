"""Wake-ups between processes that share one embedded log file.

Without them a process sees another's appends only at its consumers' periodic read (every
100 ms), which is fine for the projections but not on the path of a move: when `arena serve`
runs the gateway and the services in processes of their own, a command and its views each
cross a process boundary. So every log that opens the file has a datagram socket (Linux's
abstract namespace: no file to clean up after a ``kill -9``) and a row in ``log_peers``; after
each commit the writer thread sends every other peer the last record id written to each
partition (8 bytes each, one datagram per commit), and the receiving log treats those ends
like its own appends: it wakes the consumers that read those topics, which then read the
partitions that moved from the file.

A wake-up is a hint, never the only way to learn of a record: one lost (a full socket buffer,
a peer that registered after the send) costs at most the periodic read's delay. A peer that is
gone refuses the datagram (``ECONNREFUSED``) and its row is deleted at the next refresh.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import struct
import uuid
from collections.abc import Iterable

PEERS_SCHEMA = """
CREATE TABLE IF NOT EXISTS log_peers (
    address BLOB PRIMARY KEY,
    pid INTEGER NOT NULL
) WITHOUT ROWID;
"""

#: How often the writer re-reads the peers' addresses (a new peer waits at most this long for
#: its first wake-up, and reads every 100 ms until then).
REFRESH_S = 0.5
#: Record ids per datagram: 8 bytes each, well inside the default socket buffer.
MAX_IDS = 512
_ID = struct.Struct(">q")


class Peers:
    """This log's socket, and the addresses of the other logs on the file that listen.

    ``send`` and ``refresh`` run on the writer thread (inside its transaction), ``drain`` on
    the event loop; the only state they share is the socket, which is safe to use from both.
    A log that does not ``listen`` still tells the others of its appends, but is not told of
    theirs (a reader off the path of a move, such as the projections, which would only read
    smaller batches more often).
    """

    def __init__(self, listen: bool) -> None:
        self.listen = listen
        self.address = f"\0arena-log-{os.getpid()}-{uuid.uuid4().hex[:12]}".encode()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if listen:
            self.sock.bind(self.address)
        self.sock.setblocking(False)
        #: The other listening peers' addresses (the writer skips building a send without).
        self.others: list[bytes] = []
        self._gone: set[bytes] = set()
        self._refreshed = float("-inf")

    def register(self, conn: sqlite3.Connection) -> None:
        conn.executescript(PEERS_SCHEMA)
        if not self.listen:
            return
        conn.execute(
            "INSERT OR REPLACE INTO log_peers (address, pid) VALUES (?, ?)",
            (self.address, os.getpid()),
        )

    def unregister(self, conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM log_peers WHERE address = ?", (self.address,))

    def refresh(self, conn: sqlite3.Connection, now: float) -> None:
        """Re-read the other peers (at most every REFRESH_S); forget those that were gone."""
        if now - self._refreshed < REFRESH_S:
            return
        self._refreshed = now
        if self._gone:
            conn.executemany("DELETE FROM log_peers WHERE address = ?", [(a,) for a in self._gone])
            self._gone.clear()
        rows = conn.execute("SELECT address FROM log_peers").fetchall()
        self.others = [a for (a,) in rows if a != self.address]

    def send(self, last_ids: Iterable[int]) -> None:
        """Tell every other peer where the partitions just written end (their last ids)."""
        ids = list(last_ids)
        if not ids:
            return
        for start in range(0, len(ids), MAX_IDS):
            chunk = ids[start : start + MAX_IDS]
            payload = struct.pack(f">{len(chunk)}q", *chunk)
            for address in self.others:
                try:
                    self.sock.sendto(payload, address)
                except BlockingIOError:
                    pass  # its buffer is full: it is behind, and will read everything anyway
                except (ConnectionRefusedError, FileNotFoundError):
                    self._gone.add(address)
        if self._gone:
            self.others = [a for a in self.others if a not in self._gone]

    def drain(self) -> list[int]:
        """Every record id announced since the last drain (never blocks)."""
        ids: list[int] = []
        while True:
            try:
                payload = self.sock.recv(MAX_IDS * _ID.size)
            except (BlockingIOError, InterruptedError):
                return ids
            ids.extend(struct.unpack(f">{len(payload) // _ID.size}q", payload))

    def close(self) -> None:
        self.sock.close()
