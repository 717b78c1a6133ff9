"""Typed errors: every rejection carries a stable code and changes nothing."""

from __future__ import annotations


class MatrixGamesError(ValueError):
    """Base of every Matrix Games rejection; ``code`` is stable and machine-readable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class SettingsError(MatrixGamesError):
    """A rule setting is unknown, of the wrong type, or out of its accepted range."""


class OrderError(MatrixGamesError):
    """An order names an unknown intent, a token or target out of range, or the wrong seat."""


class ReplayError(MatrixGamesError):
    """A replay document is not a well-formed ``matrix.replay.v1``."""
