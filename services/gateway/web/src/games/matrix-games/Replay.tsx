// The replay of a Matrix Games match (`matrix.replay.v1`, GET /v1/matches/{id}/replay): the
// yard tick by tick, animated at the replay's own 24 frames a second times the chosen speed;
// play, pause, step a tick or a beat, the slider, ← → (a tick), PageUp/PageDown (a beat), Home,
// End, Space. As the reference's viewer, a seek is an array index: nothing is simulated here.
import { useEffect, useMemo, useState } from "preact/hooks";
import type { MatrixEvent, MatrixFrame, MatrixReplay as Doc } from "../../gen/matrix.replay.v1";
import { api, notYetReplayed, replayRefusal } from "../../shared/api";
import { ALIASES, type Beam, type Cog, DIRECTIONS, LIVERY, Swatch, TokenIcon, Yard, points, tokenMark } from "./yard";

/** The reference's playback speeds. */
const SPEEDS = [0.5, 1, 2, 3, 4, 8, 16];
/** How many ticks a beam stays drawn (the reference's BeamDrawTicks). */
const BEAM_TICKS = 4;

export function MatrixReplayPage(props: { matchId: string }) {
  const [doc, setDoc] = useState<Doc | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    setDoc(null);
    setError("");
    let tries = 0;
    let timer: number | undefined;
    const load = () =>
      api.matrixReplay(props.matchId).then(
        (d) => {
          if (d.protocol !== "matrix.replay.v1") setError("This match is not a Matrix Games match.");
          // The read models follow the log closely: a match just over may not have its end yet.
          else if (d.results.reason === "" && ++tries < 15) timer = window.setTimeout(load, 500);
          else setDoc(d);
        },
        (e) => {
          if (notYetReplayed(e) && ++tries < 15) timer = window.setTimeout(load, 1000);
          else setError(replayRefusal(e));
        },
      );
    void load();
    return () => clearTimeout(timer);
  }, [props.matchId]);
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!doc) return <p aria-busy="true">Loading the replay…</p>;
  return <MatrixReplay doc={doc} />;
}

interface Indexed {
  /** Events by the tick they happened in. */
  byTick: Map<number, MatrixEvent[]>;
  beams: MatrixEvent[];
}

export function index(doc: Doc): Indexed {
  const byTick = new Map<number, MatrixEvent[]>();
  for (const e of doc.events) {
    const list = byTick.get(e.t) ?? [];
    list.push(e);
    byTick.set(e.t, list);
  }
  return { byTick, beams: doc.events.filter((e) => e.k === "beam") };
}

