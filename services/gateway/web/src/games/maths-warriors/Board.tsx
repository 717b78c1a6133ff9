// The Maths Warriors board: both armies sorted by value, the target, Strength and Mind modes, the
// expression builder with the input guards of the tournament reference §4.3, an Attack button
// enabled only when the attack would succeed, and the keyboard shortcuts of §4.3. It is driven by
// a live match (Match.tsx) or by the scripted tutorial; `gate` lets the tutorial allow one step
// at a time.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type * as W from "../../gen/wire";
import {
  type Die,
  type Op,
  type Tok,
  addBracket,
  addOperator,
  backspace,
  canClose,
  canOpen,
  canOperator,
  diceOf,
  evaluateTokens,
  SHOWN,
  show,
  toggleDie,
  toWire,
} from "./expression";
import { type Seat, left, mindAllowed, other, sorted, strengthWins } from "./match";

export type Mode = "strength" | "mind";

export interface BoardState {
  dice: { 1: W.Dice; 2: W.Dice };
  first: number;
  toMove: number;
  rules: Record<string, unknown>;
  playing: boolean;
}

/** Every step a player can take on the board, for the tutorial's gate. */
export type Step =
  | { kind: "target"; die: Die }
  | { kind: "die"; die: Die }
  | { kind: "mode"; mode: Mode }
  | { kind: "symbol"; symbol: Op | "(" | ")" }
  | { kind: "edit" }
  | { kind: "attack" }
  | { kind: "skip" };

export interface BoardActions {
  strength(attacker: Die, target: Die): Promise<boolean>;
  mind(target: Die, tokens: W.Token[]): Promise<boolean>;
  skip(): Promise<boolean>;
  /** The server's evaluation (rooms with preview on); absent: evaluated here. */
  preview?(tokens: W.Token[], target: Die | null): Promise<W.PreviewInAck | null>;
}

const OPERATOR_KEYS: Record<string, Op> = { "+": "+", "-": "-", "−": "-", "*": "*", x: "*", X: "*", "×": "*", "/": "/", "÷": "/" };
const BRACKET_KEYS: Record<string, "(" | ")"> = { "(": "(", ")": ")", "[": "(", "]": ")" };
const DIGIT_WAIT_MS = 600;

