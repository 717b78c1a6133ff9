// The replay of a finished Maths Warriors match: every state the engine folded from its events
// (GET /v1/matches/{id}/replay), each with the move that led to it (GET …/events). Step with the
// buttons, the slider, or ← → Home End.
import { useEffect, useState } from "preact/hooks";
import { api, type MatchLog, type MatchReview, notYetReplayed, type Replay as ReplayData, replayRefusal } from "../../shared/api";
import { REASONS } from "./match";

type State = ReplayData["states"][number];
type Event = MatchLog["events"][number];
type Reviewed = MatchReview["moves"][number];

/** The post-game review's verdicts (docs/rules/maths-warriors.md#puzzles-and-review). */
const VERDICTS: Record<string, string> = {
  best: "the best move",
  good: "a good move",
  inaccuracy: "an inaccuracy",
  mistake: "a mistake",
  missed_capture: "a missed capture",
  forced: "forced: no capture was available",
};

export function Replay(props: { matchId: string }) {
  const [replay, setReplay] = useState<ReplayData | null>(null);
  const [events, setEvents] = useState<Map<number, Event>>(new Map());
  const [reviews, setReviews] = useState<Map<number, Reviewed>>(new Map());
  const [at, setAt] = useState(0);
  const [error, setError] = useState("");
  useEffect(() => {
    setReplay(null);
    setError("");
    let tries = 0;
    let timer: number | undefined;
    const load = () =>
      Promise.all([api.replay(props.matchId), api.events(props.matchId)]).then(
        ([r, log]) => {
          // The read models follow the log closely: a game that just ended may still lack its
          // last events there, so wait for its end before showing it.
          const end = r.states[r.states.length - 1];
          if (end?.status === "playing" && ++tries < 15) {
            timer = window.setTimeout(load, 500);
            return;
          }
          setReplay(r);
          setEvents(new Map(log.events.map((e) => [e.sequence, e])));
          setAt(0);
          // The review rates every move against the best one available; the replay stands without it.
          api.review(props.matchId).then(
            (r) => setReviews(new Map(r.moves.map((m) => [m.sequence, m]))),
            () => setReviews(new Map()),
          );
        },
        (e) => {
          // A game just over may not be in the read models yet, or not its end (409).
          if (notYetReplayed(e) && ++tries < 15) timer = window.setTimeout(load, 1000);
          else setError(replayRefusal(e));
        },
      );
    void load();
    return () => clearTimeout(timer);
  }, [props.matchId]);
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!replay) return <p aria-busy="true">Loading the replay…</p>;
  const states = replay.states;
  const last = states.length - 1;
  const state = states[Math.min(at, last)] as State | undefined;
  const name = (seat: number) => replay.seats.find((s) => s.seat === seat)?.display_name ?? `Player ${seat}`;
  const step = (to: number) => setAt(Math.max(0, Math.min(last, to)));
  return (
    <section
      class="card replay"
      aria-labelledby="replay-title"
      onKeyDown={(e) => {
        const keys: Record<string, number> = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: last };
        if (e.key in keys && (e.target as HTMLElement).tagName !== "INPUT") {
          e.preventDefault();
          step(keys[e.key] as number);
        }
      }}
    >
      <h2 id="replay-title">
        Replay: {name(1)} vs {name(2)}
      </h2>
      <div class="row" role="group" aria-label="Step through the game">
        <button type="button" onClick={() => step(0)} disabled={at === 0} >First</button>
        <button type="button" onClick={() => step(at - 1)} disabled={at === 0} aria-label="Previous move">◀</button>
        <label>
          <span class="sr-only">Move</span>
          <input type="range" min={0} max={last} value={at} onInput={(e) => step(Number(e.currentTarget.value))} />
        </label>
        <button type="button" onClick={() => step(at + 1)} disabled={at >= last} aria-label="Next move" class="next">▶</button>
        <button type="button" onClick={() => step(last)} disabled={at >= last} >Last</button>
      </div>
      <p aria-live="polite" class="step" data-step={at} data-steps={states.length}>
        Step {at + 1} of {states.length}: {state ? describe(state, events.get(state.sequence), name) : ""}
      </p>
      {state && reviews.get(state.sequence) && <ReviewLine move={reviews.get(state.sequence) as Reviewed} />}
      {state && (
        <div class="replay-armies">
          {([1, 2] as const).map((seat) => (
            <div key={seat} class="army">
              <h3>
                {name(seat)}
                {state.status === "playing" && state.to_move === seat ? " (to move)" : ""}
              </h3>
              <ul class="dice">
                {(seat === 1 ? state.dice1 : state.dice2)
                  .slice()
                  .sort((a, b) => (a.value ?? 99) - (b.value ?? 99))
                  .map((d) => (
                    <li key={d.die}>
                      <span class={`die${d.value === null ? " captured" : ""}`} data-die={d.die} data-value={d.value ?? ""}>
                        <span class="value">{d.value ?? <span aria-hidden="true">✕</span>}</span>{" "}
                        <span class="kind">
                          {d.die}
                          {d.value === null && <span class="sr-only"> captured</span>}
                        </span>
                      </span>
                    </li>
                  ))}
              </ul>
            </div>
          ))}
        </div>
      )}
    </section>
  );
}

function ReviewLine(props: { move: Reviewed }) {
  const { move } = props;
  const better = move.best && move.best !== move.played && move.verdict !== "best";
  return (
    <p class={`review review-${move.verdict}`} data-verdict={move.verdict}>
      Review: {VERDICTS[move.verdict] ?? move.verdict}
      {better ? ` — the best was ${move.best}` : ""}.
    </p>
  );
}

function describe(state: State, event: Event | undefined, name: (seat: number) => string): string {
  const p = (event?.payload ?? {}) as Record<string, unknown>;
  const who = name(Number(p["player"] ?? 0));
  const kind = state.type.split(".").pop();
  switch (kind) {
    case "GameStarted":
      return `the dice are rolled; ${name(state.to_move)} moves first.`;
    case "StrengthAttacked":
      return `${who} takes ${String(p["target"])} with ${String(p["attacker"])} by Strength.`;
    case "MindAttacked":
      return `${who} takes ${String(p["target"])} by Mind: ${((p["tokens"] as string[] | undefined) ?? []).join(" ")} = ${String(p["value"])}.`;
    case "TurnSkipped":
      return p["reason"] === "timeout" ? `${who}'s move clock ran out.` : `${who} skips.`;
    case "GameEnded":
      return `${name(state.winner ?? 0)} wins: ${REASONS[state.win_reason ?? ""] ?? state.win_reason}.`;
    default:
      return kind ?? "";
  }
}
