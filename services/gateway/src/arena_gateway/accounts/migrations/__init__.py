"""Alembic revisions of the accounts read model (branch ``arena_accounts``), found through the
gateway's ``arena.migrations`` entry point."""
