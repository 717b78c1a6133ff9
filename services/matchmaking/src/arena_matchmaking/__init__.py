"""arena_matchmaking."""
