"""`arena migrate`: bring the projection database to the newest schema, every branch of it.

What each process does when it opens the database (arena_runtime.sql.migrate), for an operator who
wants it done before a deploy. A bare `alembic upgrade heads` with the runtime's alembic.ini would
apply only the runtime's branch: the services' branches are found through entry points.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena_runtime.config import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    migrate = sub.add_parser(
        "migrate",
        help="apply every migration not applied yet (the runtime's and every service's branch)",
    )
    migrate.set_defaults(func=run_migrate)


async def _migrate(settings: Settings) -> tuple[set[str], set[str]]:
    from arena_runtime.sql.migrate import current_revisions, head_revisions, open_database

    engine = await open_database(settings)
    try:
        return await current_revisions(engine), head_revisions()
    finally:
        await engine.dispose()


def run_migrate(args: argparse.Namespace) -> int:
    from arena_runtime.config import ConfigError, load_settings
    from sqlalchemy.exc import SQLAlchemyError

    try:
        at, heads = asyncio.run(_migrate(load_settings()))
    except (ConfigError, SQLAlchemyError, OSError) as exc:
        print(f"arena migrate: {exc}", file=sys.stderr)
        return 2
    if at != heads:  # another process downgraded or a branch is missing: say so, do not hide it
        print(f"arena migrate: at {sorted(at)}, expected {sorted(heads)}", file=sys.stderr)
        return 1
    print(f"database at every head: {', '.join(sorted(at))}")
    return 0
