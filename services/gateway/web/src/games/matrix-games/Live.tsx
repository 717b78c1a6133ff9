// A Matrix Games match live: a seat's view (its sight of the yard, its cog, the cogs and tokens
// it sees, the scores, the beat's deadline) with the order form, or the spectators' whole yard,
// the cogs gliding from frame to frame. The end shows the scores and links to the replay.
import { useEffect, useMemo, useState } from "preact/hooks";
import type { MatrixReplay as ReplayDoc } from "../../gen/matrix.replay.v1";
import { api } from "../../shared/api";
import { Clock } from "../../shared/Clock";
import type { Room } from "../../shared/rooms";
import { socket } from "../../shared/connection";
import { useStore } from "../../shared/store";
import type { Playing } from "../GamePage";
import { type Final, type GlobalFrame, MatrixMatch, type Observation, type Order } from "./live";
import { index, scene } from "./Replay";
import { ALIASES, type Cog, DIRECTIONS, LIVERIES, Swatch, TokenIcon, Yard, points, tokenMark } from "./yard";

const matches = new Map<string, MatrixMatch>();

function matchOf(matchId: string): MatrixMatch {
  let match = matches.get(matchId);
  if (!match) {
    match = new MatrixMatch(socket, matchId);
    match.start();
    matches.set(matchId, match);
  }
  return match;
}

/** The beat clock warns at 10 s and is critical at 5 s. */
const BEAT_CLOCK = { warning: 10, critical: 5, final: 0 };

export function MatrixLive(props: { room: Room; phase: Playing }) {
  const { phase } = props;
  if (!phase.matchId) {
    return (
      <section class="card" aria-live="polite">
        <h2>Room {phase.code}</h2>
        <p>Waiting for the game to start.</p>
      </section>
    );
  }
  return <Match room={props.room} matchId={phase.matchId} code={phase.code} />;
}

function Match(props: { room: Room; matchId: string; code: string }) {
  const match = useMemo(() => matchOf(props.matchId), [props.matchId]);
  const observation = useStore(match.observation);
  const frame = useStore(match.frame);
  const final = useStore(match.final);
  const seated = useStore(match.seated);
  const error = useStore(match.error);
  return (
    <div class="matrix-live" data-match={props.matchId} data-status={final || frame?.done ? "over" : "playing"}>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {seated === null && <p aria-busy="true">Joining the match…</p>}
      {seated === true && observation && <SeatView match={match} observation={observation} final={final} />}
      {seated === false && frame && <SpectatorView frame={frame} matchId={props.matchId} />}
      {(final || frame?.done) && (
        <p class="row">
          <a class="button" href={`#/matrix/replay/${encodeURIComponent(props.matchId)}`}>
            Replay
          </a>
          <button type="button" onClick={() => props.room.leave()}>
            Back to the lobby
          </button>
        </p>
      )}
    </div>
  );
}

