// The yard of Matrix Games drawn in SVG, one unit a cell: walls, the spawners holding a token,
// the eight cogs and the beams fired. The replay, a seat's view and the spectator's all draw it.
// Colour is never the only signal: each token type has its own shape, each cog its initial and a
// notch where it faces, a frozen cog a dashed ring. Colours are SVG attributes, not inline styles,
// which the page's Content-Security-Policy forbids.

/** The eight liveries' colours (the reference's LiveryHex, slot order), by livery name. */
export const LIVERY: Record<string, string> = {
  cobalt: "#3f7cc4",
  sky: "#6fb3e8",
  moss: "#45a85e",
  lime: "#8fd26a",
  rust: "#e0523a",
  ember: "#f08a4b",
  brass: "#ddc531",
  plum: "#b06fd0",
};
export const LIVERIES = Object.keys(LIVERY);
export const ALIASES = ["Ash", "Birch", "Cedar", "Dune", "Elm", "Fern", "Gorse", "Holly"];
/** The reference's chrome colours of token types 0, 1, 2 (red, blue, green). */
const TOKEN_FILL = ["#d64545", "#3f6fd6", "#2e9e4f"];
export const TOKEN_SHAPE = ["●", "■", "▲"];
const DX = [0, 1, 0, -1];
const DY = [-1, 0, 1, 0];
export const DIRECTIONS = ["north", "east", "south", "west"];

export interface Cog {
  slot: number;
  x: number;
  y: number;
  facing: number;
  frozen: boolean;
  livery: string;
  /** The viewer's own cog (a seat's view): drawn with a ring. */
  own?: boolean;
  /** Where a seat last saw this cog, not where it is now: drawn faded. */
  remembered?: boolean;
}

export interface Token {
  x: number;
  y: number;
  token: number;
}

export interface Beam {
  x: number;
  y: number;
  dir: number;
  len: number;
  hit: boolean;
  slot: number;
}

export function tokenMark(token: number): string {
  return TOKEN_SHAPE[token] ?? "◆";
}

function TokenShape(props: Token) {
  const { x, y, token } = props;
  const fill = TOKEN_FILL[token] ?? "#888";
  const cx = x + 0.5;
  const cy = y + 0.5;
  if (token === 1) return <rect x={cx - 0.2} y={cy - 0.2} width={0.4} height={0.4} fill={fill} />;
  if (token === 2) return <polygon points={`${cx},${cy - 0.25} ${cx + 0.24},${cy + 0.2} ${cx - 0.24},${cy + 0.2}`} fill={fill} />;
  return <circle cx={cx} cy={cy} r={0.2} fill={fill} />;
}

function CogShape(props: { cog: Cog; moving?: boolean }) {
  const { cog } = props;
  // Drawn at the origin and moved by a CSS transform, so a yard that animates (the spectator's,
  // two frames a beat) glides from frame to frame; CSSOM styles are allowed by the CSP.
  const cx = 0.5;
  const cy = 0.5;
  const colour = LIVERY[cog.livery] ?? "#3f7cc4";
  const facing = cog.facing >= 0;
  const nx = cx + (DX[cog.facing] ?? 0) * 0.42;
  const ny = cy + (DY[cog.facing] ?? 0) * 0.42;
  return (
    <g
      class={`cog${cog.frozen ? " frozen" : ""}${cog.remembered ? " remembered" : ""}`}
      data-slot={cog.slot}
      data-x={cog.x}
      data-y={cog.y}
      style={{ transform: `translate(${cog.x}px, ${cog.y}px)` }}
    >
      {cog.own && <circle cx={cx} cy={cy} r={0.5} fill="none" stroke="currentColor" stroke-width={0.08} />}
      <circle cx={cx} cy={cy} r={0.38} fill={colour} stroke="#111" stroke-width={0.05} />
      {facing && <circle cx={nx} cy={ny} r={0.1} fill="#111" />}
      {cog.frozen && <circle cx={cx} cy={cy} r={0.46} fill="none" stroke="#7fd3ff" stroke-width={0.07} stroke-dasharray="0.15 0.1" />}
      <text x={cx} y={cy + 0.14} text-anchor="middle" font-size={0.4} font-weight="700" fill="#111">
        {(ALIASES[cog.slot] ?? "?")[0]}
      </text>
    </g>
  );
}

