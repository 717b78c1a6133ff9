// The Mind-attack expression builder and its input guards (tournament reference §4.3), and an
// evaluator with the engine's arithmetic (exact fractions, standard precedence, left
// associativity; docs/rules/maths-warriors.md) so the Attack button knows when an attack would
// succeed. The guards are the UI's; the server accepts any well-formed expression.
import type * as W from "../../gen/wire";

export type Die = W.Die;
export type Op = "+" | "-" | "*" | "/";
export type Tok = Die | Op | "(" | ")";

export const DICE: readonly Die[] = ["D4", "D6", "D8", "D10", "D12", "D20"];
export const OPS: readonly Op[] = ["+", "-", "*", "/"];
export const SHOWN: Record<string, string> = { "+": "+", "-": "−", "*": "×", "/": "÷", "(": "(", ")": ")" };

export const isDie = (t: Tok | undefined): t is Die => t !== undefined && t.startsWith("D");
export const isOp = (t: Tok | undefined): t is Op => t !== undefined && (OPS as readonly string[]).includes(t);
/** A token after which a value has ended: a die or a closing bracket. */
const endsValue = (t: Tok | undefined) => isDie(t) || t === ")";
const depth = (tokens: readonly Tok[]) =>
  tokens.reduce((d, t) => d + (t === "(" ? 1 : t === ")" ? -1 : 0), 0);

/** An operator may not come first or right after "("; a second one replaces the trailing one. */
export function canOperator(tokens: readonly Tok[]): boolean {
  const last = tokens.at(-1);
  return last !== undefined && last !== "(";
}

export function addOperator(tokens: readonly Tok[], op: Op): Tok[] {
  if (!canOperator(tokens)) return [...tokens];
  return isOp(tokens.at(-1)) ? [...tokens.slice(0, -1), op] : [...tokens, op];
}

/** "(" only at the start, after an operator, or after another "(". */
export function canOpen(tokens: readonly Tok[]): boolean {
  const last = tokens.at(-1);
  return last === undefined || isOp(last) || last === "(";
}

/** ")" only after a value or another ")", and only while a "(" is open. */
export function canClose(tokens: readonly Tok[]): boolean {
  return endsValue(tokens.at(-1)) && depth(tokens) > 0;
}

export function addBracket(tokens: readonly Tok[], bracket: "(" | ")"): Tok[] {
  const allowed = bracket === "(" ? canOpen(tokens) : canClose(tokens);
  return allowed ? [...tokens, bracket] : [...tokens];
}

/** Select a die: "+" goes in first after a value; an already selected die is deselected. */
export function toggleDie(tokens: readonly Tok[], die: Die): Tok[] {
  if (tokens.includes(die)) return removeDie(tokens, die);
  return endsValue(tokens.at(-1)) ? [...tokens, "+", die] : [...tokens, die];
}

/** Deselect: the die and one adjacent operator go, then what that leaves dangling. */
export function removeDie(tokens: readonly Tok[], die: Die): Tok[] {
  const at = tokens.indexOf(die);
  if (at < 0) return [...tokens];
  const out = [...tokens];
  if (isOp(out[at - 1])) out.splice(at - 1, 2);
  else if (isOp(out[at + 1])) out.splice(at, 2);
  else out.splice(at, 1);
  return tidy(out);
}

/** Empty "()" pairs and dangling operators stripped (after a deselect). */
export function tidy(tokens: readonly Tok[]): Tok[] {
  let out = [...tokens];
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = 0; i < out.length; i++) {
      const t = out[i];
      const prev = out[i - 1];
      const next = out[i + 1];
      const dangling =
        isOp(t) && (prev === undefined || prev === "(" || isOp(prev) || next === undefined || next === ")");
      if (dangling || (t === "(" && next === ")")) {
        out.splice(i, t === "(" ? 2 : 1);
        changed = true;
        break;
      }
    }
  }
  // A ")" left without its "(" (its die and bracket went together) goes too.
  let open = 0;
  out = out.filter((t) => {
    if (t === "(") open++;
    if (t === ")") {
      if (open === 0) return false;
      open--;
    }
    return true;
  });
  return out;
}