export function Board(props: {
  state: BoardState;
  me: Seat;
  names: { 1: string; 2: string };
  actions: BoardActions;
  gate?: (step: Step) => boolean;
  keyboard?: boolean;
}) {
  const { state, me, actions } = props;
  const them = other(me);
  const mine = state.dice[me];
  const theirs = state.dice[them];
  const myTurn = state.playing && state.toMove === me;
  const allowed = (step: Step) => myTurn && (props.gate ? props.gate(step) : true);

  const [mode, setMode] = useState<Mode>("strength");
  const [target, setTarget] = useState<Die | null>(null);
  const [attacker, setAttacker] = useState<Die | null>(null);
  const [tokens, setTokens] = useState<Tok[]>([]);
  const [busy, setBusy] = useState(false);
  const [help, setHelp] = useState(false);
  const [served, setServed] = useState<{ key: string; value: number | null; error: string | null } | null>(null);

  // A new position (a move was made, by anyone) starts the builder afresh.
  const position = JSON.stringify([state.dice, state.toMove]);
  useEffect(() => {
    setTarget(null);
    setAttacker(null);
    setTokens([]);
    setServed(null);
  }, [position]);

  const wire = useMemo(() => toWire(tokens, mine), [tokens, mine]);
  const local = useMemo(() => evaluateTokens(tokens, mine), [tokens, mine]);
  const wireKey = JSON.stringify([wire, target]);
  useEffect(() => {
    if (!actions.preview || mode !== "mind") return;
    const timer = setTimeout(async () => {
      const answer = await actions.preview?.(wire, target);
      if (answer) setServed({ key: wireKey, value: answer.value, error: answer.error });
    }, 120);
    return () => clearTimeout(timer);
  }, [wireKey, mode]);
  const evaluation = actions.preview
    ? served && served.key === wireKey
      ? { value: served.value, error: served.error }
      : { value: null, error: "checking" }
    : local;

  const targetValue = target ? theirs[target] : null;
  const attackerValue = attacker ? mine[attacker] : null;
  const usedDice = diceOf(tokens);
  const canAttack =
    myTurn &&
    !busy &&
    target !== null &&
    targetValue !== null &&
    (mode === "strength"
      ? attackerValue !== null && strengthWins(state, me, attackerValue, targetValue)
      : usedDice.length >= 2 && evaluation.value === targetValue && mindAllowed(state, me));

  // -- steps ------------------------------------------------------------------------------------

  const chooseTarget = (die: Die) => {
    if (!allowed({ kind: "target", die }) || theirs[die] === null) return;
    setTarget((t) => (t === die ? null : die));
  };
  const chooseDie = (die: Die) => {
    if (!allowed({ kind: "die", die }) || mine[die] === null) return;
    if (mode === "strength") setAttacker((a) => (a === die ? null : die));
    else setTokens((t) => toggleDie(t, die));
  };
  const chooseMode = (next: Mode) => {
    if (next === mode || !allowed({ kind: "mode", mode: next })) return;
    if (next === "mind") {
      // A single die chosen for Strength is carried into the expression (§4.3).
      setTokens(attacker ? [attacker] : []);
      setAttacker(null);
    } else {
      const used = diceOf(tokens);
      setAttacker(used.length === 1 ? (used[0] ?? null) : null);
      setTokens([]);
    }
    setMode(next);
  };
  const symbol = (s: Op | "(" | ")") => {
    if (!allowed({ kind: "symbol", symbol: s })) return;
    if (mode !== "mind") chooseMode("mind"); // an operator switches to Mind (§4.3)
    setTokens((t) => {
      const base = mode === "mind" ? t : attacker ? [attacker] : [];
      return s === "(" || s === ")" ? addBracket(base, s) : addOperator(base, s);
    });
  };
  const removeLast = () => {
    if (allowed({ kind: "edit" }) && mode === "mind") setTokens(backspace);
  };
  const clearAll = () => {
    if (!allowed({ kind: "edit" })) return;
    setTokens([]);
    setAttacker(null);
  };
  const attack = async () => {
    if (!canAttack || !target || !allowed({ kind: "attack" })) return;
    setBusy(true);
    try {
      if (mode === "strength" && attacker) await actions.strength(attacker, target);
      else await actions.mind(target, wire);
    } finally {
      setBusy(false);
    }
  };
  const skip = async () => {
    if (!allowed({ kind: "skip" }) || busy) return;
    setBusy(true);
    try {
      await actions.skip();
    } finally {
      setBusy(false);
    }
  };

  // -- keyboard (§4.3): digits pick own dice by value, Shift+digits the target -----------------

  const digits = useRef<{ text: string; shift: boolean; timer: number | undefined }>({ text: "", shift: false, timer: undefined });
  const pickByValue = (text: string, shift: boolean) => {
    const army = shift ? theirs : mine;
    const value = Number(text);
    const matching = sorted(army).filter((d) => d.value === value).map((d) => d.die);
    if (!matching.length) return;
    if (shift) {
      const at = target ? matching.indexOf(target) : -1;
      chooseTarget(matching[(at + 1) % matching.length] as Die);
      return;
    }
    const chosen = mode === "strength" ? (attacker ? [attacker] : []) : diceOf(tokens);
    const free = matching.find((d) => !chosen.includes(d));
    const die = free ?? matching.filter((d) => chosen.includes(d)).at(-1);
    if (die) chooseDie(die);
  };
  const latest = useRef({ pickByValue, symbol, chooseMode, removeLast, clearAll, attack, theirs, mine });
  latest.current = { pickByValue, symbol, chooseMode, removeLast, clearAll, attack, theirs, mine };

  useEffect(() => {
    if (props.keyboard === false) return;
    const onKey = (e: KeyboardEvent) => {
      const el = e.target as HTMLElement | null;
      if (el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA")) return;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const l = latest.current;
      const digit = /^(?:Digit|Numpad)(\d)$/.exec(e.code)?.[1];
      if (digit !== undefined) {
        // Values run to 20: a digit that starts a longer value waits a moment for the next one.
        e.preventDefault();
        const d = digits.current;
        clearTimeout(d.timer);
        if (d.shift !== e.shiftKey) d.text = "";
        d.shift = e.shiftKey;
        d.text += digit;
        const army = e.shiftKey ? l.theirs : l.mine;
        const values = Object.values(army).filter((v): v is number => v !== null).map(String);
        if (!values.some((v) => v.startsWith(d.text))) d.text = digit;
        const pick = () => {
          latest.current.pickByValue(d.text, d.shift);
          d.text = "";
        };
        if (values.some((v) => v.startsWith(d.text) && v !== d.text)) d.timer = window.setTimeout(pick, DIGIT_WAIT_MS);
        else pick();
        return;
      }
      const op = OPERATOR_KEYS[e.key];
      const bracket = BRACKET_KEYS[e.key];
      if (op || bracket) {
        e.preventDefault();
        l.symbol((op ?? bracket) as Op | "(" | ")");
      } else if (e.key === "s" || e.key === "S") l.chooseMode("strength");
      else if (e.key === "m" || e.key === "M") l.chooseMode("mind");
      else if (e.key === "Backspace") {
        e.preventDefault();
        l.removeLast();
      } else if (e.key === "Escape") l.clearAll();
      else if (e.key === "Enter" && el?.tagName !== "BUTTON") {
        e.preventDefault();
        void l.attack();
      } else if (e.key === "?") setHelp((h) => !h);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [props.keyboard]);

  // -- view -------------------------------------------------------------------------------------

  const chosen = mode === "strength" ? (attacker ? [attacker] : []) : usedDice;
  const status = !state.playing
    ? "The game is over."
    : !myTurn
      ? `${props.names[them]} to move.`
      : !target
        ? "Your move: choose a target (Shift+its value), or skip."
        : mode === "strength"
          ? attackerValue === null
            ? `Target ${target} (${targetValue}). Choose one of your dice.`
            : canAttack
              ? `${attacker} (${attackerValue}) takes ${target} (${targetValue}).`
              : `${attacker} (${attackerValue}) is not enough for ${target} (${targetValue}).`
          : usedDice.length < 2
            ? `Target ${targetValue}: build a sum of two or more dice.`
            : evaluation.value === null
              ? evaluation.error === "checking"
                ? "Checking…"
                : `Not a whole number yet (${(evaluation.error ?? "").replaceAll("_", " ")}).`
              : canAttack
                ? `${evaluation.value} = ${targetValue}: attack!`
                : `${evaluation.value} ≠ ${targetValue}.`;

  return (
    <div class="board">
      <Army
        title={`${props.names[them]}${state.playing && state.toMove === them ? " (to move)" : ""}`}
        owner="theirs"
        dice={theirs}
        chosen={target ? [target] : []}
        onChoose={chooseTarget}
        enabled={myTurn}
        verb="Target"
      />
      {state.playing && (
      <section class="builder" aria-label="Your attack">
        <div class="modes" role="radiogroup" aria-label="Attack mode">
          {(["strength", "mind"] as const).map((m) => (
            <button
              type="button"
              role="radio"
              aria-checked={mode === m}
              class={mode === m ? "mode on" : "mode"}
              onClick={() => chooseMode(m)}
              disabled={!myTurn}
              key={m}
            >
              {m === "strength" ? "Strength (S)" : "Mind (M)"}
            </button>
          ))}
        </div>
        <output class="expression" aria-live="polite" aria-label="Expression">
          {mode === "mind"
            ? tokens.length
              ? `${show(tokens, mine)}${evaluation.value !== null ? ` = ${evaluation.value}` : ""}`
              : "Pick your dice to build a sum"
            : attacker
              ? `${attacker}: ${attackerValue}`
              : "Pick one of your dice"}
          {target && ` → ${target} (${targetValue})`}
        </output>
        <div class="symbols" role="group" aria-label="Operators">
          {(["+", "-", "*", "/", "(", ")"] as const).map((s) => (
            <button
              type="button"
              key={s}
              class="symbol"
              aria-label={{ "+": "plus", "-": "minus", "*": "times", "/": "divided by", "(": "open bracket", ")": "close bracket" }[s]}
              disabled={
                !myTurn ||
                (mode === "mind" &&
                  (s === "(" ? !canOpen(tokens) : s === ")" ? !canClose(tokens) : !canOperator(tokens)))
              }
              onClick={() => symbol(s)}
            >
              {SHOWN[s]}
            </button>
          ))}
          <button type="button" class="symbol" aria-label="Remove the last token" disabled={!myTurn || !tokens.length} onClick={removeLast}>
            ⌫
          </button>
          <button type="button" class="symbol" aria-label="Clear" disabled={!myTurn || (!tokens.length && !attacker)} onClick={clearAll}>
            Clear
          </button>
        </div>
        <p class="status" id="board-status">
          {status}
        </p>
        <div class="actions">
          <button type="button" class="attack" disabled={!canAttack} onClick={attack} aria-describedby="board-status">
            Attack{mode === "strength" ? " (Strength)" : " (Mind)"}
          </button>
          <button type="button" class="skip" disabled={!myTurn || busy} onClick={skip}>
            Skip turn
          </button>
          <button type="button" class="help" aria-expanded={help} onClick={() => setHelp((h) => !h)}>
            Keys (?)
          </button>
        </div>
        {help && <KeyHelp />}
      </section>
      )}
      <Army
        title={`You — ${props.names[me]}${myTurn ? " (your move)" : ""}`}
        owner="mine"
        dice={mine}
        chosen={chosen}
        onChoose={chooseDie}
        enabled={myTurn}
        verb="Use"
      />
      <p class="sr-only" aria-live="polite">
        {left(theirs)} of their dice and {left(mine)} of yours left.
      </p>
    </div>
  );
}

function Army(props: {
  title: string;
  owner: "mine" | "theirs";
  dice: W.Dice;
  chosen: Die[];
  onChoose: (die: Die) => void;
  enabled: boolean;
  verb: string;
}) {
  return (
    <section class={`army army-${props.owner}`} aria-label={props.title}>
      <h3>
        {props.title} <span class="count">· {left(props.dice)} left</span>
      </h3>
      <ul class="dice">
        {sorted(props.dice).map(({ die, value }) => {
          const on = props.chosen.includes(die);
          const captured = value === null;
          return (
            <li key={die}>
              <button
                type="button"
                class={`die die-${die.toLowerCase()}${on ? " chosen" : ""}${captured ? " captured" : ""}`}
                data-die={die}
                data-value={value ?? ""}
                data-owner={props.owner}
                aria-pressed={captured ? undefined : on}
                disabled={captured || !props.enabled}
                onClick={() => props.onChoose(die)}
              >
                {/* The visible text is the accessible name, with words for what it shows. */}
                {!captured && <span class="sr-only">{props.verb} </span>}
                <span class="value">{captured ? <span aria-hidden="true">✕</span> : value}</span>{" "}
                <span class="kind">
                  {die}
                  {captured && <span class="sr-only"> captured</span>}
                  {on && <span aria-hidden="true"> ✓</span>}
                </span>
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function KeyHelp() {
  return (
    <dl class="keys">
      <dt>1–20</dt>
      <dd>choose your die showing that value (two digits for 10–20)</dd>
      <dt>Shift + 1–20</dt>
      <dd>choose the target showing that value</dd>
      <dt>S / M</dt>
      <dd>Strength / Mind mode</dd>
      <dt>+ − x /</dt>
      <dd>operators (they switch to Mind); [ ] or ( ) brackets</dd>
      <dt>Backspace / Esc</dt>
      <dd>remove the last token / clear</dd>
      <dt>Enter</dt>
      <dd>attack</dd>
    </dl>
  );
}

