// The puzzle trainer: a hand of dice and a target to make by Mind, on the game's own board and
// expression builder. The server makes and checks the puzzle (GET /v1/puzzles/maths-warriors,
// POST …/answers) and keeps the solutions until it is solved or given up. The route names the
// puzzle (#/puzzles/<difficulty>/<seed>), so a link shares it and a reload keeps it.
import { useEffect, useState } from "preact/hooks";
import type * as W from "../../gen/wire";
import { ApiError, api, type PuzzleAnswer, type PuzzleVerdict, type PuzzleView } from "../../shared/api";
import { go } from "../../shared/router";
import { Board, type Step } from "./Board";

const DIFFICULTIES = ["easy", "medium", "hard", "expert"] as const;
type Difficulty = (typeof DIFFICULTIES)[number];

const NO_DICE: W.Dice = { D4: null, D6: null, D8: null, D10: null, D12: null, D20: null };

export function Puzzles(props: { difficulty?: string; seed?: string }) {
  const difficulty: Difficulty = (DIFFICULTIES as readonly string[]).includes(props.difficulty ?? "")
    ? (props.difficulty as Difficulty)
    : "easy";
  const [puzzle, setPuzzle] = useState<PuzzleView | null>(null);
  const [verdict, setVerdict] = useState<PuzzleVerdict | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    setPuzzle(null);
    setVerdict(null);
    setError("");
    const seed = props.seed !== undefined && /^\d+$/.test(props.seed) ? Number(props.seed) : undefined;
    api.puzzle(difficulty, seed).then(
      (p) => {
        setPuzzle(p);
        if (seed === undefined) history.replaceState(null, "", `#/puzzles/${p.difficulty}/${p.seed}`);
      },
      (e) => setError(e instanceof ApiError && e.code === "rate_limited" ? "Slow down a little, then try again." : String(e.message)),
    );
  }, [difficulty, props.seed]);

  const check = async (tokens: W.Token[], reveal = false) => {
    if (!puzzle) return false;
    try {
      const answer = await api.answer({ difficulty: puzzle.difficulty, seed: puzzle.seed, tokens: words(tokens), reveal });
      setVerdict(answer);
      return answer.solved;
    } catch (e) {
      setError(String((e as Error).message));
      return false;
    }
  };

  const mine: W.Dice = { ...NO_DICE };
  for (const d of puzzle?.dice ?? []) mine[d.die as W.Die] = d.value;
  // The target sits on the opponent's D20; the D4 beside it keeps it from being their last die.
  const theirs: W.Dice = { ...NO_DICE, D4: 1, D20: puzzle?.target ?? null };
  const done = verdict?.solved === true || (verdict?.solutions ?? null) !== null;
  const gate = (step: Step) =>
    !done && !(step.kind === "target" && step.die !== "D20") && !(step.kind === "mode" && step.mode === "strength");

  return (
    <section class="card puzzles" aria-labelledby="puzzles-title">
      <h2 id="puzzles-title">Puzzle trainer</h2>
      <div class="row" role="group" aria-label="Difficulty">
        {DIFFICULTIES.map((d) => (
          <button key={d} type="button" aria-pressed={d === difficulty} onClick={() => go(`/puzzles/${d}`)}>
            {d[0]?.toUpperCase() + d.slice(1)}
          </button>
        ))}
        <button type="button" class="primary" onClick={() => go(`/puzzles/${difficulty}`)}>
          New puzzle
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!puzzle ? (
        !error && <p aria-busy="true">Finding a puzzle…</p>
      ) : (
        <>
          <p class="lesson" data-target={puzzle.target} data-seed={puzzle.seed}>
            Make exactly <strong>{puzzle.target}</strong> from two or more of your dice (each once): choose their D20,
            then build the expression. Attack lights up once it makes {puzzle.target}.
          </p>
          <Board
            state={{ dice: { 1: mine, 2: theirs }, first: 2, toMove: 1, rules: {}, playing: true }}
            me={1}
            names={{ 1: "You", 2: "Target" }}
            gate={gate}
            actions={{ strength: async () => false, mind: (_, tokens) => check(tokens), skip: async () => false }}
          />
          <div class="row">
            <button type="button" disabled={done} onClick={() => void check([])}>
              Hint
            </button>
            <button type="button" disabled={done} onClick={() => void check([], true)}>
              Show the solutions
            </button>
          </div>
          <div aria-live="polite" class="verdict" data-solved={verdict?.solved ?? ""}>
            {verdict?.solved && <p class="ok">Solved!</p>}
            {verdict && !verdict.solved && !verdict.solutions && <p>Hint: {verdict.hint}.</p>}
            {verdict?.solutions && (
              <>
                <p>Every set of dice that makes {puzzle.target}, each with its shortest expression:</p>
                <ul class="solutions">
                  {verdict.solutions.map((s) => (
                    <li key={s}>
                      <code>{s}</code>
                    </li>
                  ))}
                </ul>
              </>
            )}
          </div>
        </>
      )}
    </section>
  );
}

type Word = PuzzleAnswer["tokens"][number];
/** The protocol also takes the printed operators; an answer takes the plain ones. */
const ASCII: Record<string, Word> = { "×": "*", "÷": "/", "−": "-" };

/** The builder's wire tokens as the answer's words: die names and symbols. */
function words(tokens: W.Token[]): PuzzleAnswer["tokens"] {
  return tokens.map((t) => (typeof t !== "string" ? t.die : (ASCII[t] ?? (t as Word))));
}
