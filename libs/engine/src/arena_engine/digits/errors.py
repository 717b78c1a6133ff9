"""The one base of Digits' typed errors, so a caller can catch them all and read a stable code."""

from __future__ import annotations


class DigitsError(ValueError):
    """An input the rules refuse; `code` is stable and nothing is changed."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code
