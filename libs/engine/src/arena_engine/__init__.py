"""arena_engine."""
