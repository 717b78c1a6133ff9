"""Typed rejections. The codes are exactly those of the rule vectors."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ErrorCode(StrEnum):
    # In the order of precedence the vectors define for a move breaking several rules.
    GAME_OVER = "game_over"
    NOT_YOUR_TURN = "not_your_turn"
    EXPRESSION_TOO_LONG = "expression_too_long"
    UNKNOWN_DIE = "unknown_die"
    ATTACKER_CAPTURED = "attacker_captured"
    TARGET_CAPTURED = "target_captured"
    STRENGTH_NEEDS_ONE_DIE = "strength_needs_one_die"
    THRESHOLD_NOT_MET = "threshold_not_met"
    MIND_NEEDS_TWO_DICE = "mind_needs_two_dice"
    DIE_USED_TWICE = "die_used_twice"
    VALUE_MISMATCH = "value_mismatch"
    # Expression errors (also the codes of the `evaluate` op).
    EMPTY_EXPRESSION = "empty_expression"
    MALFORMED_EXPRESSION = "malformed_expression"
    UNBALANCED_PARENTHESES = "unbalanced_parentheses"
    DIVISION_BY_ZERO = "division_by_zero"
    NON_INTEGER_RESULT = "non_integer_result"
    NOT_EQUAL_TARGET = "not_equal_target"
    FIRST_PLAYER_PENALTY = "first_player_penalty"
    # Beyond the vectors: commands that do not fit the game's life cycle or shape.
    NOT_STARTED = "not_started"
    ALREADY_STARTED = "already_started"
    UNKNOWN_PLAYER = "unknown_player"
    INVALID_COMMAND = "invalid_command"
    INVALID_RULESET = "invalid_ruleset"
    INVALID_CLOCKS = "invalid_clocks"


@dataclass(frozen=True)
class Rejection:
    """A refused command: the state is unchanged and the same player is still on move."""

    code: ErrorCode
    message: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"error": self.code.value}


class MathsWarriorsError(ValueError):
    """Raised by helpers that cannot return a Rejection (parsing, construction).

    A ValueError, like ``DigitsError`` and ``MatrixGamesError``: bad input, with a stable code.
    """

    def __init__(self, code: ErrorCode, message: str = "") -> None:
        super().__init__(f"{code.value}: {message}" if message else code.value)
        self.code = code
        self.message = message
