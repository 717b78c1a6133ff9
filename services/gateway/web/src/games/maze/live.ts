// A Maze match as this page sees it (docs/protocol.md, "The Maze"): `maze_match` (who, the
// settings, the clocks), the view records put back together, a refusal of its own move. The
// socket attaches with `watch_match` (a player's seat, or an observer), again on every new socket.
// A player's map as revealed is kept in the tab's sessionStorage: the snapshot after a reload
// holds the current view only, and the cells seen before would be lost from the drawing.
import type * as W from "../../gen/wire";
import { LiveMatch } from "../../shared/live";
import { WireError } from "../../shared/socket";
import { Store } from "../../shared/store";
import { Assembler, type Direction, type View, remember } from "./view";

/** `maze_match`: who plays, the settings, the clocks (generated from docs/asyncapi.yaml). */
export type MazeMatchInfo = W.MazeMatch;

const REFUSALS: Record<string, string> = {
  wall: "A wall is in the way.",
  cooldown: "Too soon after your last move.",
  countdown: "Wait for the countdown.",
  finished: "The game is over.",
  nothing_to_drop: "You carry no key.",
  out_of_order: "That move came too late.",
};

/** One match's map per tab: a player is in one Maze match at a time, so a newer one replaces it. */
const SEEN = "arena.maze.seen";

interface Seen {
  match: string;
  role: string;
  cells: [number, number][];
}

function recall(match: string, role: string): Map<number, number> {
  try {
    const seen = JSON.parse(sessionStorage.getItem(SEEN) ?? "null") as Seen | null;
    if (seen?.match === match && seen.role === role) return new Map(seen.cells);
  } catch {
    // unreadable or blocked storage: the map starts from this view
  }
  return new Map();
}

function keep(match: string, role: string, cells: Map<number, number>): void {
  try {
    sessionStorage.setItem(SEEN, JSON.stringify({ match, role, cells: [...cells] } satisfies Seen));
  } catch {
    // storage full or blocked: the map lives for this page only
  }
}

/** The game is over or left: nothing to draw again. */
export function forgetSeen(): void {
  try {
    sessionStorage.removeItem(SEEN);
  } catch {
    // blocked storage held nothing
  }
}

export class MazeMatch extends LiveMatch {
  readonly info = new Store<MazeMatchInfo | null>(null);
  readonly view = new Store<View | null>(null);
  /** Every cell this page has seen (a player's map as it is revealed). */
  readonly known = new Store<Map<number, number>>(new Map());
  readonly refused = new Store<string>("");
  readonly offset = new Store<number>(0);
  private assembler = new Assembler();

  protected subscribe(): (() => void)[] {
    return [
      this.on("maze_match", (info) => {
        this.info.set(info);
        this.offset.set(info.server_time_ms - Date.now());
        this.assembler = new Assembler(); // a snapshot follows: its view starts over
      }),
      // View records carry no match id: they are this match's once its maze_match came.
      this.socket.on("maze_view", (record) => {
        if (!this.info.value) return;
        const view = this.assembler.add(record);
        if (!view) return;
        this.view.set(view);
        // Observers see every cell: only a player's map is worth keeping.
        if (view.role === "observer") {
          this.known.set(view.cells);
          return;
        }
        // A page's first view may be a reload's snapshot: what this tab saw before comes back.
        const before = this.known.value.size ? this.known.value : recall(this.matchId, view.role);
        const known = remember(before, view);
        this.known.set(known);
        if (view.phase === "over") forgetSeen();
        else keep(this.matchId, view.role, known);
      }),
      this.on("maze_refused", (m) => this.refused.set(REFUSALS[m.code] ?? m.code)),
    ];
  }

  async move(dir: Direction): Promise<void> {
    this.refused.set("");
    await this.socket.request("maze_move", { dir }).catch((e: unknown) => this.refused.set(e instanceof WireError ? (REFUSALS[e.code] ?? e.message) : String(e)));
  }

  async drop(): Promise<void> {
    this.refused.set("");
    await this.socket.request("maze_drop", {}).catch((e: unknown) => this.refused.set(e instanceof WireError ? (REFUSALS[e.code] ?? e.message) : String(e)));
  }

  async resign(): Promise<void> {
    await this.socket.request("resign", {}).catch((e: unknown) => this.error.set(String(e)));
  }
}
