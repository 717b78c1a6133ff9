"""arena_cli."""
