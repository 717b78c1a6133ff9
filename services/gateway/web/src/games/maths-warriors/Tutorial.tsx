// The tutorial (tournament reference §14): the rulebook's worked turn (§9 of the rulebook),
// scripted. Each step allows one kind of action (the board's gate) and the game has no victory
// screen. Nothing here talks to the server.
import { useState } from "preact/hooks";
import type * as W from "../../gen/wire";
import { Board, type Step } from "./Board";

const START: { 1: W.Dice; 2: W.Dice } = {
  1: { D4: 2, D6: 4, D8: 6, D10: 3, D12: 11, D20: 7 },
  2: { D4: 1, D6: 5, D8: 8, D10: 10, D12: 10, D20: 19 },
};
/** The rulebook's rerolls after the Mind attack: D12, D8 and D4 come up 4, 1 and 3. */
const REROLLS: Partial<W.Dice> = { D12: 4, D8: 1, D4: 3 };

interface Lesson {
  text: string;
  allows: (step: Step) => boolean;
  /** The step that completes the lesson; none: a Next button. */
  done?: (step: Step, chosen: Set<string>) => boolean;
}

const LESSONS: Lesson[] = [
  {
    text: "Each player has six dice. It is your move, and you did not go first, so the First Player Penalty does not apply to you. Capture all six of your opponent's dice to win.",
    allows: () => false,
  },
  {
    text: "Step 1 — look for a target. Their D20 showing 19 is the scariest die on the board. Choose it (click it, or press Shift+1 then 9).",
    allows: (s) => s.kind === "target" && s.die === "D20",
    done: (s) => s.kind === "target",
  },
  {
    text: "Step 2 — can you take it by Strength? Choose your biggest die, the D12 showing 11 (or press 1 1).",
    allows: (s) => s.kind === "die" && s.die === "D12",
    done: (s) => s.kind === "die",
  },
  {
    text: "11 ≥ 19 is false: the Attack button stays off. Strength won't work on that one. Step 3 — switch to Mind (press M): your D12 comes along into the sum.",
    allows: (s) => s.kind === "mode" && s.mode === "mind",
    done: (s) => s.kind === "mode",
  },
  {
    text: "You need exactly 19 from two or more dice. Add your D8 (6) and your D4 (2): a + goes in between by itself. 11 + 6 + 2 = 19.",
    allows: (s) => (s.kind === "die" && (s.die === "D8" || s.die === "D4")) || (s.kind === "symbol" && s.symbol === "+"),
    done: (_, chosen) => chosen.has("D8") && chosen.has("D4"),
  },
  {
    text: "Step 4 — check it: every die used once, a whole number, exactly the target. The Attack button is on: attack (or press Enter).",
    allows: (s) => s.kind === "attack",
    done: (s) => s.kind === "attack",
  },
  {
    text: "Their D20 is captured and leaves the game for good. The three dice you used were rerolled: your D12, D8 and D4 now show 4, 1 and 3. It is your opponent's move. That trade-off — your best numbers spent, low rerolls back — is the heart of the game. You are ready to play!",
    allows: () => false,
  },
];

export function Tutorial() {
  const [lesson, setLesson] = useState(0);
  const [dice, setDice] = useState(START);
  const [toMove, setToMove] = useState(1);
  const [chosen] = useState(() => new Set<string>());
  const current = LESSONS[lesson] as Lesson;
  const gate = (step: Step) => {
    if (!current.allows(step)) return false;
    if (step.kind === "die") chosen.add(step.die);
    if (current.done?.(step, chosen)) setTimeout(() => setLesson((l) => Math.min(l + 1, LESSONS.length - 1)), 0);
    return true;
  };
  const capture = async (target: W.Die) => {
    setDice((d) => ({ 1: { ...d[1], ...REROLLS }, 2: { ...d[2], [target]: null } }));
    setToMove(2);
    return true;
  };
  return (
    <section class="tutorial" aria-labelledby="tutorial-title">
      <h2 id="tutorial-title">Tutorial: a full turn</h2>
      <p class="lesson" aria-live="polite" data-lesson={lesson}>
        {current.text}
      </p>
      <div class="row">
        {!current.done && lesson < LESSONS.length - 1 && (
          <button type="button" class="primary" onClick={() => setLesson(lesson + 1)}>
            Next
          </button>
        )}
        {lesson === LESSONS.length - 1 && (
          <a class="button primary" href="#/mw">
            Play a game
          </a>
        )}
        <button
          type="button"
          onClick={() => {
            setLesson(0);
            setDice(START);
            setToMove(1);
            chosen.clear();
          }}
        >
          Start again
        </button>
      </div>
      <Board
        state={{ dice, first: 2, toMove, rules: {}, playing: true }}
        me={1}
        names={{ 1: "Learner", 2: "Opponent" }}
        gate={gate}
        actions={{
          strength: async () => false,
          mind: (target) => capture(target),
          skip: async () => false,
        }}
      />
    </section>
  );
}
