"""The game seam: the contract every game implements, the registry, one module per game."""
