"""Bring the projection database to the newest schema (``alembic upgrade heads``) at start-up.

The runtime's revisions live in ``migrations/versions``. A service with tables of its own ships a
directory of revisions on an independent branch of its own (first revision:
``down_revision=None``, ``branch_labels=("arena_rating",)``, no ``depends_on``) and names the
package holding it in its pyproject.toml::

    [project.entry-points."arena.migrations"]
    rating = "arena_rating.migrations"

Alembic applies independent branches in an order of its own choosing, so a branch creates only
its own tables and refers to no other branch's. (A ``depends_on`` the runtime's revision would
make Alembic leave that revision out of ``alembic_version``: the database would never report
being at every head.)

Every process migrates when it starts, and processes starting together (Kubernetes starts every
Deployment at once) take turns: on PostgreSQL behind a transaction-scoped advisory lock, on SQLite
behind the file's write lock. The first applies the migrations; the others find them applied.

A database already at every head (every start but a deployment's first after a release) is left
alone without Alembic: the heads are read from the revision files' own assignments and compared
with ``alembic_version``, which spares each process Alembic's import and its scan of the
revisions (about half a second of CPU). Anything else, or any doubt, goes through Alembic.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from arena_runtime.config import Settings
from arena_runtime.sql.engine import engine_from_settings

HERE = Path(__file__).resolve().parent
ALEMBIC_INI = HERE / "alembic.ini"
VERSIONS = HERE / "migrations" / "versions"
ENTRY_POINT_GROUP = "arena.migrations"
# Serialises start-up migrations of several services on one PostgreSQL database.
_PG_LOCK_KEY = 0x4152454E41  # "ARENA"


def version_locations(extra: Iterable[Path] = ()) -> list[Path]:
    """The runtime's revisions, those of every registered service, and ``extra``."""
    found = [VERSIONS]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        module = ep.load()
        found.append(Path(module.__file__).resolve().parent)
    found.extend(Path(p).resolve() for p in extra)
    return list(dict.fromkeys(found))


if TYPE_CHECKING:
    from alembic.config import Config


def alembic_config(extra_locations: Iterable[Path] = ()) -> Config:
    from alembic.config import Config

    config = Config(str(ALEMBIC_INI))
    locations = version_locations(extra_locations)
    config.set_main_option("version_locations", os.pathsep.join(str(p) for p in locations))
    return config


def head_revisions(extra_locations: Iterable[Path] = ()) -> set[str]:
    from alembic.script import ScriptDirectory

    return set(ScriptDirectory.from_config(alembic_config(extra_locations)).get_heads())


def declared_heads(extra_locations: Iterable[Path] = ()) -> set[str] | None:
    """The heads as the revision files declare them (``revision`` and ``down_revision``
    assigned literals), without Alembic; None when a file says it otherwise (Alembic decides)."""
    revisions: set[str] = set()
    replaced: set[str] = set()
    for location in version_locations(extra_locations):
        for path in sorted(location.glob("*.py")):
            if path.name == "__init__.py":
                continue
            try:
                found = _assigned(ast.parse(path.read_text(encoding="utf-8")))
            except (OSError, SyntaxError, ValueError):
                return None
            revision, down = found.get("revision"), found.get("down_revision")
            if not isinstance(revision, str):
                return None
            revisions.add(revision)
            if isinstance(down, str):
                replaced.add(down)
            elif isinstance(down, tuple | list) and all(isinstance(d, str) for d in down):
                replaced.update(down)
            elif down is not None:
                return None
    return revisions - replaced or None


def _assigned(tree: ast.Module) -> dict[str, object]:
    """The literal values a revision file assigns to ``revision`` and ``down_revision``."""
    found: dict[str, object] = {}
    for node in tree.body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
            found[target.id] = ast.literal_eval(value)
    return found


async def at_heads(engine: AsyncEngine, extra_locations: Iterable[Path] = ()) -> bool:
    """Whether the database is already at every head (then nothing is left to migrate)."""
    heads = declared_heads(extra_locations)
    if heads is None:
        return False
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(text("SELECT version_num FROM alembic_version"))
            current = {row[0] for row in rows}
    except SQLAlchemyError:  # no table yet: a new database
        return False
    return current == heads


async def upgrade_head(engine: AsyncEngine, extra_locations: Iterable[Path] = ()) -> None:
    """Apply every migration not applied yet, in one transaction, one process at a time."""
    from alembic import command

    config = alembic_config(extra_locations)

    def upgrade(connection: Connection) -> None:
        # Before Alembic starts: its environment is global to the process, so even engines of
        # one process must not interleave inside it.
        wait_for_turn(connection)
        config.attributes["connection"] = connection
        command.upgrade(config, "heads")

    async with for_migrations(engine).begin() as connection:
        await connection.run_sync(upgrade)


def for_migrations(engine: AsyncEngine) -> AsyncEngine:
    """``engine`` as a migration must use it (the same pool)."""
    if engine.dialect.name != "postgresql":
        return engine
    # Each statement must see what was committed before it ran: under REPEATABLE READ or
    # SERIALIZABLE (a server's default_transaction_isolation) the snapshot would be taken by the
    # lock statement itself, before the process holding the lock committed, and Alembic would
    # create every table again ("relation ... already exists").
    return engine.execution_options(isolation_level="READ COMMITTED")


def wait_for_turn(connection: Connection) -> None:
    """Block until no other process is migrating this database; the turn lasts as long as the
    connection's transaction."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
    # SQLite needs no lock of its own: the engine begins with BEGIN IMMEDIATE, which takes the
    # file's write lock before Alembic reads anything (waiting up to busy_timeout for it).


async def open_database(settings: Settings) -> AsyncEngine:
    """The configured database, migrated to the newest schema: what every process does first."""
    engine = engine_from_settings(settings)
    try:
        if not await at_heads(engine):
            await upgrade_head(engine)
    except BaseException:
        await engine.dispose()
        raise
    return engine


async def current_revisions(engine: AsyncEngine) -> set[str]:
    """The revisions the database is at (empty before the first upgrade)."""

    from alembic.runtime.migration import MigrationContext

    def read(connection: Connection) -> set[str]:
        return set(MigrationContext.configure(connection).get_current_heads())

    async with engine.connect() as connection:
        return await connection.run_sync(read)
