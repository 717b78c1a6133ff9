// The expression builder's input guards (tournament reference §4.3) and the evaluator's
// arithmetic (docs/rules/maths-warriors.md), on the compiled module: `npm test`.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as x from "../.test-build/games/maths-warriors/expression.js";

const build = (...steps) =>
  steps.reduce((tokens, step) => {
    if (step.startsWith("D")) return x.toggleDie(tokens, step);
    if (step === "(" || step === ")") return x.addBracket(tokens, step);
    return x.addOperator(tokens, step);
  }, []);

test("an operator is never first, nor right after (", () => {
  assert.deepEqual(build("+"), []);
  assert.deepEqual(build("(", "*"), ["("]);
  assert.equal(x.canOperator([]), false);
});

test("a second operator replaces the trailing one", () => {
  assert.deepEqual(build("D4", "+", "*"), ["D4", "*"]);
});

test("( only at the start, after an operator or after (", () => {
  assert.deepEqual(build("(", "(", "D4"), ["(", "(", "D4"]);
  assert.deepEqual(build("D4", "("), ["D4"]);
  assert.deepEqual(build("D4", "*", "(", "D6"), ["D4", "*", "(", "D6"]);
});

test(") only after a value or ), and only while a ( is open", () => {
  assert.deepEqual(build("D4", ")"), ["D4"]);
  assert.deepEqual(build("(", ")"), ["("]);
  assert.deepEqual(build("(", "D4", "+", ")"), ["(", "D4", "+"]);
  assert.deepEqual(build("(", "(", "D4", ")", ")", ")"), ["(", "(", "D4", ")", ")"]);
});

test("a die after a value or ) gets its + by itself", () => {
  assert.deepEqual(build("D4", "D6"), ["D4", "+", "D6"]);
  assert.deepEqual(build("(", "D4", "*", "D6", ")", "D8"), ["(", "D4", "*", "D6", ")", "+", "D8"]);
  assert.deepEqual(build("D4", "-", "D6"), ["D4", "-", "D6"]);
});

test("choosing a chosen die removes it and one adjacent operator", () => {
  assert.deepEqual(build("D4", "D6", "D8", "D6"), ["D4", "+", "D8"]);
  assert.deepEqual(build("D4", "*", "D6", "D4"), ["D6"]);
});

test("empty () and dangling operators are stripped after a removal", () => {
  assert.deepEqual(build("D4", "*", "(", "D6", ")", "D6"), ["D4"]);
  assert.deepEqual(build("(", "D4", "+", "D6", ")", "*", "D8", "D4", "D6"), ["D8"]);
  assert.deepEqual(x.tidy(["+", "D4", "*", ")"]), ["D4"]);
});

test("the evaluator is the engine's: precedence, left associativity, exact fractions", () => {
  assert.deepEqual(x.evaluate([3, "/", 2, "*", 4]), { value: 6, error: null });
  assert.deepEqual(x.evaluate([7, "/", 2]), { value: null, error: "non_integer_result" });
  assert.deepEqual(x.evaluate([2, "-", 5, "+", 8]), { value: 5, error: null });
  assert.deepEqual(x.evaluate([2, "+", 3, "*", 4]), { value: 14, error: null });
  assert.deepEqual(x.evaluate(["(", 2, "+", 3, ")", "*", 4]), { value: 20, error: null });
  assert.deepEqual(x.evaluate([10, "-", 3, "-", 2]), { value: 5, error: null });
  assert.deepEqual(x.evaluate([4, "/", "(", 2, "-", 2, ")"]), { value: null, error: "division_by_zero" });
  assert.deepEqual(x.evaluate([]), { value: null, error: "empty_expression" });
  assert.deepEqual(x.evaluate(["(", 2]), { value: null, error: "unbalanced_parentheses" });
  assert.deepEqual(x.evaluate([2, "+"]), { value: null, error: "malformed_expression" });
  assert.deepEqual(x.evaluate([2, 3]), { value: null, error: "malformed_expression" });
});

test("the rulebook's worked turn: 11 + 6 + 2 = 19 from D12, D8 and D4", () => {
  const dice = { D4: 2, D6: 4, D8: 6, D10: 3, D12: 11, D20: 7 };
  const tokens = build("D12", "D8", "D4");
  assert.deepEqual(x.evaluateTokens(tokens, dice), { value: 19, error: null });
  assert.deepEqual(x.toWire(tokens, dice)[0], { die: "D12", value: 11 });
});
