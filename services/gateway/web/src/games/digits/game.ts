// A Digits game as its player sees it (docs/protocol.md, "Digits"): `digits_game`, the whole game
// after each event, and the event pushes themselves (a Focus answer, a combat with its full
// report). The socket attaches with `watch_match`, again on every new socket; the server's clocks
// run whether the page is open or not.
import type * as W from "../../gen/wire";
import type { Socket } from "../../shared/socket";
import { WireError } from "../../shared/socket";
import { Store } from "../../shared/store";

export interface Digit {
  kind: string;
  name: string;
  level: number;
  tier: number;
  atk: number;
  hp: number;
  reach: boolean;
  support: boolean;
  effect: string;
  price?: number;
}

export interface Page {
  text: string;
  stage: number;
  deadline_ms: number;
}

export interface Army {
  slate: (Digit | null)[];
  shown_as: string;
  house: boolean;
  tutorial: boolean;
  record: { round: number; wins: number; losses: number };
  rating: number | null;
}

export interface DigitsGame {
  type: "digits_game";
  match_id: string;
  mode: string;
  phase: "focus" | "shop" | "army" | "faceoff" | "waiting" | "over";
  status: string;
  over: boolean;
  round: number;
  last_round: number;
  record: { wins: number; losses: number; draws: number; margin: number; focus_right: number };
  voided: boolean;
  slate: (Digit | null)[];
  shop_deadline_ms: number | null;
  server_time_ms: number;
  focus?: { questions: number; index: number; right: number; started: boolean; page: Page | null; button: "start" | "continue" };
  shop?: {
    gold: number;
    right: number;
    offers: (Digit | null)[];
    bright: Digit | null;
    reroll_cost: number;
    rerolls: number;
    training_used: boolean;
    training: (Page & { cell: number }) | null;
  };
  faceoff?: {
    saved: (Digit | null)[];
    army: Army | null;
    arrangement: number;
    arrangements: number;
    deadline_ms: number | null;
    predict: boolean;
    predicted: { arrangement: number; result: string; margin: number; exchanges: number } | null;
  };
}

export interface Fighter {
  kind: string;
  level: number;
  atk: number;
  hp: number;
  shield: number;
}

export interface ReportStep {
  type: "start" | "opening" | "exchange" | "end";
  step?: string;
  n?: number;
  sides?: [(Fighter | null)[], (Fighter | null)[]];
  hits?: { from: [number, number]; to: [number, number]; hit: number; damage: number; ignored: boolean; shield: number }[];
  effects?: { by: [number, number]; to: [number, number]; atk?: number; hp?: number }[];
  falls?: [number, number][];
  result?: string;
  end?: string;
  hp?: [number, number];
}

export interface Combat {
  round: number;
  arrangement: number;
  result: string;
  margin: number;
  exchanges: number;
  report: { result: string; margin: number; exchanges: number; hp: [number, number]; end: string; report: ReportStep[] };
}

const REFUSALS: Record<string, string> = {
  not_enough_gold: "Not enough gold.",
  slate_full: "Your slate is full: sell a digit first.",
  cell_taken: "That cell is taken.",
  cell_empty: "That cell is empty.",
  offer_taken: "That offer is gone.",
  training_used: "Training is used up this round.",
  max_level: "That digit is at its highest level.",
  shop_over: "The shop is closed.",
  army_coming: "The opposing army is on its way.",
  faceoff_over: "The Face-off is over.",
  game_over: "The game is over.",
  predict_tutorial_only: "Predict is for the tutorial.",
};

type DigitsType = Extract<W.ClientType, `digits_${string}`>;
type Fields<T extends W.ClientType> = Omit<Extract<W.ClientMessage, { type: T }>, "id" | "type">;

export class DigitsMatch {
  readonly game = new Store<DigitsGame | null>(null);
  readonly combats = new Store<Combat[]>([]);
  /** The last Focus or Training answer: right or not. */
  readonly answered = new Store<{ right: boolean; late: boolean } | null>(null);
  readonly offset = new Store<number>(0);
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
      s.onGame("digits_game", (m) => {
        if (!mine(m)) return;
        const game = m as unknown as DigitsGame;
        this.game.set(game);
        this.offset.set(game.server_time_ms - Date.now());
      }),
      s.onGame("digits_combat_fought", (m) => mine(m) && this.combats.update((c) => [...c, m as unknown as Combat])),
      s.onGame("digits_focus_answered", (m) => mine(m) && this.answered.set({ right: m["right"] === true, late: m["late"] === true })),
      s.onGame("digits_training_answered", (m) => mine(m) && this.answered.set({ right: m["right"] === true, late: false })),
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

  async send<T extends DigitsType>(type: T, ...fields: {} extends Fields<T> ? [Fields<T>?] : [Fields<T>]): Promise<boolean> {
    this.error.set("");
    try {
      await this.socket.request(type, (fields[0] ?? {}) as never);
      return true;
    } catch (error) {
      this.error.set(error instanceof WireError ? (REFUSALS[error.code] ?? `${error.message} (${error.code})`) : String(error));
      return false;
    }
  }
}
