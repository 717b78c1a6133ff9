// A Maze match as this page sees it (docs/protocol.md, "The Maze"): `maze_match` (who, the
// settings, the clocks), the view records put back together, a refusal of its own move. The
// socket attaches with `watch_match` (a player's seat, or an observer), again on every new socket.
import type { Socket } from "../../shared/socket";
import { WireError } from "../../shared/socket";
import { Store } from "../../shared/store";
import { Assembler, type Direction, type View, type ViewRecord, remember } from "./view";

export interface MazeMatchInfo {
  match_id: string;
  role: string;
  seats: { seat: number; player_id: string; name: string; connected: boolean }[];
  settings: { width: number; height: number; cooldown_ms: number; time_limit_ms: number };
  countdown_end_ms: number;
  ends_at_ms: number | null;
  server_time_ms: number;
}

const REFUSALS: Record<string, string> = {
  wall: "A wall is in the way.",
  cooldown: "Too soon after your last move.",
  countdown: "Wait for the countdown.",
  finished: "The game is over.",
  nothing_to_drop: "You carry no key.",
  out_of_order: "That move came too late.",
};

export class MazeMatch {
  readonly info = new Store<MazeMatchInfo | null>(null);
  readonly view = new Store<View | null>(null);
  /** Every cell this page has seen (a player's map as it is revealed). */
  readonly known = new Store<Map<number, number>>(new Map());
  readonly refused = new Store<string>("");
  readonly offset = new Store<number>(0);
  readonly error = new Store<string>("");
  private assembler = new Assembler();
  private off: (() => void)[] = [];

  constructor(
    private socket: Socket,
    readonly matchId: string,
  ) {}

  start(): void {
    const s = this.socket;
    const mine = (m: Record<string, unknown>) => m["match_id"] === undefined || m["match_id"] === this.matchId;
    this.off = [
      s.onGame("maze_match", (m) => {
        if (m["match_id"] !== this.matchId) return;
        const info = m as unknown as MazeMatchInfo;
        this.info.set(info);
        this.offset.set(info.server_time_ms - Date.now());
        this.assembler = new Assembler(); // a snapshot follows: its view starts over
      }),
      s.onGame("maze_view", (m) => {
        if (!this.info.value || !mine(m)) return;
        const view = this.assembler.add(m as unknown as ViewRecord);
        if (!view) return;
        this.view.set(view);
        this.known.set(remember(this.known.value, view));
      }),
      s.onGame("maze_refused", (m) => {
        if (m["match_id"] !== this.matchId) return;
        this.refused.set(REFUSALS[String(m["code"])] ?? String(m["code"]));
      }),
      s.onOpen(() => void this.attach()),
    ];
  }

  stop(): void {
    for (const off of this.off) off();
  }

  private async attach(): Promise<void> {
    try {
      await this.socket.request("watch_match", { match_id: this.matchId });
    } catch (error) {
      this.error.set(error instanceof WireError ? `${error.message} (${error.code})` : String(error));
    }
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
