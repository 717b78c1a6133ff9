// A Matrix Games match as this page sees it (docs/protocol.md, "Matrix Games"): a seat's
// `welcome`, its `state` observation each beat (matrix.player.v1), `order_accepted` and `final`;
// or, watching, the spectators' `state` frames (matrix.global.v1). The socket attaches with
// `watch_match` (a seat if the player holds one, else a spectator), again on every new socket;
// a seat then says it is there with `matrix_join`.
import type { Socket } from "../../shared/socket";
import { WireError } from "../../shared/socket";
import { Store } from "../../shared/store";

export interface SeatCog {
  alias: string;
  camp: string;
  x: number;
  y: number;
  dist: number;
  seenTicksAgo: number;
  scoreCp: number;
  interactions: number;
  frozen: boolean;
  eligible: boolean;
  inv: number[] | null;
}

export interface Observation {
  type: "state";
  protocol: "matrix.player.v1";
  slot: number;
  name: string;
  camp: string;
  variant: string;
  beat: number;
  beats: number;
  ticksPerBeat: number;
  tick: number;
  board: { w: number; h: number; walls: string[] };
  rules: { K: number; tokens: string[]; rowPay: number[][]; colPay: number[][]; viewRadius: number; crossCampOnly: boolean };
  you: { x: number; y: number; facing: number; inv: number[]; mix: number[]; scoreCp: number; freeze: number; beamCd: number; interactions: number };
  visibleTokens: { x: number; y: number; token: string }[];
  cogs: SeatCog[];
  log: { beat: number; tick: number; row: string; col: string; cell: string[]; rowCp: number; colCp: number }[];
  legal: { tokens: string[]; targets: string[] };
  match_id: string;
  deadline_ms: number | null;
  server_time_ms: number;
}

export interface SpectatorSeat {
  s: number;
  alias: string;
  name: string;
  livery: string;
  camp: string;
  kind: string;
  x: number;
  y: number;
  facing: number;
  inv: number[];
  scoreCp: number;
  interactions: number;
  frozen: boolean;
  say: string;
  connected: boolean;
}

export interface GlobalFrame {
  type: "state";
  protocol: "matrix.global.v1";
  t: number;
  mt: number;
  seats: SpectatorSeat[];
  events: { k: string; t: number; seat?: number; row?: number; col?: number; rowCp?: number; colCp?: number; reason?: string; beat?: number }[];
  beat: number;
  beats_played: number;
  variant: string;
  teams: Record<string, { share: number; tokensLeft: number; cells: number }>;
  done: boolean;
  reason: string;
  ending: string;
  match_id: string;
}

export interface Final {
  type: "final";
  scores: number[];
  names: string[];
  reason: string;
  ending: string;
  result: { win: boolean[]; tokens: string[] };
  match_id: string;
}

export interface Order {
  intent: "gather" | "deny" | "hunt" | "avoid" | "hold";
  token?: string;
  target?: string;
  say?: string;
}

export class MatrixMatch {
  readonly observation = new Store<Observation | null>(null);
  readonly frame = new Store<GlobalFrame | null>(null);
  readonly final = new Store<Final | null>(null);
  /** The beat this seat's order was accepted for, and the order. */
  readonly ordered = new Store<{ beat: number; order: Record<string, unknown> } | null>(null);
  readonly seated = new Store<boolean | null>(null);
  readonly error = new Store<string>("");
  private off: (() => void)[] = [];

  constructor(
    private socket: Socket,
    readonly matchId: string,
  ) {}

  start(): void {
    const s = this.socket;
    const mine = (m: Record<string, unknown>) => m["match_id"] === this.matchId;
    this.off = [
      s.onGame("state", (m) => {
        if (!mine(m)) return;
        if (m["protocol"] === "matrix.global.v1") this.frame.set(m as unknown as GlobalFrame);
        else this.observation.set(m as unknown as Observation);
      }),
      s.onGame("final", (m) => mine(m) && this.final.set(m as unknown as Final)),
      s.onGame("order_accepted", (m) => mine(m) && this.ordered.set({ beat: Number(m["beat"]), order: m })),
      s.onOpen(() => void this.attach()),
    ];
  }

  stop(): void {
    for (const off of this.off) off();
  }

  private async attach(): Promise<void> {
    try {
      const answer = await this.socket.request("watch_match", { match_id: this.matchId });
      const seated = (answer as { seat?: unknown })["seat"] === true;
      this.seated.set(seated);
      if (seated) await this.socket.request("matrix_join", {}).catch(ignore("already_joined", "episode_over"));
    } catch (error) {
      this.error.set(error instanceof WireError ? `${error.message} (${error.code})` : String(error));
    }
  }

  async order(order: Order): Promise<boolean> {
    const beat = this.observation.value?.beat;
    if (beat === undefined) return false;
    this.error.set("");
    try {
      await this.socket.request("matrix_order", { beat, ...order });
      return true;
    } catch (error) {
      this.error.set(error instanceof WireError ? (ORDER_ERRORS[error.code] ?? `${error.message} (${error.code})`) : String(error));
      return false;
    }
  }
}

function ignore(...codes: string[]) {
  return (error: unknown) => {
    if (!(error instanceof WireError) || !codes.includes(error.code)) throw error;
    return {};
  };
}

const ORDER_ERRORS: Record<string, string> = {
  beat_not_open: "Orders are not open yet: every player's seat must join first.",
  past_beat: "That beat has been played.",
  deadline_passed: "Too late for this beat.",
  unknown_target: "No such cog.",
  invalid_target: "Choose another cog.",
  episode_over: "The episode is over.",
};