function BeamShape(props: { beam: Beam }) {
  const { beam } = props;
  const x1 = beam.x + 0.5;
  const y1 = beam.y + 0.5;
  const x2 = x1 + (DX[beam.dir] ?? 0) * beam.len;
  const y2 = y1 + (DY[beam.dir] ?? 0) * beam.len;
  const colour = LIVERY[LIVERIES[beam.slot] ?? ""] ?? "#fff";
  return (
    <line
      class={`beam${beam.hit ? " hit" : ""}`}
      x1={x1}
      y1={y1}
      x2={x2}
      y2={y2}
      stroke={colour}
      stroke-width={beam.hit ? 0.22 : 0.12}
      stroke-dasharray={beam.hit ? undefined : "0.3 0.15"}
      stroke-linecap="round"
    />
  );
}

/** Wall runs per row, so a 24 × 14 yard is a few dozen rectangles, not hundreds. */
function wallRuns(walls: string[]): { x: number; y: number; w: number }[] {
  const runs: { x: number; y: number; w: number }[] = [];
  walls.forEach((row, y) => {
    let start = -1;
    for (let x = 0; x <= row.length; x++) {
      const wall = row[x] === "#";
      if (wall && start < 0) start = x;
      if (!wall && start >= 0) {
        runs.push({ x: start, y, w: x - start });
        start = -1;
      }
    }
  });
  return runs;
}

const runsCache = new WeakMap<string[], { x: number; y: number; w: number }[]>();

export function Yard(props: {
  walls: string[];
  tokens: Token[];
  cogs: Cog[];
  beams?: Beam[];
  /** A seat's sight: the square around its cog it sees; the rest is shaded. */
  sight?: { x: number; y: number; radius: number };
  label: string;
  /** Cogs glide from one position to the next (frames far apart in time). */
  animated?: boolean;
}) {
  const h = props.walls.length;
  const w = props.walls[0]?.length ?? 0;
  let runs = runsCache.get(props.walls);
  if (!runs) runsCache.set(props.walls, (runs = wallRuns(props.walls)));
  const s = props.sight;
  return (
    <svg class={`yard${props.animated ? " animated" : ""}`} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={props.label} preserveAspectRatio="xMidYMid meet">
      <rect x={0} y={0} width={w} height={h} class="yard-floor" />
      {runs.map((r) => (
        <rect key={`${r.x},${r.y}`} x={r.x} y={r.y} width={r.w} height={1} class="yard-wall" />
      ))}
      {props.tokens.map((t) => (
        <TokenShape key={`${t.x},${t.y}`} {...t} />
      ))}
      {s && (
        <path
          class="yard-fog"
          fill-rule="evenodd"
          d={`M0 0H${w}V${h}H0Z M${Math.max(0, s.x - s.radius)} ${Math.max(0, s.y - s.radius)}H${Math.min(w, s.x + s.radius + 1)}V${Math.min(h, s.y + s.radius + 1)}H${Math.max(0, s.x - s.radius)}Z`}
        />
      )}
      {(props.beams ?? []).map((b, i) => (
        <BeamShape key={i} beam={b} />
      ))}
      {props.cogs.map((c) => (
        <CogShape key={c.slot} cog={c} />
      ))}
    </svg>
  );
}

/** A cog's colour swatch for tables and legends (an SVG, since inline styles are forbidden). */
export function Swatch(props: { livery: string }) {
  return (
    <svg class="swatch" viewBox="0 0 1 1" aria-hidden="true">
      <circle cx={0.5} cy={0.5} r={0.45} fill={LIVERY[props.livery] ?? "#888"} stroke="#111" stroke-width={0.08} />
    </svg>
  );
}

/** A token type for legends: its shape and colour. */
export function TokenIcon(props: { token: number }) {
  return (
    <svg class="swatch" viewBox="0 0 1 1" aria-hidden="true">
      <TokenShape x={0} y={0} token={props.token} />
    </svg>
  );
}

export function points(cp: number): string {
  return (cp / 100).toFixed(2);
}
