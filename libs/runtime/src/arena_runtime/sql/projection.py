"""What a projection is: a named read model in SQL, fed by the records of some topics."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from arena_runtime.envelope import EnvelopeError
from arena_runtime.eventlog.base import Record


class MalformedRecordError(Exception):
    """Raised by ``Projection.apply`` for a record it cannot read (undecodable, unknown type).

    The runner logs the record's topic, partition and offset, counts it and moves past it.
    ``apply`` must raise it before writing anything, since the rest of the batch commits.
    The envelope's own decode errors (``arena_runtime.envelope.EnvelopeError``) are treated alike.
    """

    reason = "malformed"


#: Errors that make the runner pass over one record instead of failing its batch.
UNREADABLE = (MalformedRecordError, EnvelopeError)

#: A record passed over, and why.
Skipped = tuple[Record, MalformedRecordError | EnvelopeError]


class ProjectionError(Exception):
    """A projection is declared wrongly (bad name, no topics, unknown tables)."""


class Projection(abc.ABC):
    """A read model that can be thrown away and rebuilt from the log.

    ``apply`` must depend only on the records it is given and the rows the projection owns, so
    replaying the same log into empty tables gives the same rows (see ``arena rebuild``).
    Tables are listed parents first; a rebuild empties them in reverse order.
    """

    #: Unique, stable: the key of the projection's stored offsets.
    name: str
    #: Topics whose records are applied (every partition of each).
    topics: Sequence[str]
    #: The tables this projection owns and nothing else writes.
    tables: Sequence[Table]

    @abc.abstractmethod
    async def apply(self, session: AsyncSession, record: Record) -> None:
        """Apply one record inside the runner's transaction; never commit here."""

    async def apply_batch(self, session: AsyncSession, records: Sequence[Record]) -> list[Skipped]:
        """Apply records in the order given; return the unreadable ones passed over.

        The runner passes a step's partitions in one call, one after the other, each in offset
        order. The default applies record by record. Override it to write a batch in a few
        statements instead of several per record; the result must equal applying the records
        one by one.
        """
        skipped: list[Skipped] = []
        for record in records:
            try:
                await self.apply(session, record)
            except UNREADABLE as exc:
                skipped.append((record, exc))
        return skipped

    def passes_over(self, record: Record) -> bool:
        """True for a record that ``apply_batch`` would write nothing for, told cheaply from its
        key or headers without decoding it; a step of such records only moves the offsets, which
        the runner then stores with a later transaction instead of one of their own (a crash
        before it makes the records be read and passed over again). The default: none."""
        return False


def check_projection(projection: Projection) -> None:
    """Reject a projection the runner could not key, feed or rebuild."""
    name = getattr(projection, "name", "")
    if not isinstance(name, str) or not name or len(name) > 200:
        raise ProjectionError(f"projection name must be 1-200 characters, got {name!r}")
    topics = getattr(projection, "topics", ())
    if not topics or not all(isinstance(t, str) and t for t in topics):
        raise ProjectionError(f"projection {name!r} must read at least one named topic")
    tables = getattr(projection, "tables", ())
    if not all(isinstance(t, Table) for t in tables):
        raise ProjectionError(f"projection {name!r}: tables must be sqlalchemy Table objects")


def dialect_name(session: AsyncSession) -> str:
    """The session's database ("postgresql", "sqlite"): the key of statements built once per
    dialect, since building one (an upsert's ``excluded`` above all) can cost more CPU than
    writing its rows."""
    return session.get_bind().dialect.name


def dialect_insert(dialect: str) -> Any:
    """The dialect's ``insert``, which knows ``ON CONFLICT`` (PostgreSQL and SQLite alike): one
    upsert writes a batch's new and known rows in one statement, on either database."""
    return postgresql.insert if dialect == "postgresql" else sqlite.insert
