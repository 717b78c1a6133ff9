"""arena_match."""
