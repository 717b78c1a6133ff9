// A Digits game: the Focus pad (a question at a time against the server's deadline), the shop
// (offers, the bright offer, reroll, Training), the slate (drag a digit, or choose it and then its
// new cell, by keyboard or touch), the Face-off (the opposing army in full, the 384 arrangements
// as column swaps and flips, Predict in the tutorial), each combat's report stepped through.
import { useEffect, useMemo, useState } from "preact/hooks";
import { Clock } from "../../shared/Clock";
import { socket } from "../../shared/connection";
import type { Room } from "../../shared/rooms";
import { useStore } from "../../shared/store";
import type { Playing } from "../GamePage";
import { arrange, flipColumn, swapColumns } from "./arrangement";
import { type Combat, type Digit, type DigitsGame, DigitsMatch, type Fighter, type Page, type ReportStep } from "./game";

const matches = new Map<string, DigitsMatch>();

function matchOf(matchId: string): DigitsMatch {
  let match = matches.get(matchId);
  if (!match) {
    match = new DigitsMatch(socket, matchId);
    match.start();
    matches.set(matchId, match);
  }
  return match;
}

const PAGE_CLOCK = { warning: 3, critical: 2, final: 0 };
const LONG_CLOCK = { warning: 20, critical: 10, final: 5 };

export function DigitsLive(props: { room: Room; phase: Playing }) {
  const { phase } = props;
  if (!phase.matchId) return <p aria-busy="true">Starting your game…</p>;
  return <DigitsGameView matchId={phase.matchId} onLeave={() => props.room.leave()} leaveLabel="Back to the lobby" />;
}

/** A game alone (play_solo): the counted daily's note, as the ack said (docs/protocol.md). */
export const soloNotes = new Map<string, string>();

export function DigitsGameView(props: { matchId: string; onLeave: () => void; leaveLabel: string }) {
  const match = useMemo(() => matchOf(props.matchId), [props.matchId]);
  const game = useStore(match.game);
  const error = useStore(match.error);
  const offset = useStore(match.offset);
  if (!game) return error ? <p class="error" role="alert">{error}</p> : <p aria-busy="true">Joining your game…</p>;
  const r = game.record;
  return (
    <section class="card digits" data-match={props.matchId} data-phase={game.phase} data-status={game.status} aria-labelledby="digits-title">
      <h2 id="digits-title">
        Digits <span class="tag">{game.mode}</span> Round {game.round} of {game.last_round}
      </h2>
      <p class="record" data-wins={r.wins} data-losses={r.losses}>
        {r.wins} won · {r.losses} lost · {r.draws} drawn · margin {r.margin} · Focus {r.focus_right} right
        {game.voided ? " · not counted" : ""}
      </p>
      {game.mode === "daily" && <p class="note" data-counted="true">Today's daily challenge: this game counts on the daily leaderboard.</p>}
      {soloNotes.get(props.matchId) && <p class="note" data-counted="false">{soloNotes.get(props.matchId)}</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {game.shop_deadline_ms !== null && !game.over && (
        <Clock label="Shop closes in" deadline={game.shop_deadline_ms} offset={offset} thresholds={LONG_CLOCK} running={true} />
      )}
      {game.phase === "focus" && game.focus && <Focus match={match} game={game} offset={offset} />}
      {game.phase === "shop" && game.shop && <Shop match={match} game={game} offset={offset} />}
      {game.phase === "army" && <p aria-live="polite">Your slate is saved: the opposing army is on its way…</p>}
      {game.phase === "faceoff" && game.faceoff && <FaceOff match={match} game={game} offset={offset} />}
      {game.phase === "waiting" && <p aria-live="polite">Round over: the next round opens soon.</p>}
      {game.phase === "over" && (
        <p class="game-over" aria-live="polite" data-over={game.status}>
          The game is over: {game.status}.{" "}
          <button type="button" onClick={props.onLeave}>
            {props.leaveLabel}
          </button>
        </p>
      )}
      {(game.phase === "waiting" || game.phase === "over" || game.phase === "army") && <Slate slate={game.slate} label="Your slate" />}
      <Combats match={match} />
    </section>
  );
}

/** The answer pad: 1..16 as buttons, or typed and Enter. */
function Pad(props: { onAnswer: (n: number) => void; label: string }) {
  const [typed, setTyped] = useState("");
  return (
    <div>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          const n = Number(typed);
          if (n >= 1 && n <= 16) props.onAnswer(n);
          setTyped("");
        }}
      >
        <label>
          {props.label}{" "}
          <input name="answer" inputMode="numeric" autoComplete="off" value={typed} onInput={(e) => setTyped(e.currentTarget.value.replace(/\D/g, "").slice(0, 2))} />
        </label>
        <button type="submit">Answer</button>
      </form>
      <div class="pad" role="group" aria-label="Answers 1 to 16">
        {Array.from({ length: 16 }, (_, i) => i + 1).map((n) => (
          <button type="button" key={n} class="pad-key" data-answer={n} onClick={() => props.onAnswer(n)}>
            {n}
          </button>
        ))}
      </div>
    </div>
  );
}

