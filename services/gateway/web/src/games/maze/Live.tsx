// The Maze live: the maze drawn as it is revealed (a player) or whole (an observer), arrow keys
// and on-screen controls, the key in hand, vision moves left, the compass, the exit, the
// countdown and the time limit, the result. Walls are lines, the players letters in circles,
// objects a letter and a shape each, so colour is never the only signal.
import { useEffect, useMemo } from "preact/hooks";
import { Clock } from "../../shared/Clock";
import { socket } from "../../shared/connection";
import { useStore } from "../../shared/store";
import type { Room } from "../../shared/rooms";
import type { Playing } from "../GamePage";
import { MazeMatch, forgetSeen } from "./live";
import { type Direction, type MazeObject, type View, open } from "./view";

const matches = new Map<string, MazeMatch>();

function matchOf(matchId: string): MazeMatch {
  let match = matches.get(matchId);
  if (!match) {
    match = new MazeMatch(socket, matchId);
    match.start();
    matches.set(matchId, match);
  }
  return match;
}

const KEYS: Record<string, Direction> = { ArrowUp: "N", ArrowRight: "E", ArrowDown: "S", ArrowLeft: "W", w: "N", d: "E", s: "S", a: "W" };
const OWNER_FILL = ["#888", "#2f6fd1", "#d9702a"];
const COUNTDOWN = { warning: 3, critical: 2, final: 0 };
const LIMIT = { warning: 60, critical: 20, final: 10 };

export function MazeLive(props: { room: Room; phase: Playing }) {
  const { phase } = props;
  if (!phase.matchId) {
    return (
      <section class="card" aria-live="polite">
        <h2>Room {phase.code}</h2>
        <p>Waiting for the game to start.</p>
      </section>
    );
  }
  return <Match room={props.room} matchId={phase.matchId} />;
}

function Match(props: { room: Room; matchId: string }) {
  const match = useMemo(() => matchOf(props.matchId), [props.matchId]);
  const info = useStore(match.info);
  const view = useStore(match.view);
  const known = useStore(match.known);
  const refused = useStore(match.refused);
  const offset = useStore(match.offset);
  const error = useStore(match.error);
  const player = view && view.role !== "observer";
  const playing = view?.phase === "playing";
  useEffect(() => {
    if (!player || view?.phase === "over") return;
    const pressed = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement;
      if (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA") return;
      const dir = KEYS[e.key];
      if (dir) {
        e.preventDefault();
        void match.move(dir);
      } else if (e.key === "x" || e.key === "X") void match.drop();
    };
    window.addEventListener("keydown", pressed);
    return () => window.removeEventListener("keydown", pressed);
  }, [player, view?.phase, match]);
  if (error && !view) return <p class="error" role="alert">{error}</p>;
  if (!info || !view) return <p aria-busy="true">Joining the match…</p>;
  const seat = Number(view.role) || 0;
  const name = (s: number) => info.seats.find((x) => x.seat === s)?.name ?? `Player ${s}`;
  const result = view.status.result ?? null;
  return (
    <section class="card maze" data-match={props.matchId} data-role={view.role} data-phase={view.phase} data-seq={view.seq} aria-labelledby="maze-title">
      <h2 id="maze-title">
        {player ? `You are player ${seat}` : "Watching"}: {name(1)} vs {name(2)}
      </h2>
      <div class="clocks">
        {view.phase === "countdown" && <Clock label="Starts in" deadline={info.countdown_end_ms} offset={offset} thresholds={COUNTDOWN} running={true} />}
        {playing && info.ends_at_ms !== null && <Clock label="Time left" deadline={info.ends_at_ms} offset={offset} thresholds={LIMIT} running={true} />}
      </div>
      <p class="step" aria-live="polite" data-result={result ? ("draw" in result ? "draw" : String(result.winner)) : undefined}>
        {result
          ? "draw" in result
            ? `A draw (${result.reason.replaceAll("_", " ")}).`
            : `${result.winner === seat ? "You win" : `${name(result.winner)} wins`} (${result.reason.replaceAll("_", " ")}).`
          : view.phase === "countdown"
            ? "Get ready."
            : player
              ? "Find your key, then your exit."
              : "Playing."}
      </p>
      {refused && (
        <p class="note" role="status" data-refused>
          {refused}
        </p>
      )}
      <div class="matrix-layout">
        <Board view={view} known={player ? known : view.cells} seat={seat} />
        <div>
          {player ? <Status view={view} seat={seat} /> : <Players view={view} name={name} />}
          {player && view.phase !== "over" && <Controls match={match} view={view} seat={seat} />}
        </div>
      </div>
      {view.phase === "over" && (
        <button
          type="button"
          onClick={() => {
            forgetSeen();
            void props.room.leave();
          }}
        >
          Back to the lobby
        </button>
      )}
    </section>
  );
}

