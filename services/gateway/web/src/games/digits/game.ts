// A Digits game as its player sees it (docs/protocol.md, "Digits"): `digits_game`, the whole game
// after each event, and the event pushes themselves (a Focus answer, a combat with its full
// report). The socket attaches with `watch_match`, again on every new socket; the server's clocks
// run whether the page is open or not.
import type * as W from "../../gen/wire";
import { LiveMatch } from "../../shared/live";
import { WireError } from "../../shared/socket";
import { Store } from "../../shared/store";

// The pushes' types are generated from docs/asyncapi.yaml (the game's models): named here.
export type Digit = W.DigitsDigit;
export type Page = W.DigitsPage;
export type Army = W.DigitsArmy;
export type DigitsGame = W.DigitsGame;
export type Fighter = W.DigitsFighter;
export type ReportStep = W.DigitsReportStep;
export type Combat = W.DigitsCombatFought;

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

export class DigitsMatch extends LiveMatch {
  readonly game = new Store<DigitsGame | null>(null);
  readonly combats = new Store<Combat[]>([]);
  /** The last Focus or Training answer: right or not. */
  readonly answered = new Store<{ right: boolean; late: boolean } | null>(null);
  readonly offset = new Store<number>(0);

  protected subscribe(): (() => void)[] {
    return [
      this.on("digits_game", (game) => {
        this.game.set(game);
        this.offset.set(game.server_time_ms - Date.now());
      }),
      this.on("digits_combat_fought", (m) => this.combats.update((c) => [...c, m])),
      this.on("digits_focus_answered", (m) => this.answered.set({ right: m.right, late: m.late })),
      this.on("digits_training_answered", (m) => this.answered.set({ right: m.right, late: false })),
    ];
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
