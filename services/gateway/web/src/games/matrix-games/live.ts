// A Matrix Games match as this page sees it (docs/protocol.md, "Matrix Games"): a seat's
// `welcome`, its `state` observation each beat (matrix.player.v1), `order_accepted` and `final`;
// or, watching, the spectators' `state` frames (matrix.global.v1). The socket attaches with
// `watch_match` (a seat if the player holds one, else a spectator), again on every new socket;
// a seat then says it is there with `matrix_join`.
import type * as W from "../../gen/wire";
import { LiveMatch } from "../../shared/live";
import { WireError } from "../../shared/socket";
import { Store } from "../../shared/store";

// The pushes' types are generated from docs/asyncapi.yaml (the game's models): named here.
export type SeatCog = W.MatrixGamesSeatCog;
export type Observation = W.MatrixGamesObservation;
export type SpectatorSeat = W.MatrixGamesSpectatorSeat;
export type GlobalFrame = W.MatrixGamesGlobalFrame;
export type Final = W.Final;

export interface Order {
  intent: "gather" | "deny" | "hunt" | "avoid" | "hold";
  token?: string;
  target?: string;
  say?: string;
}

export class MatrixMatch extends LiveMatch {
  readonly observation = new Store<Observation | null>(null);
  readonly frame = new Store<GlobalFrame | null>(null);
  readonly final = new Store<Final | null>(null);
  /** The beat this seat's order was accepted for, and the order. */
  readonly ordered = new Store<{ beat: number; order: W.OrderAccepted } | null>(null);
  readonly seated = new Store<boolean | null>(null);

  protected subscribe(): (() => void)[] {
    return [
      this.on("state", (m) => {
        if (m.protocol === "matrix.global.v1") this.frame.set(m);
        else this.observation.set(m);
      }),
      this.on("final", (m) => this.final.set(m)),
      this.on("order_accepted", (m) => this.ordered.set({ beat: m.beat, order: m })),
    ];
  }

  protected override async attached(watched: W.WatchMatchAck): Promise<void> {
    this.seated.set(watched.seat);
    if (watched.seat) await this.socket.request("matrix_join", {}).catch(ignore("already_joined", "episode_over"));
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