function Question(props: { page: Page; offset: number }) {
  return (
    <>
      <p class="question" aria-live="assertive" data-question={props.page.text}>
        {props.page.text} = ?
      </p>
      <Clock label={`Stage ${props.page.stage}: answer within`} deadline={props.page.deadline_ms} offset={props.offset} thresholds={PAGE_CLOCK} running={true} />
    </>
  );
}

function Focus(props: { match: DigitsMatch; game: DigitsGame; offset: number }) {
  const f = props.game.focus;
  const answered = useStore(props.match.answered);
  if (!f) return null;
  return (
    <div class="focus" aria-labelledby="focus-title">
      <h3 id="focus-title">
        Focus: question {Math.min(f.index + 1, f.questions)} of {f.questions} · {f.right} right
      </h3>
      {answered && (
        <p class="note" aria-live="polite" data-right={String(answered.right)}>
          {answered.right ? "✓ Right." : answered.late ? "✕ Too late." : "✕ Wrong."}
        </p>
      )}
      {f.page ? (
        <>
          <Question page={f.page} offset={props.offset} />
          <Pad label="Your answer" onAnswer={(answer) => props.match.send("digits_answer", { answer })} />
        </>
      ) : (
        <button type="button" class="primary" onClick={() => props.match.send("digits_start_focus")}>
          {f.button === "continue" ? "Continue" : "Start the Focus"}
        </button>
      )}
    </div>
  );
}

function DigitCard(props: { digit: Digit; compact?: boolean }) {
  const d = props.digit;
  return (
    <span class="digit-card" title={props.compact ? d.effect : undefined}>
      <strong>{d.name}</strong> <span class="tag">N{d.level}</span>{" "}
      <span class="stats">
        {d.atk} ATK · {d.hp} HP
      </span>
      {d.reach ? " · reach" : ""}
      {d.support ? " · support" : ""}
      {!props.compact && <span class="effect">{d.effect}</span>}
    </span>
  );
}

function Shop(props: { match: DigitsMatch; game: DigitsGame; offset: number }) {
  const { match, game } = props;
  const shop = game.shop;
  const [chosen, setChosen] = useState<number | null>(null);
  if (!shop) return null;
  const training = shop.training;
  const free = game.slate.findIndex((d) => d === null) + 1;
  const chosenDigit = chosen ? game.slate[chosen - 1] : null;
  return (
    <div class="shop">
      <h3>
        Shop · <span data-gold={shop.gold}>{shop.gold} gold</span>
      </h3>
      {training ? (
        <div class="training" aria-labelledby="training-title">
          <h4 id="training-title">Training cell {training.cell}</h4>
          <Question page={training} offset={props.offset} />
          <Pad label="Your answer" onAnswer={(answer) => match.send("digits_train_answer", { answer })} />
        </div>
      ) : (
        <>
          <ul class="offers">
            {shop.offers.map((o, i) =>
              o ? (
                <li key={i} class="offer" data-offer={i}>
                  <DigitCard digit={o} />
                  <button type="button" disabled={(o.price ?? 0) > shop.gold || free === 0} onClick={() => match.send("digits_buy", { offer: i, ...(chosen && !game.slate[chosen - 1] ? { cell: chosen } : {}) })}>
                    Buy {o.name} for {o.price}
                  </button>
                </li>
              ) : (
                <li key={i} class="offer sold">
                  sold
                </li>
              ),
            )}
            {shop.bright && (
              <li class="offer bright" data-offer="bright">
                <span class="tag">✦ bright</span> <DigitCard digit={shop.bright} />
                <button type="button" disabled={(shop.bright.price ?? 0) > shop.gold || free === 0} onClick={() => match.send("digits_buy", { offer: "bright" })}>
                  Buy the bright {shop.bright.name} for {shop.bright.price}
                </button>
              </li>
            )}
          </ul>
          <div class="row">
            <button type="button" disabled={shop.reroll_cost > shop.gold} onClick={() => match.send("digits_reroll")}>
              Reroll ({shop.reroll_cost} gold)
            </button>
            {chosen && chosenDigit && (
              <>
                <button type="button" onClick={() => match.send("digits_sell", { cell: chosen }).then(() => setChosen(null))}>
                  Sell cell {chosen}
                </button>
                <button type="button" disabled={shop.training_used || chosenDigit.level >= 3} onClick={() => match.send("digits_train", { cell: chosen })}>
                  Train cell {chosen}
                </button>
              </>
            )}
            <button type="button" class="primary end-shop" onClick={() => match.send("digits_end_shop")}>
              End the shop
            </button>
          </div>
        </>
      )}
      <Slate
        slate={game.slate}
        label="Your slate: choose a digit, then the cell to move it to (or drag it)"
        chosen={chosen}
        onChoose={(cell) => {
          if (chosen && chosen !== cell && game.slate[chosen - 1]) {
            void match.send("digits_move", { src: chosen, dst: cell });
            setChosen(null);
          } else setChosen(chosen === cell ? null : cell);
        }}
        onMove={(src, dst) => match.send("digits_move", { src, dst })}
      />
    </div>
  );
}

