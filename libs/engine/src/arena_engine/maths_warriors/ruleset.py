"""The ruleset a match is played under: the documents' tag and the four disputed options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from .errors import ErrorCode, MathsWarriorsError

RULES_TAG = "2026.07.31"


class FirstPlayerPenalty(StrEnum):
    STRENGTH_ONLY = "strength_only"
    STRENGTH_AND_MIND = "strength_and_mind"


class TimeoutWinner(StrEnum):
    FEWER_OWN_DICE = "fewer_own_dice"
    FEWER_OPPONENT_DICE = "fewer_opponent_dice"


class FirstPlayerCompare(StrEnum):
    SORTED_VALUES = "sorted_values"
    BY_DIE_TYPE = "by_die_type"


class AllEqualStart(StrEnum):
    PLAYER1 = "player1"
    ROLLOFF = "rolloff"


@dataclass(frozen=True)
class Ruleset:
    """Defaults are the documents' rulings; the alternatives are an organiser's choices."""

    tag: str = RULES_TAG
    first_player_penalty: FirstPlayerPenalty = FirstPlayerPenalty.STRENGTH_ONLY
    timeout_winner: TimeoutWinner = TimeoutWinner.FEWER_OWN_DICE
    first_player_compare: FirstPlayerCompare = FirstPlayerCompare.SORTED_VALUES
    all_equal_start: AllEqualStart = AllEqualStart.PLAYER1

    def to_dict(self) -> dict[str, str]:
        return {f.name: str(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Ruleset:
        """Build from plain data; unknown options or values raise ``invalid_ruleset``."""
        data = dict(data or {})
        options: dict[str, Any] = {}
        kinds: dict[str, type[StrEnum]] = {
            "first_player_penalty": FirstPlayerPenalty,
            "timeout_winner": TimeoutWinner,
            "first_player_compare": FirstPlayerCompare,
            "all_equal_start": AllEqualStart,
        }
        tag = data.pop("tag", RULES_TAG)
        if tag != RULES_TAG:
            raise MathsWarriorsError(ErrorCode.INVALID_RULESET, f"unknown rules tag {tag!r}")
        for name, value in data.items():
            kind = kinds.get(name)
            if kind is None:
                raise MathsWarriorsError(ErrorCode.INVALID_RULESET, f"unknown option {name!r}")
            try:
                options[name] = kind(value)
            except ValueError:
                allowed = ", ".join(k.value for k in kind)
                raise MathsWarriorsError(
                    ErrorCode.INVALID_RULESET, f"{name} must be one of {allowed}, not {value!r}"
                ) from None
        return cls(**options)


DEFAULT_RULESET = Ruleset()