function Controls(props: { match: MazeMatch; view: View; seat: number }) {
  const { view, match } = props;
  const cell = view.status.cell;
  // An open exit lets its owner out on its side (a map edge, no passage in the cell's flags).
  const exit = view.objects.find((o) => o[0] === "exit" && o[1] === props.seat);
  const out = exit && view.status.exit === "open" && exit[3] === cell ? exit[2] : null;
  const can = (d: Direction) => view.phase === "playing" && (open(view.cells, cell, d) || d === out);
  const labels: Record<Direction, string> = { N: "North ↑", E: "East →", S: "South ↓", W: "West ←" };
  return (
    <div class="maze-controls" role="group" aria-label="Move (arrow keys or W A S D; X drops the key)">
      {(["N", "W", "S", "E"] as Direction[]).map((d) => (
        <button type="button" key={d} class={`move move-${d}`} onClick={() => match.move(d)} disabled={!can(d)} aria-label={d === out ? `${labels[d]}: out through your exit` : labels[d]}>
          {labels[d]}
          {d === out ? " (exit)" : ""}
        </button>
      ))}
      <button type="button" onClick={() => match.drop()} disabled={view.status.carrying === null || view.status.carrying === undefined}>
        Drop the key (X)
      </button>
      <button type="button" class="danger" onClick={() => confirm("Resign this game?") && match.resign()}>
        Resign
      </button>
    </div>
  );
}

function Status(props: { view: View; seat: number }) {
  const s = props.view.status;
  const carrying = s.carrying === null || s.carrying === undefined ? "nothing" : s.carrying === props.seat ? "your key" : "the other player's key";
  return (
    <dl class="keys maze-status">
      <dt>In hand</dt>
      <dd data-carrying={s.carrying ?? ""}>{carrying}</dd>
      <dt>Vision</dt>
      <dd>{s.vision ? `wide for ${s.vision} more moves` : "normal"}</dd>
      <dt>Compass</dt>
      <dd data-compass={s.compass ?? ""}>{s.compass ? `your exit is ${BEARINGS[s.compass] ?? s.compass}` : "—"}</dd>
      <dt>Your exit</dt>
      <dd data-exit={s.exit}>{s.exit}</dd>
      <dt>Meetings</dt>
      <dd>{props.view.meetings}</dd>
    </dl>
  );
}