/** The slate: cells 1-4 the front row, 5-8 the back; column j is cells j and j + 4. */
function Slate(props: {
  slate: (Digit | null)[];
  label: string;
  chosen?: number | null;
  onChoose?: (cell: number) => void;
  onMove?: (src: number, dst: number) => void;
}) {
  const active = !!props.onChoose;
  return (
    <div class="slate" role="group" aria-label={props.label}>
      {props.slate.map((d, i) => {
        const cell = i + 1;
        const text = d ? `Cell ${cell}: ${d.name} level ${d.level}, ${d.atk} attack, ${d.hp} health. ${d.effect}` : `Cell ${cell}: empty`;
        const inner = d ? <DigitCard digit={d} compact /> : <span class="empty">empty</span>;
        return active ? (
          <button
            type="button"
            key={cell}
            class={`cell${props.chosen === cell ? " chosen" : ""}`}
            data-cell={cell}
            aria-pressed={props.chosen === cell}
            aria-label={text}
            draggable={!!d}
            onClick={() => props.onChoose?.(cell)}
            onDragStart={(e) => e.dataTransfer?.setData("text/plain", String(cell))}
            onDragOver={(e) => e.preventDefault()}
            onDrop={(e) => {
              e.preventDefault();
              const src = Number(e.dataTransfer?.getData("text/plain"));
              if (src && src !== cell) props.onMove?.(src, cell);
            }}
          >
            {props.chosen === cell && <span aria-hidden="true">✓ </span>}
            {inner}
          </button>
        ) : (
          <div key={cell} class="cell" data-cell={cell} aria-label={text} role="img">
            {inner}
          </div>
        );
      })}
    </div>
  );
}

function FaceOff(props: { match: DigitsMatch; game: DigitsGame; offset: number }) {
  const { match } = props;
  const f = props.game.faceoff;
  const [at, setAt] = useState(f?.arrangement ?? 0);
  useEffect(() => setAt(f?.arrangement ?? 0), [f?.arrangement]);
  if (!f) return null;
  const arranged = arrange(f.saved, at);
  const army = f.army;
  return (
    <div class="faceoff">
      <h3>Face-off</h3>
      {f.deadline_ms !== null && <Clock label="Fight in" deadline={f.deadline_ms} offset={props.offset} thresholds={LONG_CLOCK} running={true} />}
      {army && (
        <>
          <p>
            Against {army.house ? "a house army" : army.shown_as || "an anonymous player"}
            {army.tutorial ? " (tutorial)" : ""} · their record at round {army.record.round}: {army.record.wins} won, {army.record.losses} lost
            {army.rating !== null ? ` · rating ${army.rating}` : ""}
          </p>
          <Slate slate={army.slate} label="The opposing army" />
        </>
      )}
      <p class="note">Your slate in this arrangement (number {at}):</p>
      <Slate slate={arranged} label={`Your slate, arrangement ${at}`} />
      <div class="columns" role="group" aria-label="Arrange your columns">
        {[0, 1, 2, 3].map((c) => (
          <div key={c} class="column-controls">
            <button type="button" disabled={c === 0} onClick={() => setAt(swapColumns(at, c, c - 1))} aria-label={`Move column ${c + 1} left`}>
              ←
            </button>
            <button type="button" onClick={() => setAt(flipColumn(at, c))} aria-label={`Swap the front and back of column ${c + 1}`}>
              ⇅
            </button>
            <button type="button" disabled={c === 3} onClick={() => setAt(swapColumns(at, c, c + 1))} aria-label={`Move column ${c + 1} right`}>
              →
            </button>
          </div>
        ))}
      </div>
      <div class="row">
        <button type="button" onClick={() => match.send("digits_arrange", { arrangement: at })} disabled={at === f.arrangement}>
          Keep this arrangement
        </button>
        {f.predict && (
          <button type="button" onClick={() => match.send("digits_predict", { arrangement: at })}>
            Predict
          </button>
        )}
        <button type="button" class="primary fight" onClick={async () => (at === f.arrangement || (await match.send("digits_arrange", { arrangement: at }))) && match.send("digits_fight")}>
          Fight
        </button>
      </div>
      {f.predicted && (
        <p aria-live="polite" data-predicted={f.predicted.result}>
          Predicted for arrangement {f.predicted.arrangement}: a {f.predicted.result} by {Math.abs(f.predicted.margin ?? 0)} in {f.predicted.exchanges} exchanges.
        </p>
      )}
    </div>
  );
}