export function MatrixReplay(props: { doc: Doc }) {
  const { doc } = props;
  const frames = doc.frames;
  const last = Math.max(0, frames.length - 1);
  const [at, setAt] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(1);
  const indexed = useMemo(() => index(doc), [doc]);
  const perBeat = doc.config.ticksPerBeat;
  const fps = doc.config.fps || 24;
  useEffect(() => {
    if (!playing) return;
    const timer = window.setInterval(() => {
      setAt((a) => {
        if (a >= last) {
          setPlaying(false);
          return a;
        }
        return a + 1;
      });
    }, 1000 / (fps * speed));
    return () => clearInterval(timer);
  }, [playing, speed, last, fps]);
  const frame = frames[Math.min(at, last)] as MatrixFrame | undefined;
  if (!frame) return <p>This replay has no frames.</p>;
  const step = (to: number) => {
    setPlaying(false);
    setAt(Math.max(0, Math.min(last, to)));
  };
  const t = frame.t;
  const atEnd = at >= last;
  const beat = Math.min(doc.config.beats - 1, Math.floor(t / perBeat));
  const k = doc.config.K;
  const { cogs, beams, tokens } = scene(doc, indexed, frame);
  // The end's own scores are the results; before it, the frame's running scores.
  const scores = atEnd ? doc.results.scores.map((p) => Math.round(p * 100)) : frame.sc;
  const best = Math.max(...scores);
  const name = (slot: number) => doc.names[slot] ?? "?";
  const shown = recent(indexed, t, atEnd, perBeat);
  return (
    <section
      class="card matrix-replay"
      aria-labelledby="mx-replay-title"
      onKeyDown={(e) => {
        if ((e.target as HTMLElement).tagName === "INPUT" || (e.target as HTMLElement).tagName === "SELECT") return;
        const keys: Record<string, number> = {
          ArrowRight: at + 1,
          ArrowLeft: at - 1,
          PageDown: at + perBeat,
          PageUp: at - perBeat,
          Home: 0,
          End: last,
        };
        if (e.key in keys) {
          e.preventDefault();
          step(keys[e.key] as number);
        } else if (e.key === " " && (e.target as HTMLElement).tagName !== "BUTTON") {
          e.preventDefault();
          setPlaying((p) => !p && !atEnd);
        }
      }}
    >
      <h2 id="mx-replay-title">
        Replay: Matrix Games, {doc.variant.replaceAll("-", " ")} <span class="tag">seed {doc.seed}</span>
      </h2>
      <p class="legend">
        Tokens:{" "}
        {doc.config.tokens.map((name, i) => (
          <span key={name} class="legend-item">
            <TokenIcon token={i} /> {tokenMark(i)} {name}
          </span>
        ))}
      </p>
      <div class="row" role="group" aria-label="Play the replay">
        <button type="button" onClick={() => step(0)} disabled={at === 0}>
          First
        </button>
        <button type="button" onClick={() => step(at - perBeat)} disabled={at === 0} aria-label="Previous beat">
          «
        </button>
        <button type="button" onClick={() => step(at - 1)} disabled={at === 0} aria-label="Previous tick">
          ◀
        </button>
        <button type="button" class="primary play" aria-pressed={playing} onClick={() => {
            if (atEnd) setAt(0);
            setPlaying(atEnd || !playing);
          }}>
          {playing ? "Pause" : atEnd ? "Play again" : "Play"}
        </button>
        <button type="button" class="next" onClick={() => step(at + 1)} disabled={atEnd} aria-label="Next tick">
          ▶
        </button>
        <button type="button" onClick={() => step(at + perBeat)} disabled={atEnd} aria-label="Next beat">
          »
        </button>
        <button type="button" class="last" onClick={() => step(last)} disabled={atEnd}>
          Last
        </button>
        <label>
          Speed{" "}
          <select name="speed" value={String(speed)} onChange={(e) => setSpeed(Number(e.currentTarget.value))}>
            {SPEEDS.map((s) => (
              <option key={s} value={String(s)}>
                {s}×
              </option>
            ))}
          </select>
        </label>
      </div>
      <label class="scrub">
        <span class="sr-only">Tick</span>
        <input type="range" min={0} max={last} value={at} onInput={(e) => step(Number(e.currentTarget.value))} />
      </label>
      <p class="step" aria-live={playing ? "off" : "polite"} data-tick={t} data-at={at} data-last={last} data-beat={beat}>
        Beat {beat + 1} of {doc.config.beats} · tick {t} of {frames[last]?.t ?? last}
        {atEnd ? ` · over: ${doc.results.reason}` : ""}
      </p>
      <div class="matrix-layout">
        <Yard
          walls={doc.map.walls}
          tokens={tokens}
          cogs={cogs}
          beams={beams}
          label={`The yard at tick ${t}: ${cogs.map((c) => `${name(c.slot)} at ${c.x},${c.y} facing ${DIRECTIONS[c.facing]}${c.frozen ? ", frozen" : ""}`).join("; ")}`}
        />
        <table class="seats" data-final={atEnd ? "true" : undefined}>
          <caption>{atEnd ? "Final scores" : "Scores"} (points)</caption>
          <thead>
            <tr>
              <th scope="col">Cog</th>
              <th scope="col">Played by</th>
              <th scope="col">Holds</th>
              <th scope="col">Score</th>
            </tr>
          </thead>
          <tbody>
            {ALIASES.map((_, slot) => {
              const held = frame.inv.slice(slot * k, slot * k + k);
              const sc = scores[slot] ?? 0;
              const lead = sc === best && best > 0;
              const won = atEnd && doc.results.win[slot];
              return (
                <tr key={slot} data-slot={slot} aria-current={lead ? "true" : undefined}>
                  <th scope="row">
                    <Swatch livery={doc.liveries[slot] ?? ""} /> {name(slot)}
                    {won ? " ★ winner" : lead ? " ▲ leads" : ""}
                    {(frame.c[slot * 4 + 3] ?? 0) > 0 ? " (frozen)" : ""}
                  </th>
                  <td>{doc.policyNames[slot]}</td>
                  <td>
                    {held.map((n, i) => (
                      <span key={i} class="held" title={doc.config.tokens[i]}>
                        {tokenMark(i)}
                        {n}{" "}
                      </span>
                    ))}
                  </td>
                  <td class="score" data-score={points(sc)}>
                    {points(sc)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <ScoreChart doc={doc} t={t} />
      <h3>This beat</h3>
      <ul class="mx-events" data-count={shown.length}>
        {shown.map((e, i) => (
          <li key={i}>{describe(e, doc)}</li>
        ))}
      </ul>
    </section>
  );
}

/** The yard at a frame: cogs, the beams of the last few ticks, the spawners holding a token. */
export function scene(doc: Doc, indexed: Indexed, frame: MatrixFrame): { cogs: Cog[]; beams: Beam[]; tokens: Doc["spawners"] } {
  const t = frame.t;
  const cogs: Cog[] = ALIASES.map((_, slot) => ({
    slot,
    x: frame.c[slot * 4] ?? 0,
    y: frame.c[slot * 4 + 1] ?? 0,
    facing: frame.c[slot * 4 + 2] ?? 0,
    frozen: (frame.c[slot * 4 + 3] ?? 0) > 0,
    livery: doc.liveries[slot] ?? "cobalt",
  }));
  const beams: Beam[] = indexed.beams
    .filter((e) => e.t <= t + 1 && e.t > t + 1 - BEAM_TICKS)
    .map((e) => ({ x: e.x ?? 0, y: e.y ?? 0, dir: e.dir ?? 0, len: e.len ?? 0, hit: (e.hitSeat ?? -1) >= 0, slot: e.seat ?? 0 }));
  const tokens = doc.spawners.filter((_, i) => frame.tok[i] === 1);
  return { cogs, beams, tokens };
}

/** What to list under the yard: the beat's orders, and what has happened in it so far. */
function recent(indexed: Indexed, t: number, atEnd: boolean, perBeat: number): MatrixEvent[] {
  const from = Math.floor(t / perBeat) * perBeat;
  const until = atEnd ? Number.MAX_SAFE_INTEGER : t + 1;
  const out: MatrixEvent[] = [];
  for (let tick = from; tick <= Math.min(until, from + perBeat); tick++) {
    for (const e of indexed.byTick.get(tick) ?? []) {
      if (e.k === "pickup" || e.k === "reset" || e.k === "beam") continue;
      // Orders at a beat's first tick are that beat's; a beatclose there closes the one before.
      if (tick === from && e.k === "beatclose") continue;
      if (tick === from + perBeat && e.k === "order") continue;
      out.push(e);
    }
  }
  return out;
}

function describe(e: MatrixEvent, doc: Doc): string {
  const name = (slot: number | undefined) => (slot === undefined || slot < 0 ? "nobody" : (doc.names[slot] ?? "?"));
  const token = (i: number | undefined) => (i === undefined || i < 0 ? "" : (doc.config.tokens[i] ?? String(i)));
  switch (e.k) {
    case "order": {
      const what = [e.intent, token(e.token), e.target !== undefined && e.target >= 0 ? name(e.target) : ""].filter(Boolean).join(" ");
      return `${name(e.seat)} orders ${what}${e.say ? ` — “${e.say}”` : ""}`;
    }
    case "interact":
      return `Tick ${e.t}: ${name(e.row)} (${token(e.cellRow)}) meets ${name(e.col)} (${token(e.cellCol)}): ${points(e.rowCp ?? 0)} and ${points(e.colCp ?? 0)}`;
    case "nocontest":
      return `Tick ${e.t}: ${name(e.seat)}'s beam on ${name(e.target)} does not count (${(e.why ?? "").replaceAll("_", " ")})`;
    case "leadchange":
      return `Tick ${e.t}: ${name(e.seat)} takes the lead`;
    case "beatclose":
      return `Beat ${(e.beat ?? 0) + 1} closes: ${e.interactions ?? 0} interactions so far`;
    case "end":
      return `The episode ends: ${e.reason ?? ""} (${(e.ending ?? "").replaceAll("_", " ")})`;
    default:
      return `Tick ${e.t}: ${e.k}`;
  }
}

/** Every cog's score over the episode (the replay's score series), the current tick marked. The
 * table above says the same in words; the chart is a picture of it (aria-hidden). */
function ScoreChart(props: { doc: Doc; t: number }) {
  const rows = props.doc.series.score;
  const end = rows[rows.length - 1]?.[0] ?? 1;
  const values = rows.flatMap((r) => r.slice(1));
  const high = Math.max(1, ...values);
  const low = Math.min(0, ...values);
  const x = (t: number) => (t / Math.max(1, end)) * 100;
  const y = (v: number) => 40 - ((v - low) / (high - low)) * 38 - 1;
  return (
    <svg class="score-chart" viewBox="0 0 100 40" preserveAspectRatio="none" aria-hidden="true">
      <line x1={0} x2={100} y1={y(0)} y2={y(0)} class="axis" />
      {ALIASES.map((_, slot) => (
        <polyline
          key={slot}
          fill="none"
          stroke={LIVERY[props.doc.liveries[slot] ?? ""] ?? "#888"}
          stroke-width={0.8}
          vector-effect="non-scaling-stroke"
          points={rows.map((r) => `${x(r[0] ?? 0)},${y(r[slot + 1] ?? 0)}`).join(" ")}
        />
      ))}
      <line x1={x(props.t)} x2={x(props.t)} y1={0} y2={40} class="now" />
    </svg>
  );
}