export function backspace(tokens: readonly Tok[]): Tok[] {
  return tokens.slice(0, -1);
}

export const diceOf = (tokens: readonly Tok[]): Die[] => tokens.filter(isDie);

export function toWire(tokens: readonly Tok[], values: W.Dice): W.Token[] {
  return tokens.map((t) => (isDie(t) ? { die: t, value: values[t] ?? 0 } : t));
}

export function show(tokens: readonly Tok[], values?: W.Dice): string {
  return tokens
    .map((t) => (isDie(t) ? String(values?.[t] ?? t) : (SHOWN[t] ?? t)))
    .join(" ");
}

// -- evaluation ---------------------------------------------------------------------------------

export type EvalError =
  | "empty_expression"
  | "unbalanced_parentheses"
  | "malformed_expression"
  | "division_by_zero"
  | "non_integer_result";
export type Evaluation = { value: number; error: null } | { value: null; error: EvalError };

interface Frac {
  n: number;
  d: number;
}
const gcd = (a: number, b: number): number => (b === 0 ? Math.abs(a) : gcd(b, a % b));
function frac(n: number, d: number): Frac {
  const sign = d < 0 ? -1 : 1;
  const g = gcd(n, d) || 1;
  return { n: (sign * n) / g, d: (sign * d) / g };
}

const PRECEDENCE: Record<Op, number> = { "+": 1, "-": 1, "*": 2, "/": 2 };

/** The engine's reading of an expression of die values and symbols. */
export function evaluate(items: readonly (number | Op | "(" | ")")[]): Evaluation {
  if (items.length === 0) return { value: null, error: "empty_expression" };
  if (depthOf(items) !== 0) return { value: null, error: "unbalanced_parentheses" };
  let expectValue = true;
  for (const item of items) {
    const ok = expectValue ? typeof item === "number" || item === "(" : !(typeof item === "number" || item === "(");
    if (!ok) return { value: null, error: "malformed_expression" };
    if (typeof item === "number" || item === ")") expectValue = false;
    else expectValue = true; // an operator or "("
  }
  if (expectValue) return { value: null, error: "malformed_expression" };
  const out: Frac[] = [];
  const ops: (Op | "(")[] = [];
  let zero = false;
  const reduce = () => {
    const op = ops.pop() as Op;
    const b = out.pop() as Frac;
    const a = out.pop() as Frac;
    if (op === "+") out.push(frac(a.n * b.d + b.n * a.d, a.d * b.d));
    else if (op === "-") out.push(frac(a.n * b.d - b.n * a.d, a.d * b.d));
    else if (op === "*") out.push(frac(a.n * b.n, a.d * b.d));
    else if (b.n === 0) {
      zero = true;
      out.push(frac(0, 1));
    } else out.push(frac(a.n * b.d, a.d * b.n));
  };
  for (const item of items) {
    if (typeof item === "number") out.push(frac(item, 1));
    else if (item === "(") ops.push(item);
    else if (item === ")") {
      while (ops.at(-1) !== "(") reduce();
      ops.pop();
    } else {
      while (ops.length && ops.at(-1) !== "(" && PRECEDENCE[ops.at(-1) as Op] >= PRECEDENCE[item]) reduce();
      ops.push(item);
    }
  }
  while (ops.length) reduce();
  if (zero) return { value: null, error: "division_by_zero" };
  const result = out[0] as Frac;
  return result.d === 1 ? { value: result.n, error: null } : { value: null, error: "non_integer_result" };
}

function depthOf(items: readonly (number | string)[]): number {
  let d = 0;
  for (const item of items) {
    if (item === "(") d++;
    if (item === ")" && --d < 0) return -1;
  }
  return d;
}

export function evaluateTokens(tokens: readonly Tok[], values: W.Dice): Evaluation {
  return evaluate(tokens.map((t) => (isDie(t) ? (values[t] ?? 0) : t)));
}

/** An expression as the wire carries it (the opponent's preview), for reading. */
export function showWire(tokens: readonly W.Token[]): string {
  return tokens.map((t) => (typeof t === "string" ? (SHOWN[t] ?? t) : String(t.value))).join(" ");
}
