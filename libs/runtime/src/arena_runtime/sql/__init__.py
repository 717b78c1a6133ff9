"""SQL projections: engines for PostgreSQL and SQLite, migrations, the projection runner."""

from arena_runtime.sql.engine import (
    DatabaseUrlError,
    create_engine,
    database_url,
    engine_from_settings,
    session_factory,
)
from arena_runtime.sql.metadata import metadata, projection_offsets
from arena_runtime.sql.migrate import open_database, upgrade_head
from arena_runtime.sql.projection import MalformedRecordError, Projection, ProjectionError
from arena_runtime.sql.registry import ProjectionRegistry, registry
from arena_runtime.sql.runner import ProjectionRunner
from arena_runtime.sql.stream_activity import StreamActivity, stream_activity

__all__ = [
    "DatabaseUrlError",
    "MalformedRecordError",
    "Projection",
    "ProjectionError",
    "ProjectionRegistry",
    "ProjectionRunner",
    "StreamActivity",
    "create_engine",
    "database_url",
    "engine_from_settings",
    "metadata",
    "open_database",
    "projection_offsets",
    "registry",
    "session_factory",
    "stream_activity",
    "upgrade_head",
]
