"""Alembic revisions of the rating and match read models (branch ``arena_rating``).

Found through the ``arena.migrations`` entry point, so every process that migrates the database
creates these tables, the gateway's read API included.
"""