function Combats(props: { match: DigitsMatch }) {
  const combats = useStore(props.match.combats);
  const [open, setOpen] = useState<number | null>(null);
  if (!combats.length) return null;
  const shown = open === null ? null : combats[open];
  return (
    <div class="combats">
      <h3>Combats</h3>
      <ul>
        {combats.map((c, i) => (
          <li key={i} data-round={c.round} data-result={c.result}>
            Round {c.round}: {c.result} by {Math.abs(c.margin)}{" "}
            <button type="button" aria-expanded={open === i} onClick={() => setOpen(open === i ? null : i)}>
              {open === i ? "Hide" : "Replay"}
            </button>
          </li>
        ))}
      </ul>
      {shown && <CombatReplay combat={shown} />}
    </div>
  );
}

function CombatReplay(props: { combat: Combat }) {
  const steps = props.combat.report?.report ?? [];
  const [at, setAt] = useState(0);
  useEffect(() => setAt(0), [props.combat]);
  const step = steps[Math.min(at, steps.length - 1)];
  let sides = step?.sides;
  for (let i = Math.min(at, steps.length - 1); !sides && i >= 0; i--) sides = steps[i]?.sides;
  return (
    <div class="combat-replay">
      <div class="row" role="group" aria-label="Step through the combat">
        <button type="button" onClick={() => setAt(Math.max(0, at - 1))} disabled={at === 0} aria-label="Previous step">
          ◀
        </button>
        <span aria-live="polite" data-step={at}>
          Step {at + 1} of {steps.length}: {step ? describe(step) : ""}
        </span>
        <button type="button" onClick={() => setAt(Math.min(steps.length - 1, at + 1))} disabled={at >= steps.length - 1} aria-label="Next step">
          ▶
        </button>
      </div>
      {sides && (
        <div class="fight-sides">
          {(["You", "They"] as const).map((who, s) => (
            <div key={who}>
              <h4>{who}</h4>
              <div class="slate small">
                {(sides?.[s] ?? []).map((f: Fighter | null, i: number) => (
                  <div key={i} class="cell" role="img" aria-label={f ? `Cell ${i + 1}: ${f.kind} ${f.atk} attack ${f.hp} health` : `Cell ${i + 1}: empty`}>
                    {f ? (
                      <>
                        <strong>{f.kind}</strong> {f.atk}/{f.hp}
                        {f.shield ? ` +${f.shield} shield` : ""}
                      </>
                    ) : (
                      "—"
                    )}
                  </div>
                ))}
              </div>
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

function describe(step: ReportStep): string {
  const cell = (p: [number, number]) => `${p[0] === 0 ? "your" : "their"} cell ${p[1]}`;
  switch (step.type) {
    case "start":
      return "the sides line up.";
    case "opening":
      return `opening, ${step.step ?? ""}: ${(step.effects ?? []).map((e) => `${cell(e.by)} → ${cell(e.to)}${e.atk ? ` ${e.atk > 0 ? "+" : ""}${e.atk} attack` : ""}${e.hp ? ` ${e.hp > 0 ? "+" : ""}${e.hp} health` : ""}`).join("; ") || "nothing"}.`;
    case "exchange":
      return `exchange ${step.n ?? ""}: ${(step.hits ?? []).map((h) => `${cell(h.from)} hits ${cell(h.to)} for ${h.damage}`).join("; ")}${step.falls?.length ? `; ${step.falls.map(cell).join(", ")} fall` : ""}.`;
    case "end":
      return `${step.result ?? ""} (${step.end ?? ""}), health left ${step.hp?.join(" to ") ?? ""}.`;
    default:
      return String(step.type);
  }
}
