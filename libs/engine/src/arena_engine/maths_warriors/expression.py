"""Tokenizer and exact evaluator of Mind-attack arithmetic.

Standard precedence (× ÷ over + −), left associativity, nested parentheses, exact rational
arithmetic: intermediate values may be fractions or negative, only the final value must be an
integer. There are no unary operators: a leading or doubled operator is malformed, as in the
reference engine's grammar.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TypeAlias

from .errors import ErrorCode, MathsWarriorsError

#: A token is an integer literal, an operator (``+ - * /``) or a parenthesis.
Token: TypeAlias = int | str

OPERATORS = frozenset("+-*/")
_ALIASES = {"×": "*", "÷": "/", "−": "-", "x": "*", "X": "*"}
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


class ExpressionError(MathsWarriorsError):
    pass


def normalise_symbol(symbol: str) -> str:
    return _ALIASES.get(symbol, symbol)


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch.isascii() and ch.isdigit():
            j = i
            while j < len(text) and text[j].isascii() and text[j].isdigit():
                j += 1
            tokens.append(int(text[i:j]))
            i = j
        elif ch in "()" or normalise_symbol(ch) in OPERATORS:
            tokens.append(normalise_symbol(ch))
            i += 1
        else:
            raise ExpressionError(ErrorCode.MALFORMED_EXPRESSION, f"unexpected character {ch!r}")
    return tokens


def validate(tokens: Sequence[Token]) -> None:
    """Raise the first structural error: empty, then unbalanced, then malformed."""
    if not tokens:
        raise ExpressionError(ErrorCode.EMPTY_EXPRESSION, "empty expression")
    depth = 0
    for tok in tokens:
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
            if depth < 0:
                raise ExpressionError(ErrorCode.UNBALANCED_PARENTHESES, "unmatched ')'")
    if depth:
        raise ExpressionError(ErrorCode.UNBALANCED_PARENTHESES, "unclosed '('")
    # A value is expected at the start, after an operator and after '('.
    expect_value = True
    for tok in tokens:
        if isinstance(tok, int) and not isinstance(tok, bool):
            if not expect_value:
                raise ExpressionError(ErrorCode.MALFORMED_EXPRESSION, "two adjacent values")
            if tok < 0:
                raise ExpressionError(ErrorCode.MALFORMED_EXPRESSION, "negative literal")
            expect_value = False
        elif tok == "(":
            if not expect_value:
                raise ExpressionError(ErrorCode.MALFORMED_EXPRESSION, "'(' after a value")
        elif tok == ")":
            if expect_value:
                raise ExpressionError(ErrorCode.MALFORMED_EXPRESSION, "')' where a value belongs")
        elif isinstance(tok, str) and tok in OPERATORS:
            if expect_value:
                raise ExpressionError(ErrorCode.MALFORMED_EXPRESSION, f"misplaced {tok!r}")
            expect_value = True
        else:
            raise ExpressionError(ErrorCode.MALFORMED_EXPRESSION, f"unknown token {tok!r}")
    if expect_value:
        raise ExpressionError(ErrorCode.MALFORMED_EXPRESSION, "trailing operator")


def _apply(op: str, a: Fraction, b: Fraction) -> Fraction:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        raise ExpressionError(ErrorCode.DIVISION_BY_ZERO, "division by zero")
    return a / b


def evaluate_tokens(tokens: Sequence[Token]) -> Fraction:
    """Exact value of a token sequence (shunting-yard), or an :class:`ExpressionError`."""
    validate(tokens)
    values: list[Fraction] = []
    ops: list[str] = []

    def reduce_top() -> None:
        op = ops.pop()
        b = values.pop()
        a = values.pop()
        values.append(_apply(op, a, b))

    for tok in tokens:
        if isinstance(tok, int):
            values.append(Fraction(tok))
        elif tok == "(":
            ops.append(tok)
        elif tok == ")":
            while ops[-1] != "(":
                reduce_top()
            ops.pop()
        else:
            # ">=" pops equal precedence first: left associativity.
            while ops and ops[-1] != "(" and _PRECEDENCE[ops[-1]] >= _PRECEDENCE[tok]:
                reduce_top()
            ops.append(tok)
    while ops:
        reduce_top()
    return values[0]


def evaluate_integer(tokens: Sequence[Token]) -> int:
    value = evaluate_tokens(tokens)
    if value.denominator != 1:
        raise ExpressionError(ErrorCode.NON_INTEGER_RESULT, f"{value} is not a whole number")
    return int(value)


def evaluate(text: str) -> int:
    """Evaluate an arithmetic string; the result must be a whole number."""
    return evaluate_integer(tokenize(text))


def render(tokens: Sequence[Token]) -> str:
    """Tokens as text: spaces around operators, none inside parentheses."""
    out: list[str] = []
    previous: Token | None = None
    for tok in tokens:
        if out and tok != ")" and previous != "(":
            out.append(" ")
        out.append(str(tok))
        previous = tok
    return "".join(out)