function SeatView(props: { match: MatrixMatch; observation: Observation; final: Final | null }) {
  const o = props.observation;
  const { final } = props;
  const tokens = o.rules.tokens;
  const cogs: Cog[] = [
    { slot: o.slot, x: o.you.x, y: o.you.y, facing: o.you.facing, frozen: o.you.freeze > 0, livery: LIVERIES[o.slot] ?? "cobalt", own: true },
    // In sight now: its holdings are shown (inv); otherwise where it was last seen, faded.
    ...o.cogs
      .filter((c) => c.inv !== null || c.seenTicksAgo >= 0)
      .map((c) => {
        const slot = ALIASES.indexOf(c.alias);
        return { slot, x: c.x, y: c.y, facing: -1, frozen: c.frozen, livery: LIVERIES[slot] ?? "cobalt", remembered: c.inv === null };
      }),
  ];
  const seen = o.visibleTokens.map((t) => ({ x: t.x, y: t.y, token: tokens.indexOf(t.token) }));
  const offset = o.server_time_ms - Date.now();
  const open = o.deadline_ms !== null && !final;
  const rows = [{ alias: o.name, scoreCp: o.you.scoreCp, inv: o.you.inv as number[] | null, you: true, frozen: o.you.freeze > 0 }, ...o.cogs.map((c) => ({ alias: c.alias, scoreCp: c.scoreCp, inv: c.inv, you: false, frozen: c.frozen }))];
  rows.sort((a, b) => ALIASES.indexOf(a.alias) - ALIASES.indexOf(b.alias));
  return (
    <section class="card" aria-labelledby="seat-title">
      <h2 id="seat-title">
        You are {o.name} <Swatch livery={LIVERIES[o.slot] ?? ""} />{" "}
        <span class="tag">{o.variant.replaceAll("-", " ")}</span>
      </h2>
      <p class="step" data-beat={o.beat} data-tick={o.tick}>
        {final ? `Over: ${final.reason}` : `Beat ${Math.min(o.beat + 1, o.beats)} of ${o.beats} · tick ${o.tick}`}
      </p>
      {open && <Clock label="Orders close in" deadline={o.deadline_ms} offset={offset} thresholds={BEAT_CLOCK} running={true} />}
      <div class="matrix-layout">
        <Yard
          walls={o.board.walls}
          tokens={seen}
          cogs={cogs}
          sight={{ x: o.you.x, y: o.you.y, radius: o.rules.viewRadius }}
          animated
          label={`Your sight of the yard: you at ${o.you.x},${o.you.y} facing ${DIRECTIONS[o.you.facing] ?? ""}; ${o.visibleTokens.length} tokens in sight; ${o.cogs.filter((c) => c.inv !== null).map((c) => `${c.alias} at ${c.x},${c.y}`).join(", ") || "no cog in sight"}`}
        />
        <div>
          {open && <OrderForm match={props.match} observation={o} />}
          <Scores rows={rows} tokens={tokens} final={final} />
        </div>
      </div>
      {o.log.length > 0 && (
        <>
          <h3>Interactions</h3>
          <ul class="mx-events">
            {o.log.slice(-6).map((l, i) => (
              <li key={i}>
                Beat {l.beat + 1}, tick {l.tick}: {l.row} ({l.cell[0]}) meets {l.col} ({l.cell[1]}): {points(l.rowCp)} and {points(l.colCp)}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

const INTENTS: { intent: Order["intent"]; label: string; takes: "token" | "target" | "" }[] = [
  { intent: "gather", label: "Gather a token", takes: "token" },
  { intent: "deny", label: "Deny a token (take it from the yard)", takes: "token" },
  { intent: "hunt", label: "Hunt a cog (beam it)", takes: "target" },
  { intent: "avoid", label: "Avoid a cog", takes: "target" },
  { intent: "hold", label: "Hold", takes: "" },
];

function OrderForm(props: { match: MatrixMatch; observation: Observation }) {
  const o = props.observation;
  const ordered = useStore(props.match.ordered);
  const [intent, setIntent] = useState<Order["intent"]>("gather");
  const [token, setToken] = useState(o.legal.tokens[0] ?? "");
  const [target, setTarget] = useState(o.legal.targets[0] ?? "");
  const [say, setSay] = useState("");
  const [sending, setSending] = useState(false);
  useEffect(() => {
    if (!o.legal.targets.includes(target)) setTarget(o.legal.targets[0] ?? "");
  }, [o.legal.targets.join(",")]);
  const takes = INTENTS.find((i) => i.intent === intent)?.takes ?? "";
  const done = ordered?.beat === o.beat ? ordered.order : null;
  return (
    <form
      class="order-form"
      aria-labelledby="order-title"
      onSubmit={async (e) => {
        e.preventDefault();
        setSending(true);
        const order: Order = { intent, ...(takes === "token" ? { token } : {}), ...(takes === "target" ? { target } : {}), ...(say ? { say } : {}) };
        await props.match.order(order);
        setSending(false);
      }}
    >
      <h3 id="order-title">Your order for beat {o.beat + 1}</h3>
      <fieldset>
        <legend>Intent</legend>
        {INTENTS.map((i) => (
          <label key={i.intent} class="check">
            <input type="radio" name="intent" value={i.intent} checked={intent === i.intent} onChange={() => setIntent(i.intent)} /> {i.label}
          </label>
        ))}
      </fieldset>
      {takes === "token" && (
        <label>
          Token{" "}
          <select name="token" value={token} onChange={(e) => setToken(e.currentTarget.value)}>
            {o.legal.tokens.map((t, i) => (
              <option key={t} value={t}>
                {tokenMark(i)} {t}
              </option>
            ))}
          </select>
        </label>
      )}
      {takes === "target" && (
        <label>
          Cog{" "}
          <select name="target" value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
            {o.legal.targets.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        Say (others see it){" "}
        <input name="say" value={say} maxLength={64} onInput={(e) => setSay(e.currentTarget.value)} autoComplete="off" />
      </label>
      <button type="submit" class="primary" disabled={sending}>
        {done ? "Change the order" : "Send the order"}
      </button>
      <p class="note" aria-live="polite" data-ordered={done ? String(o.beat) : undefined}>
        {done
          ? `Order for beat ${o.beat + 1} accepted: ${String(done["intent"])}. The beat plays when every player has ordered, or at the deadline.`
          : "Without an order, your cog plays the counter policy."}
      </p>
    </form>
  );
}

function Scores(props: { rows: { alias: string; scoreCp: number; inv: number[] | null; you: boolean; frozen: boolean }[]; tokens: string[]; final: Final | null }) {
  const { final } = props;
  return (
    <table class="seats" data-final={final ? "true" : undefined}>
      <caption>{final ? "Final scores" : "Scores"} (points)</caption>
      <thead>
        <tr>
          <th scope="col">Cog</th>
          <th scope="col">Holds</th>
          <th scope="col">Score</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => {
          const slot = ALIASES.indexOf(r.alias);
          const score = final ? Math.round((final.scores[slot] ?? 0) * 100) : r.scoreCp;
          return (
            <tr key={r.alias} data-slot={slot} aria-current={r.you ? "true" : undefined}>
              <th scope="row">
                <Swatch livery={LIVERIES[slot] ?? ""} /> {r.alias}
                {r.you ? " (you)" : ""}
                {final?.result.win[slot] ? " ★ winner" : ""}
                {r.frozen ? " (frozen)" : ""}
              </th>
              <td>
                {r.inv
                  ? r.inv.map((n, i) => (
                      <span key={i} class="held" title={props.tokens[i]}>
                        {tokenMark(i)}
                        {n}{" "}
                      </span>
                    ))
                  : "unseen"}
              </td>
              <td class="score" data-score={points(score)}>
                {points(score)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The ticks of the beat just played, from the match's replay (the spectators' frames come two a
 * beat): fetched when a frame closes a beat, then played at the replay's 24 frames a second. */
function usePlayback(matchId: string, t: number): { doc: ReplayDoc; at: number } | null {
  const [doc, setDoc] = useState<ReplayDoc | null>(null);
  const [at, setAt] = useState(0);
  useEffect(() => {
    if (t <= 0) return;
    let stopped = false;
    let timer: number | undefined;
    let tries = 0;
    const load = () =>
      api.matrixReplay(matchId, true).then(
        (d) => {
          if (stopped) return;
          const last = d.frames.length - 1;
          // The read models follow the log closely: wait for this beat's ticks to be there.
          if ((d.frames[last]?.t ?? -1) < t - 1) {
            if (++tries < 10) timer = window.setTimeout(load, 500);
            return;
          }
          const from = Math.max(0, d.frames.findIndex((fr) => fr.t >= t - d.config.ticksPerBeat));
          setDoc(d);
          setAt(from);
          let i = from;
          timer = window.setInterval(() => {
            i += 1;
            if (i >= last) clearInterval(timer);
            setAt(Math.min(i, last));
          }, 1000 / (d.config.fps || 24));
        },
        () => undefined, // the frames stand without it
      );
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
      clearInterval(timer);
    };
  }, [matchId, t]);
  return doc ? { doc, at } : null;
}

function SpectatorView(props: { frame: GlobalFrame; matchId: string }) {
  const f = props.frame;
  const playback = usePlayback(props.matchId, f.t);
  const indexed = useMemo(() => (playback ? index(playback.doc) : null), [playback?.doc]);
  const shown = playback && indexed ? playback.doc.frames[playback.at] : undefined;
  const played = playback && indexed && shown ? scene(playback.doc, indexed, shown) : null;
  const cogs: Cog[] = played?.cogs ?? f.seats.map((s) => ({ slot: s.s, x: s.x, y: s.y, facing: s.facing, frozen: s.frozen, livery: s.livery }));
  const best = Math.max(...f.seats.map((s) => s.scoreCp));
  const tokens = Object.keys(f.teams);
  return (
    <section class="card" aria-labelledby="spectate-title">
      <h2 id="spectate-title">
        Watching: {f.variant.replaceAll("-", " ")} <span class="tag">spectator</span>
      </h2>
      <p class="step" data-t={f.t} data-beat={f.beat} aria-live="polite">
        {f.done ? `Over: ${f.reason}` : `Beat ${f.beat + 1} · tick ${f.t} of ${f.mt}`}
      </p>
      <p class="legend">
        {tokens.map((key, i) => (
          <span key={key} class="legend-item">
            <TokenIcon token={i} /> {tokenMark(i)} {f.teams[key]?.tokensLeft ?? 0} left · {((f.teams[key]?.share ?? 0) / 10).toFixed(1)}% held
          </span>
        ))}
      </p>
      <div class="matrix-layout">
        <div data-playback={played && shown ? String(shown.t) : undefined}>
        <Yard
          walls={WALLS}
          tokens={played?.tokens ?? []}
          cogs={cogs}
          beams={played?.beams}
          animated={!played}
          label={`The yard at tick ${shown?.t ?? f.t}: ${cogs.map((c) => `${ALIASES[c.slot] ?? "?"} at ${c.x},${c.y}${c.frozen ? ", frozen" : ""}`).join("; ")}`}
        />
        </div>
        <table class="seats" data-final={f.done ? "true" : undefined}>
          <caption>{f.done ? "Final scores" : "Scores"} (points)</caption>
          <thead>
            <tr>
              <th scope="col">Cog</th>
              <th scope="col">Played by</th>
              <th scope="col">Says</th>
              <th scope="col">Score</th>
            </tr>
          </thead>
          <tbody>
            {f.seats.map((s) => (
              <tr key={s.s} data-slot={s.s}>
                <th scope="row">
                  <Swatch livery={s.livery} /> {s.alias}
                  {s.scoreCp === best && best > 0 ? (f.done ? " ★ winner" : " ▲ leads") : ""}
                </th>
                <td>
                  {s.name}
                  {s.kind === "human" ? (s.connected ? "" : " (away)") : " (computer)"}
                </td>
                <td>{s.say}</td>
                <td class="score" data-score={points(s.scoreCp)}>
                  {points(s.scoreCp)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The yard's walls (the reference's fixed map; the spectators' frames do not repeat them). */
const WALLS = [
  "########################",
  "#....##..........##....#",
  "#..........##..........#",
  "#.##....#......#....##.#",
  "#.##................##.#",
  "#......##......##......#",
  "#..##..............##..#",
  "#..##..............##..#",
  "#......##......##......#",
  "#.##................##.#",
  "#.##....#......#....##.#",
  "#..........##..........#",
  "#....##..........##....#",
  "########################",
];