function Players(props: { view: View; name: (seat: number) => string }) {
  const players = props.view.players ?? {};
  return (
    <table class="seats">
      <caption>Players</caption>
      <thead>
        <tr>
          <th scope="col">Player</th>
          <th scope="col">In hand</th>
          <th scope="col">Exit</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(players).map(([seat, p]) => (
          <tr key={seat} data-seat={seat}>
            <th scope="row">
              {seat} · {props.name(Number(seat))}
            </th>
            <td>{p.carrying === null ? "nothing" : `key ${p.carrying}`}</td>
            <td>{p.exit}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const BEARINGS: Record<string, string> = { N: "north", NE: "north-east", E: "east", SE: "south-east", S: "south", SW: "south-west", W: "west", NW: "north-west" };
const OBJECT_MARK: Record<string, string> = { key: "K", compass: "C", exit: "X", vision: "V" };

function Board(props: { view: View; known: Map<number, number>; seat: number }) {
  const { view, known } = props;
  const w = view.width;
  const h = view.height;
  const walls: string[] = [];
  for (const [index, flags] of known) {
    const x = index % w;
    const y = Math.floor(index / w);
    if (!(flags & 1)) walls.push(`M${x} ${y}h1`);
    if (!(flags & 2)) walls.push(`M${x + 1} ${y}v1`);
    if (!(flags & 4)) walls.push(`M${x} ${y + 1}h1`);
    if (!(flags & 8)) walls.push(`M${x} ${y}v1`);
  }
  const seen = [...known.keys()];
  const here = [...view.cells.keys()];
  const at = (cell: number) => ({ x: (cell % w) + 0.5, y: Math.floor(cell / w) + 0.5 });
  const positions: { seat: number; cell: number }[] = [];
  if (view.players) for (const [s, p] of Object.entries(view.players)) if (p.cell !== null) positions.push({ seat: Number(s), cell: p.cell });
  if (view.status.cell !== null && view.status.cell !== undefined) positions.push({ seat: props.seat, cell: view.status.cell });
  if (view.opponent?.cell !== null && view.opponent?.cell !== undefined) positions.push({ seat: 3 - props.seat, cell: view.opponent.cell });
  const label = `The maze, ${w} by ${h}: ${known.size} cells ${view.players ? "shown" : "seen"}; ${positions.map((p) => `player ${p.seat} at column ${(p.cell % w) + 1}, row ${Math.floor(p.cell / w) + 1}`).join("; ")}; ${view.objects.map((o) => describe(o, w)).join("; ") || "nothing else in sight"}`;
  return (
    <svg class="maze-board" viewBox={`-0.1 -0.1 ${w + 0.2} ${h + 0.2}`} role="img" aria-label={label}>
      <rect x={0} y={0} width={w} height={h} class="maze-fog" />
      {seen.map((c) => (
        <rect key={c} x={c % w} y={Math.floor(c / w)} width={1} height={1} class="maze-seen" />
      ))}
      {here.map((c) => (
        <rect key={`v${c}`} x={c % w} y={Math.floor(c / w)} width={1} height={1} class="maze-visible" />
      ))}
      <path d={walls.join("")} class="maze-wall" />
      {view.objects.map((o, i) => {
        const p = at(o[3]);
        return (
          <g key={i} class={`maze-object object-${o[0]}`} data-kind={o[0]} data-owner={o[1] ?? ""} data-variant={o[2] ?? ""} data-cell={o[3]}>
            <rect x={p.x - 0.32} y={p.y - 0.32} width={0.64} height={0.64} rx={o[0] === "compass" ? 0.32 : 0.08} fill={OWNER_FILL[o[1] ?? 0]} />
            <text x={p.x} y={p.y + 0.17} text-anchor="middle" font-size={0.48} font-weight="700" fill="#fff">
              {OBJECT_MARK[o[0]] ?? "?"}
            </text>
          </g>
        );
      })}
      {positions.map((pos) => {
        const p = at(pos.cell);
        return (
          <g key={`p${pos.seat}`} class="maze-player" data-seat={pos.seat} data-cell={pos.cell}>
            <circle cx={p.x} cy={p.y} r={0.38} fill={OWNER_FILL[pos.seat]} stroke="#111" stroke-width={0.06} />
            <text x={p.x} y={p.y + 0.16} text-anchor="middle" font-size={0.44} font-weight="700" fill="#fff">
              {pos.seat}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function describe(o: MazeObject, w: number): string {
  const [kind, owner, variant, cell] = o;
  const where = `column ${(cell % w) + 1}, row ${Math.floor(cell / w) + 1}`;
  const whose = owner ? ` of player ${owner}` : "";
  return `${kind}${whose}${variant && kind === "exit" ? ` (opens ${BEARINGS[variant] ?? variant})` : ""} at ${where}`;
}

