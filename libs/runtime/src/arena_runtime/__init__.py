"""arena_runtime."""
