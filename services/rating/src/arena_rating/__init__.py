"""arena_rating."""
