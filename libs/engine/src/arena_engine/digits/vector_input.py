"""Reading the fields of a rule-vector case, with a typed error for a wrong shape or range."""

from __future__ import annotations

from typing import Any

from .errors import DigitsError

Case = dict[str, Any]


class VectorInputError(DigitsError):
    """A rule-vector input of the wrong shape or range."""


def int_field(case: Case, key: str, default: int | None = None) -> int:
    value = case.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise VectorInputError(f"bad_{key}")
    return value


def optional_int(case: Case, key: str) -> int | None:
    return None if case.get(key) is None else int_field(case, key)


def str_field(case: Case, key: str) -> str:
    value = case.get(key)
    if not isinstance(value, str) or not value:
        raise VectorInputError(f"bad_{key}")
    return value


def list_field(case: Case, key: str) -> list[Any]:
    value = case.get(key)
    if not isinstance(value, list):
        raise VectorInputError(f"bad_{key}")
    return value


def dict_field(case: Case, key: str) -> dict[str, Any]:
    value = case.get(key)
    if not isinstance(value, dict):
        raise VectorInputError(f"bad_{key}")
    return value
