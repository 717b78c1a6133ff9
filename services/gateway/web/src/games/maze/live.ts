// A Maze match as this page sees it (docs/protocol.md, "The Maze"): `maze_match` (who, the
// settings, the clocks), the view records put back together, a refusal of its own move. The
// socket attaches with `watch_match` (a player's seat, or an observer), again on every new socket.
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
        this.known.set(remember(this.known.value, view));
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
