"""arena_gateway."""
