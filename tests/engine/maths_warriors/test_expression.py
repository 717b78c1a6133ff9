"""The exact evaluator: rulings, typed errors, and agreement with an independent evaluation."""

from __future__ import annotations

import ast
import operator
from fractions import Fraction

import pytest
from arena_engine.maths_warriors.errors import ErrorCode
from arena_engine.maths_warriors.expression import (
    ExpressionError,
    evaluate,
    evaluate_tokens,
    render,
    tokenize,
)
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3 / 2 * 4", 6),
        ("2 - 5 + 8", 5),
        ("2 + 3 * 4", 14),
        ("(2 + 3) * 4", 20),
        ("10 - 3 - 2", 5),
        ("12 / 2 / 3", 2),
        ("((1 + 2) * (3 + 4)) - 20", 1),
        ("3 × 6", 18),
        ("12 ÷ 4 − 1", 2),
        ("1 / 3 + 2 / 3", 1),
        ("20", 20),
    ],
)
def test_values(text: str, value: int) -> None:
    assert evaluate(text) == value


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", ErrorCode.EMPTY_EXPRESSION),
        ("   ", ErrorCode.EMPTY_EXPRESSION),
        ("7 / 2", ErrorCode.NON_INTEGER_RESULT),
        ("6 / (3 - 3)", ErrorCode.DIVISION_BY_ZERO),
        ("3 +", ErrorCode.MALFORMED_EXPRESSION),
        ("+ 3", ErrorCode.MALFORMED_EXPRESSION),
        ("3 4", ErrorCode.MALFORMED_EXPRESSION),
        ("3 * * 4", ErrorCode.MALFORMED_EXPRESSION),
        ("()", ErrorCode.MALFORMED_EXPRESSION),
        ("2 (3)", ErrorCode.MALFORMED_EXPRESSION),
        ("3 % 4", ErrorCode.MALFORMED_EXPRESSION),
        ("(3 + 4", ErrorCode.UNBALANCED_PARENTHESES),
        ("3 + 4)", ErrorCode.UNBALANCED_PARENTHESES),
        (")(", ErrorCode.UNBALANCED_PARENTHESES),
    ],
)
def test_typed_errors(text: str, code: ErrorCode) -> None:
    with pytest.raises(ExpressionError) as info:
        evaluate(text)
    assert info.value.code is code


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _independent(text: str) -> Fraction:
    """Python's own parser (same precedence and associativity) over exact fractions."""

    def walk(node: ast.expr) -> Fraction:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return Fraction(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return Fraction(_OPS[type(node.op)](walk(node.left), walk(node.right)))
        raise AssertionError(f"unexpected node {ast.dump(node)}")

    return walk(ast.parse(text, mode="eval").body)


@st.composite
def expressions(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 3 or draw(st.booleans()):
        return str(draw(st.integers(1, 20)))
    left = draw(expressions(depth + 1))
    right = draw(expressions(depth + 1))
    op = draw(st.sampled_from("+-*/"))
    text = f"{left} {op} {right}"
    return f"({text})" if draw(st.booleans()) else text


@settings(max_examples=300, deadline=None)
@given(expressions())
def test_agrees_with_independent_evaluation(text: str) -> None:
    try:
        expected: Fraction | None = _independent(text)
    except ZeroDivisionError:
        expected = None
    if expected is None:
        with pytest.raises(ExpressionError) as info:
            evaluate_tokens(tokenize(text))
        assert info.value.code is ErrorCode.DIVISION_BY_ZERO
    else:
        assert evaluate_tokens(tokenize(text)) == expected
        assert evaluate_tokens(tokenize(render(tokenize(text)))) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["1", "7", "20", "+", "-", "*", "/", "(", ")", " ", "x"])))
def test_any_input_gives_a_value_or_a_typed_error(parts: list[str]) -> None:
    text = "".join(parts)
    try:
        evaluate(text)
    except ExpressionError as exc:
        assert exc.code in set(ErrorCode)
